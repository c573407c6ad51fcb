// Large response bodies (respond.ts streamLarge): sent in slices with backpressure, from
// a buffer that is lent and must be handed back once, only after its last byte is written.
// A route declared for this test answers with a patterned body of the requested size,
// like a read worker's slab; the real server, a raw socket client over loopback.
import t from 'tap';
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
];

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
