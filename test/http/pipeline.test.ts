// The request pipeline itself, through routes declared only for this test (an echo and
// a slow handler), on the real server over real HTTP.
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { startTestService, request } from '../helpers/service.js';
import { defineRoute } from '../../src/http/route.js';
import { Int64 } from '../../src/http/schemas/common.js';

let slowRuns = 0;
const testRoutes = [
  defineRoute({
    operationId: 'testEcho', method: 'post', path: '/v1/test/echo', area: 'Test', summary: 'echo',
    access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
    body: Type.Object({ ts_ns: Int64(), note: Type.Optional(Type.String()), nested: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
    response: { status: 200, schema: Type.Unknown() }, errors: [], idempotency: 'optional',
    handler: async ({ body }) => ({ body: { ts_ns: BigInt(body.ts_ns), next_ns: BigInt(body.ts_ns) + 1n, note: body.note ?? null } }),
  }),
  defineRoute({
    operationId: 'testSlow', method: 'post', path: '/v1/test/slow', area: 'Test', summary: 'slow',
    access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
    body: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 5000 }) }, { additionalProperties: false }),
    response: { status: 201, schema: Type.Unknown() }, errors: [], idempotency: 'optional',
    handler: async ({ body }) => {
      slowRuns++;
      await new Promise((r) => setTimeout(r, body.ms));
      return { status: 201, body: { run: slowRuns } };
    },
  }),
  defineRoute({
    operationId: 'testDiskFull', method: 'post', path: '/v1/test/disk-full', area: 'Test', summary: 'a database error of a full disk',
    access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
    body: Type.Object({ pg_code: Type.Boolean() }, { additionalProperties: false }),
    response: { status: 200, schema: Type.Unknown() }, errors: [503],
    handler: async ({ body }) => {
      // what pg raises (SQLSTATE 53100) and what PGlite raises (the message only) when the model's disk is full
      const e = body.pg_code ? Object.assign(new Error('disk full'), { code: '53100' }) : new Error('could not extend file "base/5/16384": No space left on device');
      throw e;
    },
  }),
];

