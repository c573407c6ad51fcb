// A sliced read's bodies as one array: the pieces the raw read sends unjoined (itemPieces)
// must be byte for byte the joined body the other reads answer (joinItems), for JSON and
// msgpack, with empty slices and any count of attributes (fixarray, array16, array32 headers).
import t from 'tap';
import fc from 'fast-check';
import { itemPieces, joinItems } from '../../src/http/routes/reads/split-tasks.js';
import type { ReadBody } from '../../src/workers/read-pool.js';

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

const bodyOf = (bytes: Uint8Array, released: number[], k: number): ReadBody => ({
  bytes, contentType: 'application/octet-stream', points: 0, release: () => { released[k]++; },
});

t.test('itemPieces joined equals joinItems on random slice bodies', async (t) => {
  const slices = fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 8 });
  const count = fc.oneof(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 16, max: 70_000 }), fc.constant(2 ** 31));
  await fc.assert(fc.asyncProperty(slices, count, fc.constantFrom('json' as const, 'msgpack' as const), async (bytes, n, format) => {
    const released = bytes.map(() => 0);
    const pieces = Buffer.concat(itemPieces(bytes.map((b, k) => bodyOf(b, released, k)), format, n));
    const joined = Buffer.from(await joinItems(bytes.map((b, k) => bodyOf(b, released, k)), format, n));
    if (!pieces.equals(joined)) throw new Error(`${format} x ${n}: ${pieces.toString('hex')} != ${joined.toString('hex')}`);
    if (released.some((r) => r !== 1)) throw new Error('joinItems hands each slab back once; itemPieces none');
  }), { seed: SEED, numRuns: 500 });
  t.pass('500 random reads');
});

t.test('the JSON pieces of two item lists and an empty slice are one array', async (t) => {
  const released = [0, 0, 0];
  const text = Buffer.concat(itemPieces([bodyOf(Buffer.from('{"a":1}'), released, 0), bodyOf(new Uint8Array(0), released, 1), bodyOf(Buffer.from('{"b":2},{"c":3}'), released, 2)], 'json', 3)).toString();
  t.equal(text, '[{"a":1},{"b":2},{"c":3}]');
  t.same(released, [0, 0, 0], 'the slabs stay lent until the pieces are sent');
});
