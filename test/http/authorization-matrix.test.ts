// The authorization matrix, generated from the router's own route list: every
// protected route, called without credentials, gets 401; called by a principal that
// lacks the route's capability, gets 403 (or 404 where existence would leak); called
// by a principal holding exactly that capability, is not refused; and the contract's
// x-capability is that capability. Routes added later join the matrix by themselves.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { allRoutes } from '../../src/http/routes/index.js';
import type { AnyRoute } from '../../src/http/route.js';
import { request } from '../helpers/service.js';
import { startAuthService, createPerson, login, grantRole, type Client } from '../helpers/auth.js';

/** Fills path parameters with values their schema accepts, so 401/403 are not masked by a 400. */
function concretePath(route: AnyRoute): string {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const id = randomUUID();
  const candidates = [id, `test:${id}`, 'x', '1'];
  const check = route.params ? TypeCompiler.Compile(route.params as TSchema) : null;
  const values: Record<string, string> = {};
  for (const n of names) values[n] = id;
  if (check) {
    for (const n of names) {
      for (const c of candidates) {
        values[n] = c;
        if (check.Check({ ...values })) break;
      }
    }
  }
  return route.path.replace(/\{([^}]+)\}/g, (_m, n: string) => encodeURIComponent(values[n]));
}

const METHOD = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' } as const;

t.test('authorization matrix over every route of the router', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const routes = allRoutes();
  const contract = (await request(`${url}/v1/openapi.json`)).json as { paths: Record<string, Record<string, { 'x-capability': string | null }>> };

  // A principal with no grants at all: it lacks every capability.
  await createPerson(admin, 'matrix-nobody', 'matrix nobody password');
  const nobody = await login(url, 'matrix-nobody', 'matrix nobody password');

  // One principal per capability, holding exactly that capability everywhere.
  const holders = new Map<string, Client>();
  const capabilityOf = (r: AnyRoute) => (r.access.kind === 'capability' ? r.access.capability : null);
  for (const cap of new Set(routes.map(capabilityOf).filter((c): c is NonNullable<typeof c> => c !== null))) {
    const role = await admin('/v1/auth/roles', { method: 'POST', body: { name: `only-${cap}`, capabilities: [cap] } });
    const id = await createPerson(admin, `holder-${cap}`, `holder ${cap} password`);
    await grantRole(admin, id, `only-${cap}`);
    t.equal(role.status, 201);
    holders.set(cap, await login(url, `holder-${cap}`, `holder ${cap} password`));
  }

  for (const route of routes) {
    const label = `${METHOD[route.method]} ${route.path}`;
    const op = contract.paths[route.path]?.[route.method];
    t.ok(op, `${label} is in the contract`);
    t.equal(op?.['x-capability'] ?? null, capabilityOf(route), `${label}: the contract's x-capability is the enforced one`);
    if (route.access.kind === 'anonymous') continue;
    const path = concretePath(route);
    const init = { method: METHOD[route.method], body: route.body ? {} : undefined };

    const anon = await request(`${url}${path}`, init);
    t.equal(anon.status, 401, `${label} without credentials gets 401`);
    t.equal((anon.json as { code?: string } | undefined)?.code, 'unauthenticated');

    if (route.access.kind !== 'capability') continue;
    const denied = await nobody(path, init);
    t.ok(denied.status === 403 || denied.status === 404, `${label} without capability ${route.access.capability} gets 403 or 404 (got ${denied.status})`);

    const holder = holders.get(route.access.capability) as Client;
    const allowed = await holder(path, init);
    t.ok(allowed.status !== 401 && allowed.status !== 403, `${label} with exactly ${route.access.capability} is not refused (got ${allowed.status})`);
  }
});
