// Large response bodies (respond.ts streamLarge): sent in slices with backpressure, from
// a buffer that is lent and must be handed back once, only after its last byte is written.
// A route declared for this test answers with a patterned body of the requested size,
// like a read worker's slab, or with the same bytes cut into pieces (a sliced read's
// bodies, sent without joining them); the real server, a raw socket client over loopback.
import t from 'tap';
import fc from 'fast-check';
import { Type } from '@sinclair/typebox';
import { connect, type Socket } from 'node:net';
import { createHash } from 'node:crypto';
import { startTestService } from '../helpers/service.js';
import { defineRoute } from '../../src/http/route.js';

const released: number[] = [];
const pattern = (n: number): Uint8Array => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >>> 13)) & 0xff;
  return b;
};
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

const testRoutes = [
  defineRoute({
    operationId: 'testBigBody', method: 'get', path: '/v1/test/big', area: 'Test', summary: 'a large lent body',
    access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
    query: Type.Object({ bytes: Type.Integer({ minimum: 1 }), id: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    response: { status: 200, schema: Type.Unknown() }, errors: [],
    handler: async ({ query }) => {
      const id = query.id;
      released[id] = 0;
      return { kind: 'bytes', contentType: 'application/octet-stream', bytes: pattern(query.bytes), release: () => { released[id]++; } };
    },
  }),
  defineRoute({
    operationId: 'testBigPieces', method: 'get', path: '/v1/test/pieces', area: 'Test', summary: 'a large lent body in pieces',
    access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
    // cuts: comma-separated piece lengths; the pieces are consecutive runs of pattern(sum)
    query: Type.Object({ cuts: Type.String(), id: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    response: { status: 200, schema: Type.Unknown() }, errors: [],
    handler: async ({ query }) => {
      const id = query.id;
      released[id] = 0;
      const lengths = query.cuts.split(',').map(Number);
      const whole = pattern(lengths.reduce((a, b) => a + b, 0));
      const pieces: Uint8Array[] = [];
      let at = 0;
      for (const n of lengths) { pieces.push(whole.slice(at, at + n)); at += n; }
      return { kind: 'bytes', contentType: 'application/octet-stream', bytes: pieces, release: () => { released[id]++; } };
    },
  }),
];

const SEED = 20261128;
t.comment(`fast-check seed ${SEED}`);

interface Read { head: string; body: Buffer }

/** One GET over a raw socket; `pauseMs` stops reading right after the request is sent. */
function get(port: number, path: string, opts: { pauseMs?: number; abortAfter?: number } = {}): Promise<Read> & { socket: Socket } {
  const socket = connect({ host: '127.0.0.1', port });
  const done = new Promise<Read>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0, want = -1, headLen = -1;
    socket.on('data', (c: Buffer) => {
      parts.push(c);
      size += c.length;
      if (headLen < 0) {
        const all = Buffer.concat(parts);
        const end = all.indexOf('\r\n\r\n');
        if (end < 0) return;
        headLen = end + 4;
        want = headLen + Number(/content-length: *(\d+)/i.exec(all.subarray(0, end).toString('latin1'))?.[1] ?? NaN);
      }
      if (opts.abortAfter !== undefined && size - headLen >= opts.abortAfter) { socket.destroy(); resolve({ head: '', body: Buffer.alloc(0) }); return; }
      if (size >= want) {
        const all = Buffer.concat(parts);
        socket.destroy();
        resolve({ head: all.subarray(0, headLen).toString('latin1'), body: all.subarray(headLen, want) });
      }
    });
    socket.on('error', reject);
  });
  socket.write(`GET ${path} HTTP/1.1\r\nhost: test\r\n\r\n`);
  if (opts.pauseMs) { socket.pause(); setTimeout(() => socket.resume(), opts.pauseMs); }
  return Object.assign(done, { socket });
}

const until = async (ok: () => boolean, ms = 2000) => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end;) await new Promise((r) => setTimeout(r, 5));
};

t.test('large bodies', async (t) => {
  const svc = await startTestService(t, { extraRoutes: testRoutes });
  const port = Number(new URL(svc.url).port);

  t.test('a body many times the socket buffer reaches a slow reader whole and in order, and is handed back once after its last byte', async (t) => {
    const bytes = 48 * 2 ** 20 + 12345; // not a multiple of the slice size
    const reply = get(port, `/v1/test/big?bytes=${bytes}&id=1`, { pauseMs: 400 });
    await new Promise((r) => setTimeout(r, 250));
    t.equal(released[1], 0, 'not handed back while the reader has not taken the body');
    const r = await reply;
    t.match(r.head, /^HTTP\/1\.1 200/);
    t.match(r.head, new RegExp(`content-length: ${bytes}\\r\\n`, 'i'), 'one content length, the whole body');
    t.equal(r.body.length, bytes);
    t.equal(md5(r.body), md5(pattern(bytes)), 'byte for byte the lent body');
    await until(() => released[1] > 0);
    t.equal(released[1], 1, 'handed back exactly once');
  });

  t.test('several large bodies to fast readers at once all arrive intact', async (t) => {
    const sizes = [9 * 2 ** 20 + 1, 17 * 2 ** 20 + 7, 3 * 2 ** 20 - 5, 2 ** 20];
    const replies = await Promise.all(sizes.map((n, k) => get(port, `/v1/test/big?bytes=${n}&id=${10 + k}`)));
    for (let k = 0; k < sizes.length; k++) {
      t.equal(md5(replies[k].body), md5(pattern(sizes[k])), `body ${k} intact`);
    }
    await until(() => sizes.every((_, k) => released[10 + k] === 1));
    t.same(sizes.map((_, k) => released[10 + k]), sizes.map(() => 1), 'each handed back once');
  });

  t.test('a body in pieces (empty, tiny and many slices long, small and large in all) arrives as the pieces joined, and is handed back once', async (t) => {
    const piece = fc.oneof(fc.constantFrom(0, 1, 3), fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 250_000, max: 2 ** 21 }));
    let id = 100;
    await fc.assert(fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 12 }), async (cuts) => {
      const k = id++;
      const total = cuts.reduce((a, b) => a + b, 0);
      const r = await get(port, `/v1/test/pieces?cuts=${cuts.join(',')}&id=${k}`, { pauseMs: k % 3 === 0 ? 30 : 0 });
      if (!new RegExp(`content-length: ${total}\\r\\n`, 'i').test(r.head)) throw new Error(`content length of ${cuts}: ${r.head}`);
      if (r.body.length !== total || md5(r.body) !== md5(pattern(total))) throw new Error(`body of ${cuts} differs`);
      await until(() => released[k] > 0);
      if (released[k] !== 1) throw new Error(`pieces ${cuts} handed back ${released[k]} times`);
    }), { seed: SEED, numRuns: 25 });
    t.pass('25 random cuts, each body whole and in order');
  });

  t.test('a reader that leaves mid-body: the body is handed back once and the server keeps serving', async (t) => {
    const bytes = 32 * 2 ** 20;
    await get(port, `/v1/test/big?bytes=${bytes}&id=20`, { abortAfter: 3 * 2 ** 20 });
    await until(() => released[20] > 0);
    await new Promise((r) => setTimeout(r, 100)); // any pending continuation has run by now
    t.equal(released[20], 1, 'handed back once on the abort');
    const next = await get(port, `/v1/test/big?bytes=${5 * 2 ** 20}&id=21`);
    t.equal(md5(next.body), md5(pattern(5 * 2 ** 20)), 'the next large body is served whole');
  });
});
