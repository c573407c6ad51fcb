// The authorization matrix, generated from the router's own route list: every
// protected route, called without credentials, gets 401; called by a principal that
// lacks the route's capability, gets 403 (or 404 where existence would leak); called
// by a principal holding exactly that capability, is not refused; and the contract's
// x-capability is that capability. Routes added later join the matrix by themselves.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { allRoutes } from '../../src/http/routes/index.js';
import type { AnyRoute } from '../../src/http/route.js';
import { contractCapability } from '../../src/http/openapi.js';
import { request } from '../helpers/service.js';
import { startAuthService, createPerson, grantRole, sessionCookieOf } from '../helpers/auth.js';

async function loginCookie(url: string, username: string, password: string): Promise<string> {
  return sessionCookieOf(await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username, password } }));
}

/** Fills path parameters with values their schema accepts, so 401/403 are not masked by a 400. */
function concretePath(route: AnyRoute): string {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const id = randomUUID();
  const props = (route.params as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const check = route.params ? TypeCompiler.Compile(route.params as TSchema) : null;
  const values: Record<string, string> = {};
  for (const n of names) values[n] = id;
  if (check) {
    for (const n of names) {
      // A uuid fits most; enums (a registry kind) get their first member from Value.Create.
      let created: unknown;
      try { created = props[n] ? Value.Create(props[n]) : undefined; } catch { created = undefined; } // formats without a default
      const candidates = [id, ...(typeof created === 'string' && created !== '' ? [created] : []), `test:${id}`, 'x', '1'];
      for (const c of candidates) {
        values[n] = c;
        if (check.Check({ ...values })) break;
      }
    }
  }
  return route.path.replace(/\{([^}]+)\}/g, (_m, n: string) => encodeURIComponent(values[n]));
}

const METHOD = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' } as const;

/**
 * The status of one call, without waiting for the body: an allowed streaming route
 * (SSE subscriptions) never ends its body, and the status is all the matrix needs.
 */
async function statusOf(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, {
    method, redirect: 'manual',
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  await res.body?.cancel();
  return res.status;
}

// Every route is called three times and several principals log in (scrypt): the file
// needs more than the default per-file limit once all areas have their routes.
t.setTimeout(600_000);

t.test('authorization matrix over every route of the router', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const routes = allRoutes();
  const contract = (await request(`${url}/v1/openapi.json`)).json as { paths: Record<string, Record<string, { 'x-capability': string | null }>> };

  // A principal with no grants at all: it lacks every capability.
  await createPerson(admin, 'matrix-nobody', 'matrix nobody password');
  const nobodyCookie = await loginCookie(url, 'matrix-nobody', 'matrix nobody password');

  // One principal per capability, holding exactly that capability everywhere.
  const holderCookies = new Map<string, string>();
  const capabilityOf = (r: AnyRoute) => (r.access.kind === 'capability' ? r.access.capability : null);
  for (const cap of new Set(routes.map(capabilityOf).filter((c): c is NonNullable<typeof c> => c !== null))) {
    const role = await admin('/v1/auth/roles', { method: 'POST', body: { name: `only-${cap}`, capabilities: [cap] } });
    const id = await createPerson(admin, `holder-${cap}`, `holder ${cap} password`);
    await grantRole(admin, id, `only-${cap}`);
    t.equal(role.status, 201);
    holderCookies.set(cap, await loginCookie(url, `holder-${cap}`, `holder ${cap} password`));
  }

  for (const route of routes) {
    const label = `${METHOD[route.method]} ${route.path}`;
    const op = contract.paths[route.path]?.[route.method];
    t.ok(op, `${label} is in the contract`);
    t.equal(op?.['x-capability'] ?? null, contractCapability(route.access), `${label}: the contract's x-capability is the enforced one`);
    if (route.access.kind === 'anonymous') continue;
    const path = concretePath(route);
    const init = { method: METHOD[route.method], body: route.body ? {} : undefined };

    const anon = await statusOf(`${url}${path}`, init.method, init.body, {});
    t.equal(anon, 401, `${label} without credentials gets 401`);

    if (route.access.kind !== 'capability') continue;
    const denied = await statusOf(`${url}${path}`, init.method, init.body, { cookie: nobodyCookie });
    t.ok(denied === 403 || denied === 404, `${label} without capability ${route.access.capability} gets 403 or 404 (got ${denied})`);

    const cookie = holderCookies.get(route.access.capability) as string;
    const allowed = await statusOf(`${url}${path}`, init.method, init.body, { cookie });
    t.ok(allowed !== 401 && allowed !== 403, `${label} with exactly ${route.access.capability} is not refused (got ${allowed})`);
  }
});
