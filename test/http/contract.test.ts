import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestService, request } from '../helpers/service.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { ERROR_CODES } from '../../src/errors.js';

t.test('the served contract is valid OpenAPI 3.1 and lists exactly the routed operations', async (t) => {
  const svc = await startTestService(t);
  const r = await request(`${svc.url}/v1/openapi.json`);
  t.equal(r.status, 200);
  const doc = JSON.parse(r.text) as { openapi: string; paths: Record<string, Record<string, { operationId: string; 'x-capability': string | null }>>; 'x-error-codes': Record<string, unknown> };
  t.equal(doc.openapi, '3.1.0');

  const validator = new Validator();
  const result = await validator.validate(JSON.parse(r.text));
  t.ok(result.valid, `valid OpenAPI 3.1${result.valid ? '' : `: ${JSON.stringify(result.errors).slice(0, 2000)}`}`);

  const fromContract = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths)) for (const [m, op] of Object.entries(methods)) fromContract.add(`${m.toUpperCase()} ${path} ${op.operationId} ${op['x-capability']}`);
  const routed = new Set(svc.service.http.router.routes.map((rt) => `${rt.method.toUpperCase()} ${rt.path} ${rt.operationId} ${rt.access.kind === 'capability' ? rt.access.capability : null}`));
  t.same([...fromContract].sort(), [...routed].sort(), 'the contract and the router list the same operations with the same capability');
  t.equal(routed.size, allRoutes().length);
  t.same(Object.keys(doc['x-error-codes']).sort(), Object.keys(ERROR_CODES).sort(), 'every error code is documented');
});

t.test('operation ids are unique', async (t) => {
  const ids = allRoutes().map((r) => r.operationId);
  t.equal(new Set(ids).size, ids.length);
});
