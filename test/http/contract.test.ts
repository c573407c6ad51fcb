import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startTestService, request } from '../helpers/service.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { ERROR_CODES } from '../../src/errors.js';

type Operation = { operationId: string; 'x-capability': string | null; 'x-scope': string };
type Contract = { openapi: string; paths: Record<string, Record<string, Operation>>; 'x-error-codes': Record<string, unknown> };

t.test('the served contract', async (t) => {
  const svc = await startTestService(t);
  const r = await request(`${svc.url}/v1/openapi.json`);
  t.equal(r.status, 200);
  const doc = JSON.parse(r.text) as Contract;

  t.test('is valid OpenAPI 3.1 and lists exactly the routed operations', async (t) => {
    t.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(r.text));
    t.ok(result.valid, `valid OpenAPI 3.1${result.valid ? '' : `: ${JSON.stringify(result.errors).slice(0, 2000)}`}`);

    const fromContract = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) for (const [m, op] of Object.entries(methods)) fromContract.add(`${m.toUpperCase()} ${path} ${op.operationId}`);
    const routed = new Set(svc.service.http.router.routes.map((rt) => `${rt.method.toUpperCase()} ${rt.path} ${rt.operationId}`));
    t.same([...fromContract].sort(), [...routed].sort(), 'the contract and the router list the same operations');
    t.equal(routed.size, allRoutes().length);
    t.same(Object.keys(doc['x-error-codes']).sort(), Object.keys(ERROR_CODES).sort(), 'every error code is documented');
  });

  t.test('passes Redocly\'s recommended ruleset with no error', async (t) => {
    // The ruleset ships inside @redocly/openapi-core: nothing is fetched.
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: r.text, absoluteRef: `${svc.url}/v1/openapi.json`, config });
    const errors = problems.filter((p) => p.severity === 'error');
    const where = (p: (typeof problems)[number]) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`;
    const warnings = new Map<string, number>();
    for (const p of problems) if (p.severity !== 'error') warnings.set(`${p.ruleId}: ${p.message}`, (warnings.get(`${p.ruleId}: ${p.message}`) ?? 0) + 1);
    for (const [w, n] of warnings) t.comment(`warning x${n} ${w}`);
    t.same(errors.map(where), [], 'no errors');
    t.notMatch(r.text, /"additionalItems"/, 'tuples are 2020-12 prefixItems, not draft-07 additionalItems');
  });

  t.test('every operation that can require a capability names it in x-capability', async (t) => {
    const byOperation = new Map<string, Operation>();
    for (const methods of Object.values(doc.paths)) for (const op of Object.values(methods)) byOperation.set(op.operationId, op);
    for (const route of allRoutes()) {
      const op = byOperation.get(route.operationId);
      const label = `${route.method.toUpperCase()} ${route.path}`;
      if (!op) { t.fail(`${label} is missing from the contract`); continue; }
      if (route.access.kind === 'capability') t.equal(op['x-capability'], route.access.capability, `${label}: the declared capability`);
      else if (route.access.kind === 'authenticated' && route.access.scope === 'owner-or-admin') t.equal(op['x-capability'], 'admin', `${label}: anyone else's items need admin`);
      else t.equal(op['x-capability'], null, `${label}: no capability is checked`);
      // A capability the handler itself checks must be the one the contract states.
      const checked = new Set([...route.handler.toString().matchAll(/\b(?:authorize|can)\(\s*["'`]([a-z-]+)["'`]/g)].map((m) => m[1]));
      for (const cap of checked) t.equal(op['x-capability'], cap, `${label}: its handler checks ${cap}`);
    }
    const revoke = doc.paths['/v1/auth/sessions/{id}']?.delete;
    t.equal(revoke?.['x-capability'], 'admin', 'DELETE /v1/auth/sessions/{id} states admin (another principal\'s session)');
    t.equal(revoke?.['x-scope'], 'owner-or-admin');
  });
});

t.test('operation ids are unique', async (t) => {
  const ids = allRoutes().map((r) => r.operationId);
  t.equal(new Set(ids).size, ids.length);
});
