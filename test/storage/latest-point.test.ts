// The latest point of a series without decoding its head or its last chunk (readSnapshot):
// the last point of the newest head segment read in place, the last point of a chunk from its
// header and quality section. Each is checked against a whole decode: any segment or chunk
// of every value type (property), and a store through appends, late points, seals and edits
// of the last point (readSnapshotAt at the end of time decodes the head or chunk whole).
import t from 'tap';
import fc from 'fast-check';
import { lastPointOfSegment, encodeRawSegment, encodeSegment } from '../../src/storage/head-segment.js';
import { lastPointOfChunk, decodeColumns } from '../../src/storage/chunk-access.js';
import { encodeChunk } from '../../src/storage/encoding/chunk.js';
import type { PointColumns, ValueType } from '../../src/storage/encoding/chunk-types.js';
import { seriesKey, INT64_MAX } from '../../src/storage/keys.js';
import { readSnapshot, readSnapshotAt, valueAt, type PointBatch, type SeriesStore } from '../../src/storage/series-store.js';
import { pointRunArb, timeAt, toColumns } from '../helpers/chunk-arbitraries.js';
import { tempStore, newId, WHO, f64Batch, T0, SEC } from '../helpers/series-store.js';

const SEED = Number(process.env.FC_SEED ?? 20261127);
t.comment(`fast-check seed ${SEED} (FC_SEED=<n> replays another)`);
const TYPES: ValueType[] = ['float64', 'int64', 'boolean', 'enum', 'string'];
const SERIES = seriesKey('0b7e3c1a-5d2f-4e8a-9c61-2f4d8e7a1b35');
const bitsOf = (x: unknown): unknown => (typeof x === 'number' ? new BigUint64Array(new Float64Array([x]).buffer)[0] : x);

function lastOf(c: PointColumns, from = 0, n = c.count): { ts: bigint; value: unknown; quality: number } {
  const i = from + n - 1;
  return { ts: timeAt(c, i), value: valueAt(c, i), quality: c.quality[i] };
}

function same(a: { ts: bigint; value: unknown; quality: number }, b: { ts: bigint; value: unknown; quality: number }): void {
  if (a.ts !== b.ts) throw new Error(`time ${a.ts} != ${b.ts}`);
  if (a.quality !== b.quality) throw new Error(`quality ${a.quality} != ${b.quality}`);
  if (bitsOf(a.value) !== bitsOf(b.value)) throw new Error(`value ${String(a.value)} != ${String(b.value)}`);
}

for (const type of TYPES) {
  t.test(`${type}: the last point of any segment and any chunk, without a whole decode, is the decoded one`, async (t) => {
    fc.assert(fc.property(pointRunArb(type), fc.nat(), (run, cut) => {
      const cols = toColumns(run);
      const from = cut % cols.count, n = cols.count - from;
      same(lastPointOfSegment(SERIES, encodeSegment(cols, from, n)), lastOf(cols, from, n));
      if (type !== 'string') same(lastPointOfSegment(SERIES, encodeRawSegment(cols, from, n)), lastOf(cols, from, n));
      const bytes = encodeChunk(cols);
      same(lastPointOfChunk(SERIES, null, bytes), lastOf(decodeColumns(SERIES, null, bytes)));
    }), { seed: SEED, numRuns: 200 });
    t.pass('same points');
  });
}

t.test('a damaged chunk is refused by the last-point read, never answered', async (t) => {
  const cols = toColumns(fc.sample(pointRunArb('float64'), { seed: SEED, numRuns: 1 })[0]);
  const bytes = Buffer.from(encodeChunk(cols));
  bytes[bytes.length - 6] ^= 0x10; // inside the quality section or the values: the trailing CRC catches it
  t.throws(() => lastPointOfChunk(SERIES, null, bytes), { code: 'chunk-corrupt' });
});

t.test('a store: the latest point after appends, late points, seals and edits of the last point', async (t) => {
  const { store } = await tempStore(t);
  const ids = { f: newId(), i: newId(), s: newId() };
  await store.createSeries({ id: ids.f, type: 'float64', writableClass: 'collector' });
  await store.createSeries({ id: ids.i, type: 'int64', writableClass: 'collector' });
  await store.createSeries({ id: ids.s, type: 'string', writableClass: 'collector' });
  const check = (what: string) => {
    for (const id of Object.values(ids)) {
      const fast = store.read((v) => readSnapshot(v, id));
      const whole = store.read((v) => readSnapshotAt(v, id, INT64_MAX));
      t.same(fast, whole, `${what}: ${id === ids.f ? 'float64' : id === ids.i ? 'int64' : 'string'}`);
    }
  };
  const write = (times: bigint[], f: number[], q?: number[]) => {
    const batches: PointBatch[] = [
      f64Batch(ids.f, times, f, q),
      { series: ids.i, times: BigInt64Array.from(times), values: BigInt64Array.from(f.map((x) => 2n ** 60n + BigInt(Math.round(x * 7)))), quality: Uint32Array.from(q ?? times.map(() => 192)) },
      { series: ids.s, times: BigInt64Array.from(times), values: f.map((x) => `s${x}`), quality: Uint32Array.from(q ?? times.map(() => 192)) },
    ];
    return store.write(batches, WHO);
  };
  t.same(store.read((v) => readSnapshot(v, ids.f)), null, 'no point yet');
  const n = 3000;
  const times = Array.from({ length: n }, (_, k) => T0 + BigInt(k) * SEC + BigInt(k % 7) * 1_000_000n);
  // several commits: several head segments
  for (let a = 0; a < n; a += 700) await write(times.slice(a, a + 700), times.slice(a, a + 700).map((_, k) => (a + k) / 10), times.slice(a, a + 700).map((_, k) => ((a + k) % 5 === 0 ? 64 : 192)));
  check('open head over several segments');
  await write([T0 + 1500n * SEC + 1n], [-0]);
  check('a late point inside the head');
  await write([T0 + 3000n * SEC], [1.234567891234]);
  check('a new last point (not decimal)');
  await write([T0 + 3000n * SEC], [77.5], [0]);
  check('the last point edited in the head (value and quality)');
  await sealAll(store);
  check('after the seal (last chunk)');
  await write([T0 + 3000n * SEC], [78.25], [200]);
  await sealAll(store);
  check('the last point edited after the seal');
  await write([T0 + 10n * SEC + 5n], [3.5]);
  check('a late point into a sealed chunk');
  await write([T0 + 4000n * SEC], [9]);
  check('a new point after the sealed ones');
});

async function sealAll(store: SeriesStore): Promise<void> {
  await store.sealHeads(0);
}
