import t from 'tap';
import { startTestService, request } from '../helpers/service.js';
import { ERROR_CODES } from '../../src/errors.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('error paths answer with an ErrorEnvelope and a stable code', async (t) => {
  const svc = await startTestService(t);
  const envelope = (r: { json: unknown; headers: Headers }, code: string) => {
    const body = r.json as Record<string, unknown>;
    t.equal(body.code, code, `code is ${code}`);
    t.type(body.error, 'string');
    t.match(body.correlation_id, UUID_RE);
    t.equal(r.headers.get('x-correlation-id'), body.correlation_id, 'the header echoes the correlation id');
  };

  t.test('an unknown path is route-not-found, not not-found', async (t) => {
    const r = await request(`${svc.url}/v1/no-such-thing`);
    t.equal(r.status, 404);
    envelope(r, 'route-not-found');
  });

  t.test('a known path with the wrong method is 405 with Allow', async (t) => {
    const r = await request(`${svc.url}/v1/healthz`, { method: 'DELETE' });
    t.equal(r.status, 405);
    t.equal(r.headers.get('allow'), 'GET');
    envelope(r, 'method-not-allowed');
  });

  t.test('an invalid query names the parameter', async (t) => {
    const r = await request(`${svc.url}/v1/operations?limit=1001`);
    t.equal(r.status, 400);
    envelope(r, 'invalid-request');
    t.match((r.json as { details: { errors: Array<{ field: string }> } }).details.errors[0].field, 'query.limit');
  });

  t.test('an unknown query parameter is refused', async (t) => {
    const r = await request(`${svc.url}/v1/operations?limt=5`);
    t.equal(r.status, 400);
    envelope(r, 'invalid-request');
  });

  t.test('a forged cursor is invalid-cursor', async (t) => {
    const r = await request(`${svc.url}/v1/operations?cursor=bm90LWEtY3Vyc29y`);
    t.equal(r.status, 400);
    envelope(r, 'invalid-cursor');
  });

  t.test('a malformed operation id is 400 and an unknown one 404', async (t) => {
    const bad = await request(`${svc.url}/v1/operations/no-namespace`);
    t.equal(bad.status, 400);
    envelope(bad, 'invalid-request');
    const missing = await request(`${svc.url}/v1/operations/lifecycle:does-not-exist`);
    t.equal(missing.status, 404);
    envelope(missing, 'not-found');
  });
});

t.test('every error code has a distinct meaning and a 4xx or 5xx status', async (t) => {
  const meanings = new Set<string>();
  for (const [code, v] of Object.entries(ERROR_CODES)) {
    t.ok(v.status >= 400 && v.status < 600, `${code} has an error status`);
    t.notOk(meanings.has(v.meaning), `${code} has its own meaning`);
    meanings.add(v.meaning);
    t.match(code, /^[a-z]+(-[a-z]+)*$/, `${code} is kebab-case`);
  }
});
