// The collector's gRPC call over Node's HTTP/2 client against a plain HTTP/2 server that
// speaks the gRPC framing: messages split across DATA frames at any byte (a header too),
// several in one frame, a 2 MB one in 16 KB pieces, the status from trailers or from a
// trailers-only answer, and a refused connection as UNAVAILABLE.
import t, { type Test } from 'tap';
import http2 from 'node:http2';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { GrpcCall, GrpcStatus, type CallStatus } from '../../src/collector/grpc-call.js';

const framed = (m: Buffer) => { const f = Buffer.alloc(5 + m.length); f.writeUInt32BE(m.length, 1); m.copy(f, 5); return f; };

async function server(t: Test, onStream: (s: http2.ServerHttp2Stream, h: http2.IncomingHttpHeaders) => void): Promise<string> {
  const srv = http2.createServer();
  srv.on('stream', onStream);
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return `127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

function call(address: string): { c: GrpcCall; messages: Buffer[]; status: Promise<CallStatus> } {
  const c = new GrpcCall({ address, path: '/historian.collector.v1.CollectorIngest/Session', metadata: { authorization: 'Bearer x' }, maxReceiveBytes: 8 * 1024 * 1024 });
  const messages: Buffer[] = [];
  c.on('message', (m: Buffer) => messages.push(Buffer.from(m)));
  return { c, messages, status: new Promise((r) => c.once('status', r)) };
}

t.test('messages come whole, however the server cuts them into DATA frames', async (t) => {
  const big = Buffer.alloc(2 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 255;
  const small = [Buffer.from('a'), Buffer.alloc(0), Buffer.from('hello world'), Buffer.from([0, 1, 2, 3, 4, 5])];
  let seenHeaders: http2.IncomingHttpHeaders = {};
  const address = await server(t, (s, h) => {
    seenHeaders = h;
    s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    const bytes = Buffer.concat([...small.map(framed), framed(big), ...small.map(framed)]);
    // cuts at 1, 3 and 7 bytes (inside prefixes), then 16 KB pieces
    const cuts = [1, 3, 7, 12, 13];
    let at = 0;
    for (const c of cuts) { s.write(bytes.subarray(at, c)); at = c; }
    for (; at < bytes.length; at += 16_384) s.write(bytes.subarray(at, Math.min(bytes.length, at + 16_384)));
    s.end();
  });
  const { c, messages, status } = call(address);
  c.sendMessage(Buffer.from('open'));
  const st = await status;
  t.same(st, { code: GrpcStatus.OK, details: '' });
  t.equal(messages.length, small.length * 2 + 1);
  t.ok(messages[small.length].equals(big), 'the 2 MB message is whole and intact');
  t.same(messages.slice(0, small.length).map((m) => m.toString('hex')), small.map((m) => m.toString('hex')));
  t.same(messages.slice(small.length + 1).map((m) => m.toString('hex')), small.map((m) => m.toString('hex')));
  t.equal(seenHeaders['content-type'], 'application/grpc');
  t.equal(seenHeaders.te, 'trailers');
  t.equal(seenHeaders.authorization, 'Bearer x');
  c.end();
});

t.test('frames sent by the call carry the gRPC prefix; a trailers-only answer is the status', async (t) => {
  const received: Buffer[] = [];
  const address = await server(t, (s) => {
    s.on('data', (d: Buffer) => {
      received.push(d);
      if (Buffer.concat(received).length >= 5 + 3 + 5 + 2) s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'no%20token' }, { endStream: true });
    });
  });
  const { c, status } = call(address);
  c.sendMessage(Buffer.from('abc'));
  const f = c.frame(2);
  f[5] = 9; f[6] = 8;
  c.send(f, 2);
  t.same(await status, { code: GrpcStatus.UNAUTHENTICATED, details: 'no token' });
  t.same([...Buffer.concat(received)], [0, 0, 0, 0, 3, 97, 98, 99, 0, 0, 0, 0, 2, 9, 8]);
});

t.test('nobody listening: UNAVAILABLE', async (t) => {
  const address = await server(t, () => undefined);
  const port = Number(address.split(':')[1]);
  // a port just freed by a server of our own
  const free = http2.createServer().listen(0, '127.0.0.1');
  await once(free, 'listening');
  const freePort = (free.address() as AddressInfo).port;
  await new Promise<void>((r) => free.close(() => r()));
  t.not(freePort, port);
  const { status } = call(`127.0.0.1:${freePort}`);
  const st = await status;
  t.equal(st.code, GrpcStatus.UNAVAILABLE);
  t.match(st.details, /ECONNREFUSED/);
});