t.test('the pipeline', async (t) => {
  const svc = await startTestService(t, { extraRoutes: testRoutes, env: { SERVICE_BODY_LIMIT: '4096' } });
  const echo = `${svc.url}/v1/test/echo`;

  t.test('an int64 nanosecond time survives the round trip exactly', async (t) => {
    const r = await request(echo, { method: 'POST', rawBody: '{"ts_ns":1700000000123456789}', headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 200);
    t.match(r.text, /"ts_ns":1700000000123456789,"next_ns":1700000000123456790/);
    t.equal((r.json as { ts_ns: bigint }).ts_ns, 1700000000123456789n);
  });

  t.test('a full disk under the model database is 503 storage-full, not 500', async (t) => {
    for (const pg_code of [true, false]) {
      const r = await request(`${svc.url}/v1/test/disk-full`, { method: 'POST', body: { pg_code } });
      t.equal(r.status, 503);
      t.match(r.json, { code: 'storage-full', error: /out of disk space/ });
    }
  });

  t.test('int64 extremes pass and values beyond int64 are refused', async (t) => {
    const max = await request(echo, { method: 'POST', rawBody: '{"ts_ns":9223372036854775806}', headers: { 'content-type': 'application/json' } });
    t.match(max.text, /"next_ns":9223372036854775807/);
    const over = await request(echo, { method: 'POST', rawBody: '{"ts_ns":9223372036854775808}', headers: { 'content-type': 'application/json' } });
    t.equal(over.status, 400);
    t.equal((over.json as { code: string }).code, 'invalid-request');
  });

  t.test('malformed bodies are 400 invalid-json', async (t) => {
    const cases: Array<[string, string | Uint8Array]> = [
      ['truncated JSON', '{"ts_ns":1'],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x6e, 0x6f, 0x74, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
      ['a __proto__ key', '{"ts_ns":1,"nested":{"__proto__":{"admin":true}}}'],
      ['a constructor key', '{"ts_ns":1,"nested":{"constructor":{"prototype":1}}}'],
      ['nesting beyond the bound', `{"ts_ns":1,"nested":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ];
    for (const [what, body] of cases) {
      const r = await request(echo, { method: 'POST', rawBody: body, headers: { 'content-type': 'application/json' } });
      // the deep one is also over the 4 KiB limit: either refusal is right, neither may recurse
      t.ok(r.status === 400 || r.status === 413, `${what} is refused (${r.status})`);
      t.ok(['invalid-json', 'body-too-large'].includes((r.json as { code: string }).code), `${what} has the right code`);
    }
    const deep = `{"ts_ns":1,"nested":${'['.repeat(100)}${']'.repeat(100)}}`;
    const r = await request(echo, { method: 'POST', rawBody: deep, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400);
    t.equal((r.json as { code: string }).code, 'invalid-json', 'nesting deeper than 64 is invalid-json');
  });

  t.test('an unknown body field is refused and named', async (t) => {
    const r = await request(echo, { method: 'POST', body: { ts_ns: 1, extra: true } });
    t.equal(r.status, 400);
    t.match(r.text, /extra/);
  });

  t.test('a body that is not JSON is 415', async (t) => {
    const r = await request(echo, { method: 'POST', rawBody: 'ts_ns=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(r.status, 415);
    t.equal((r.json as { code: string }).code, 'unsupported-media-type');
  });

  t.test('an oversize body is 413 from Content-Length, and the next request works', async (t) => {
    const r = await request(echo, { method: 'POST', rawBody: `{"ts_ns":1,"note":"${'x'.repeat(5000)}"}`, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 413);
    t.equal((r.json as { code: string }).code, 'body-too-large');
    const ok = await request(echo, { method: 'POST', body: { ts_ns: 2 } });
    t.equal(ok.status, 200);
  });

  t.test('an oversize chunked body is 413 while reading', async (t) => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(echo, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"ts_ns":1,"note":"');
      const chunk = 'y'.repeat(1024);
      let sent = 0;
      const pump = () => {
        while (sent < 16) { sent++; if (!req.write(chunk)) { req.once('drain', pump); return; } }
        req.end('"}');
      };
      pump();
    });
    t.equal(status, 413);
    const ok = await request(echo, { method: 'POST', body: { ts_ns: 3 } });
    t.equal(ok.status, 200, 'the server still answers');
  });

  t.test('an aborted request is never written to and the server keeps serving', async (t) => {
    const before = slowRuns;
    await new Promise<void>((resolve) => {
      const sock = connect(Number(new URL(svc.url).port), '127.0.0.1', () => {
        const body = '{"ms":200}';
        sock.write(`POST /v1/test/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        setTimeout(() => { sock.destroy(); resolve(); }, 50);
      });
    });
    // a half-sent body, then gone
    await new Promise<void>((resolve) => {
      const sock = connect(Number(new URL(svc.url).port), '127.0.0.1', () => {
        sock.write('POST /v1/test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ts_');
        setTimeout(() => { sock.destroy(); resolve(); }, 30);
      });
    });
    await new Promise((r) => setTimeout(r, 300));
    t.equal(slowRuns, before + 1, 'the slow handler ran once and finished without a client');
    const r = await request(`${svc.url}/v1/healthz`);
    t.equal(r.text, 'ok');
  });

  t.test('Idempotency-Key replays the first response', async (t) => {
    const headers = { 'idempotency-key': 'op-123' };
    const first = await request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 1 }, headers });
    t.equal(first.status, 201);
    t.equal(first.headers.get('x-service-idempotent-replay'), null);
    const again = await request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 1 }, headers });
    t.equal(again.status, 201);
    t.equal(again.headers.get('x-service-idempotent-replay'), 'true');
    t.same(again.json, first.json, 'the same body comes back');
    t.not(again.headers.get('x-correlation-id'), first.headers.get('x-correlation-id'), 'a fresh correlation id');
  });

  t.test('the same key with a different body is 409', async (t) => {
    const headers = { 'idempotency-key': 'op-456' };
    await request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 1 }, headers });
    const r = await request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 2 }, headers });
    t.equal(r.status, 409);
    t.equal((r.json as { code: string }).code, 'idempotency-conflict');
  });

  t.test('empty, oversize and non-visible-ASCII keys are 400', async (t) => {
    for (const key of ['', 'k'.repeat(256), 'has space', 'tab\there']) {
      const r = await fetch(`${svc.url}/v1/test/slow`, {
        method: 'POST', body: '{"ms":1}', headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      t.equal(r.status, 400, `key ${JSON.stringify(key.slice(0, 12))} (length ${key.length}) is refused`);
      t.equal(((await r.json()) as { code: string }).code, 'invalid-idempotency-key');
    }
    const at255 = await request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 1 }, headers: { 'idempotency-key': 'k'.repeat(255) } });
    t.equal(at255.status, 201, 'a key of 255 characters is accepted');
  });

  t.test('two concurrent requests with one key execute once', async (t) => {
    const before = slowRuns;
    const headers = { 'idempotency-key': 'concurrent-1' };
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 150 }, headers })));
    t.equal(slowRuns, before + 1, 'the handler ran once');
    t.same([a.status, b.status, c.status], [201, 201, 201]);
    t.same(a.json, b.json);
    t.same(b.json, c.json);
    t.equal([a, b, c].filter((r) => r.headers.get('x-service-idempotent-replay') === 'true').length, 2, 'two of three are replays');
  });
});

t.test('graceful shutdown finishes in-flight requests and refuses new ones', async (t) => {
  const svc = await startTestService(t, { extraRoutes: testRoutes });
  const before = slowRuns;
  const inflight = request(`${svc.url}/v1/test/slow`, { method: 'POST', body: { ms: 300 } });
  // stop once the handler runs, not after a fixed delay: on a loaded machine (CI with a load
  // of 6) 50 ms was not always enough for the request to arrive, and stop() refused it
  for (let waited = 0; slowRuns === before; waited += 5) {
    if (waited > 10_000) throw new Error('the slow request never reached its handler');
    await new Promise((r) => setTimeout(r, 5));
  }
  const stopping = svc.stop();
  const r = await inflight;
  t.equal(r.status, 201, 'the in-flight request completed');
  await stopping;
  await t.rejects(fetch(`${svc.url}/v1/healthz`), 'no longer accepting');
});
