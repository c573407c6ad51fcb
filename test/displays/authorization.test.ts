// Authorization of the Displays routes, as the authorization matrix checks every route
// (401 without credentials, 403/404 without the capability, not refused with exactly it),
// plus what the declarations cannot say: publishing needs display-publish on top of
// display-author, and readers' view of drafts.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { allRoutes } from '../../src/http/routes/index.js';
import { request } from '../helpers/service.js';
import { startAuthService, createPerson, grantRole, login, sessionCookieOf } from '../helpers/auth.js';
import { displayDoc } from './fixtures.js';

const METHOD = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' } as const;

async function statusOf(url: string, method: string, body: unknown, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body !== undefined ? JSON.stringify(body) : undefined });
  await res.body?.cancel();
  return res.status;
}

t.test('displays routes under enforced authorization', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const routes = allRoutes().filter((r) => r.area === 'Displays');
  t.equal(routes.length, 16, 'the 13 operations of the spec, the version list, publish and import');

  const cookieOf = async (name: string, capabilities: string[] | null) => {
    if (capabilities) await admin('/v1/auth/roles', { method: 'POST', body: { name: `role-${name}`, capabilities } });
    const id = await createPerson(admin, name, `${name} password here`);
    if (capabilities) await grantRole(admin, id, `role-${name}`);
    return sessionCookieOf(await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: name, password: `${name} password here` } }));
  };
  const nobody = await cookieOf('nobody', null);
  const holders = new Map<string, string>();
  for (const cap of ['read', 'display-author', 'display-publish']) holders.set(cap, await cookieOf(`only-${cap}`, [cap]));

  for (const route of routes) {
    const label = `${METHOD[route.method]} ${route.path}`;
    const path = route.path.replace(/\{[^}]+\}/g, randomUUID());
    const body = route.body ? {} : undefined;
    t.equal(await statusOf(`${url}${path}`, METHOD[route.method], body, {}), 401, `${label} without credentials: 401`);
    if (route.access.kind !== 'capability') continue;
    const denied = await statusOf(`${url}${path}`, METHOD[route.method], body, { cookie: nobody });
    t.ok(denied === 403 || denied === 404, `${label} without ${route.access.capability}: ${denied}`);
    const allowed = await statusOf(`${url}${path}`, METHOD[route.method], body, { cookie: holders.get(route.access.capability) as string });
    t.ok(allowed !== 401 && allowed !== 403, `${label} with exactly ${route.access.capability}: ${allowed}`);
  }

  // Writing needs display-author, publishing display-publish: one role need not hold both.
  const writer = await login(url, 'only-display-author', 'only-display-author password here');
  const f = await writer('/v1/display-folders', { method: 'POST', body: { name: 'Drafts' } });
  t.equal(f.status, 201);
  const folderId = (f.json as { folder_id: string }).folder_id;
  const d = await writer('/v1/displays', { method: 'POST', body: { folder_id: folderId, document: displayDoc() } });
  t.equal(d.status, 201);
  const rec = d.json as { id: string; tx_id: number };
  t.equal((await writer(`/v1/displays/${rec.id}/publish`, { method: 'POST', body: { version: 1 } })).status, 403, 'an author without display-publish cannot publish');
  await admin('/v1/auth/roles', { method: 'POST', body: { name: 'publisher', capabilities: ['read', 'display-publish'] } });
  const pubId = await createPerson(admin, 'pat-publisher', 'pat publisher password');
  await grantRole(admin, pubId, 'publisher');
  const publisher = await login(url, 'pat-publisher', 'pat publisher password');
  t.equal((await publisher(`/v1/displays/${rec.id}`)).status, 200, 'read and display-publish see drafts (to decide what to publish)');
  t.equal((await publisher(`/v1/displays/${rec.id}`, { method: 'PUT', body: { expected_tx: rec.tx_id, document: displayDoc() } })).status, 403, 'but cannot edit them');
  t.equal((await publisher(`/v1/displays/${rec.id}/publish`, { method: 'POST', body: { version: 1 } })).status, 200, 'and publish');
  const reader = await login(url, 'only-read', 'only-read password here');
  t.equal((await reader(`/v1/displays/${rec.id}`)).status, 200, 'a reader sees the published display');
  t.equal((await reader(`/v1/displays/${rec.id}/export`)).status, 200, 'and may export it');
  t.equal((await reader('/v1/displays/import', { method: 'POST', body: {} })).status, 403, 'but not import');
});
