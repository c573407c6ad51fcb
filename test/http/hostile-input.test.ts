// Hostile input that once answered 500 or no answer at all (issue 25 §6, found by a fuzz of
// 4,510 requests over every operation): each case reproduced over real HTTP. Text the
// service refuses (src/text-policy.ts), int64 beyond range, oversize URLs, headers and
// bodies all get a 4xx that names the problem and reaches the client.
import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { execFile } from 'node:child_process';
import { startTestService, request, type HttpResult } from '../helpers/service.js';
import { MAX_URL_BYTES, MAX_HEADER_BYTES } from '../../src/http/request-limits.js';

/** curl with `input` on its stdin; resolves with its stdout, or "error ..." */
function curlWithStdin(args: string[], input: string): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile('curl', args, (err, stdout, stderr) => resolve(err ? `error ${stderr}` : stdout));
    child.stdin?.end(input);
  });
}
const BODY_LIMIT = 64 * 1024;

interface Problem { code: string; error: string; details?: { errors?: Array<{ field: string; problem: string }> } }
const problemOf = (r: HttpResult) => r.json as Problem;

/** Sends raw bytes on a fresh connection and returns what came back before the server closed or answered. */
function rawExchange(port: number, bytes: string, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(bytes));
    const done = () => { sock.destroy(); resolve(got); };
    sock.on('data', (d) => { got += d.toString('latin1'); if (/\r\n\r\n/.test(got)) setTimeout(done, 50); });
    sock.on('error', done);
    sock.on('close', done);
    setTimeout(done, waitMs);
  });
}

t.test('hostile input gets a 4xx naming the problem', async (t) => {
  const svc = await startTestService(t, { env: { SERVICE_BODY_LIMIT: String(BODY_LIMIT) } });
  const { url } = svc;
  const port = Number(new URL(url).port);
  const refused = (t: Test, r: HttpResult, field: string, what: RegExp) => {
    t.equal(r.status, 400, `400 for ${field}`);
    t.equal(problemOf(r).code, 'invalid-request');
    t.equal(problemOf(r).details?.errors?.[0]?.field, field, `names ${field}`);
    t.match(problemOf(r).error, what);
  };

  const asset = await request(`${url}/v1/model/assets`, { method: 'POST', body: { name: 'Hostile-Site' } });
  t.equal(asset.status, 200, asset.text);
  const assetId = (asset.json as { asset_id: string }).asset_id;

  await t.test('a NUL in the login body is 400 before any database access, without credentials', async (t) => {
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'a\u0000b', password: 'x' } });
    t.equal(r.status, 400);
    t.equal(problemOf(r).code, 'invalid-request');
    t.match(problemOf(r).details?.errors?.[0]?.field, /^body\.username$/);
  });

  await t.test('control characters in free text are refused in bodies; tab, newline and CR are not', async (t) => {
    refused(t, await request(`${url}/v1/model/assets`, { method: 'POST', body: { name: 'Pump\u0000', reason: 'r' } }), 'body.name', /without control characters.*received "Pump\\u0000"/);
    refused(t, await request(`${url}/v1/model/assets`, { method: 'POST', body: { name: 'Pump-1', reason: 'bad\u0007bell' } }), 'body.reason', /U\+0007/);
    refused(t, await request(`${url}/v1/model/templates`, { method: 'POST', body: { name: 'T', notes: 'x\u001bx' } }), 'body.notes', /U\+001B/);
    const ok = await request(`${url}/v1/model/assets`, { method: 'POST', body: { name: 'Pump-2', reason: 'line one\nline two\r\n\tindented' } });
    t.equal(ok.status, 200, 'tab, newline and CR pass');
  });

  await t.test('text nested inside any-JSON values is checked too, keys included', async (t) => {
    const put = (value: unknown) => request(`${url}/v1/model/assets/${assetId}/properties/rating`, { method: 'PUT', body: { value } });
    refused(t, await put('a\u0000b'), 'body.value', /NUL/);
    refused(t, await put({ a: [1, { b: 'x\u0000' }] }), 'body.value.a.1.b', /NUL/);
    refused(t, await put({ 'k\u0000': 1 }), 'body.value.k\u0000', /key contains/);
    const lone = await request(`${url}/v1/model/assets/${assetId}/properties/rating`, {
      method: 'PUT', rawBody: '{"value":"\\ud800x"}', headers: { 'content-type': 'application/json' },
    });
    t.equal(lone.status, 400, 'an unpaired surrogate escape is not JSON text the database can store');
    t.equal(problemOf(lone).code, 'invalid-json');
    const fine = await put({ a: 'ünïcödé ✓ 𝄞', n: 1700000000123456789n });
    t.equal(fine.status, 200, fine.text);
  });

  await t.test('control characters in query and path values are refused', async (t) => {
    refused(t, await request(`${url}/v1/series?name_prefix=a%00b`), 'query.name_prefix', /NUL/);
    refused(t, await request(`${url}/v1/operations?kind=a%00b`), 'query.kind', /NUL/);
    refused(t, await request(`${url}/v1/model/assets/${assetId}/properties/a%00b`, { method: 'PUT', body: { value: 1 } }), 'path.key', /NUL/);
    refused(t, await request(`${url}/v1/model/assets/${assetId}/properties/a%01b`, { method: 'DELETE' }), 'path.key', /U\+0001/);
    // path values are decoded once, by the router: %2500 is the text "%00", not a NUL, and a lone % is text too
    for (const key of ['a%2500b', '50%25']) {
      const r = await request(`${url}/v1/model/assets/${assetId}/properties/${key}`, { method: 'PUT', body: { value: 1 } });
      t.equal(r.status, 200, `${key}: ${r.text}`);
    }
    const listed = await request(`${url}/v1/model/assets/${assetId}/properties`);
    t.match(listed.text, /"a%00b"/);
    t.match(listed.text, /"50%"/);
  });

  await t.test('an int64 beyond its range is 400 naming the field, in a path, a query and a body', async (t) => {
    const get = await request(`${url}/v1/model/jobs/9223372036854775808`);
    refused(t, get, 'path.id', /at most 9223372036854775807/);
    refused(t, await request(`${url}/v1/model/jobs/9999999999999999999/commit`, { method: 'POST', body: {} }), 'path.id', /9999999999999999999/);
    t.equal((await request(`${url}/v1/model/jobs/9223372036854775807`)).status, 404, 'the largest id is a well-formed id that does not exist');
    refused(t, await request(`${url}/v1/model/tree?as_of_ns=9223372036854775808`), 'query.as_of_ns', /outside the int64 range/);
    const body = await request(`${url}/v1/model/assets/${assetId}/properties/rating`, {
      method: 'PUT', rawBody: '{"value":1,"valid_from_ns":9223372036854775808}', headers: { 'content-type': 'application/json' },
    });
    refused(t, body, 'body.valid_from_ns', /nanoseconds since the Unix epoch/);
  });

  await t.test('an integer query parameter past 2^53 is 400 naming it, not rounded into the handler (fuzz, 2026-11-27: 500)', async (t) => {
    // Integer (not Int64) parameters were coerced with Number(): 9223372036854775808 became
    // 9.223372036854776e18, passed `minimum: 1`, and reached the display store as an int (500).
    for (const v of ['9223372036854775808', '9007199254740993', '18446744073709551616']) {
      refused(t, await request(`${url}/v1/displays/${assetId}?version=${v}`), 'query.version', new RegExp(v));
    }
  });

  await t.test('a forged cursor with an int64 beyond range or a NUL is 400 invalid-cursor', async (t) => {
    const forge = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const [path, cursor] of [
      ['/v1/operations', forge(['operations', '99999999999999999999', 'change:x'])],
      ['/v1/operations', forge(['operations', '1', 'change:\u0000'])],
      ['/v1/model/jobs', forge(['model-jobs', '9223372036854775808'])],
    ] as const) {
      const r = await request(`${url}${path}?cursor=${cursor}`);
      t.equal(r.status, 400, `${path} ${Buffer.from(cursor, 'base64url').toString()}`);
      t.equal(problemOf(r).code, 'invalid-cursor');
    }
  });

  await t.test('a URL over the limit is 414 and headers over the limit are 431', async (t) => {
    const long = await request(`${url}/v1/model/tree?x=${'a'.repeat(MAX_URL_BYTES)}`);
    t.equal(long.status, 414);
    t.equal(problemOf(long).code, 'uri-too-long');
    const path = await request(`${url}/v1/${'p'.repeat(MAX_URL_BYTES + 10)}`);
    t.equal(path.status, 414);
    const headers: Record<string, string> = {};
    for (let i = 0; i < 20; i++) headers[`x-pad-${i}`] = 'h'.repeat(Math.ceil(MAX_HEADER_BYTES / 19));
    const big = await request(`${url}/v1/healthz`, { headers });
    t.equal(big.status, 431);
    t.equal(problemOf(big).code, 'headers-too-large');
    t.equal((await request(`${url}/v1/healthz`)).status, 200, 'the server still answers');
  });

  await t.test('48 header fields are served; past that uWS holds and closes the connection (documented in the README)', async (t) => {
    const fields = Array.from({ length: 46 }, (_, i) => `X-F${i}: v\r\n`).join('');
    const got = await rawExchange(port, `GET /v1/healthz HTTP/1.1\r\nHost: x\r\n${fields}Connection: close\r\n\r\n`);
    t.match(got, /^HTTP\/1\.1 200/, '48 fields (Host and Connection included) answer 200');
  });

  await t.test('an oversize body gets a 413 that reaches the client, and the connection stays usable', async (t) => {
    const big = `{"ms":1,"pad":"${'x'.repeat(BODY_LIMIT * 8)}"}`;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${url}/v1/model/assets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
      statuses.push(r.status);
      t.equal(((await r.json()) as Problem).code, 'body-too-large');
    }
    t.same(statuses, Array(30).fill(413), '30 of 30 with fetch');
    // A chunked 4 MB upload from curl: before the body was drained, 2 of 12 saw
    // "curl: (55) Send failure: Broken pipe" here (2026-11-27, the code of d234a20).
    const huge = `{"pad":"${'x'.repeat(4_000_000)}"}`;
    const curlStatuses: string[] = [];
    for (let i = 0; i < 12; i++) {
      const out = await curlWithStdin(['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'content-type: application/json', '-H', 'transfer-encoding: chunked',
        '--data-binary', '@-', `${url}/v1/model/assets`], huge);
      curlStatuses.push(out);
    }
    t.same(curlStatuses, Array(12).fill('413'), '12 of 12 with curl');
    // one connection: the 413, then a good request on the same socket
    const got = await rawExchange(port, `POST /v1/model/assets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`
      + 'GET /v1/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 5000);
    t.match(got, /^HTTP\/1\.1 413[\s\S]*HTTP\/1\.1 200/, 'the 413 and then the next answer on the same connection');
  });
});
