// Principals, service identities and tokens, roles, grants and effective permissions
// over real HTTP, with real bearer tokens.
import t from 'tap';
import { request } from '../helpers/service.js';
import { startAuthService, login, bearerClient, createPerson, createServiceWithToken, grantRole } from '../helpers/auth.js';
import { authOf, authenticateServiceToken } from '../../src/auth/index.js';

t.test('tokens, roles and grants', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const db = svc.service.context.db;

  await t.test('a person is created with a hashed password and never shows credentials', async (t) => {
    const r = await admin('/v1/auth/principals', { method: 'POST', body: { username: 'alice', password: 'alice has a long password', display: 'Alice' } });
    t.equal(r.status, 201);
    const p = r.json as Record<string, unknown>;
    t.same(Object.keys(p).sort(), ['disabled', 'display', 'kind', 'principal_id', 'subject', 'tx_id', 'valid_from_ns', 'valid_to_ns']);
    t.equal(p.kind, 'user');
    const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM auth_principal WHERE subject = $1', ['alice']);
    t.match(rows[0].password_hash, /^scrypt\$16\$8\$1\$/);
    t.notOk(rows[0].password_hash.includes('alice has a long password'));
    const dup = await admin('/v1/auth/principals', { method: 'POST', body: { username: 'Alice', password: 'another long password' } });
    t.equal(dup.status, 409);
    const extra = await admin('/v1/auth/principals', { method: 'POST', body: { username: 'bob', password: 'bob has a long password', admin: true } });
    t.equal(extra.status, 400, 'unknown fields are rejected');
    const short = await admin('/v1/auth/principals', { method: 'POST', body: { username: 'bob', password: 'short' } });
    t.equal(short.status, 400);
    t.match((short.json as { error: string }).error, /password/);
    const list = await admin('/v1/auth/principals?limit=1');
    t.equal((list.json as { items: unknown[] }).items.length, 1);
    t.type((list.json as { next_cursor: unknown }).next_cursor, 'string');
  });

  await t.test('a token is shown once, stored only as a hash, and works as a bearer credential', async (t) => {
    const s = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind: 'integration', name: 'erp-bridge' } });
    t.equal(s.status, 201);
    const id = (s.json as { identity_id: string }).identity_id;
    const k = await admin(`/v1/auth/service-identities/${id}/tokens`, { method: 'POST', body: { comment: 'nightly sync' } });
    t.equal(k.status, 201);
    const minted = k.json as { token: string; token_id: string; comment: string };
    t.match(minted.token, /^svc_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    t.equal(minted.comment, 'nightly sync');
    const secret = minted.token.slice(37);
    const dump = JSON.stringify((await db.query('SELECT * FROM auth_service_token')).rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    t.notOk(dump.includes(secret), 'the secret is not in the database');
    t.notOk(dump.includes(minted.token));
    const listed = await admin('/v1/auth/service-identities');
    t.notOk(listed.text.includes(secret), 'listing never shows it again');
    t.equal((listed.json as { items: Array<{ tokens: unknown[] }> }).items[0].tokens.length, 1);

    const bearer = bearerClient(url, minted.token);
    const who = await bearer('/v1/auth/whoami');
    t.equal(who.status, 200);
    t.equal((who.json as { authenticated_via: string }).authenticated_via, 'bearer');
    t.equal((await bearer('/v1/auth/roles')).status, 403, 'a token grants nothing without grants');
    await grantRole(admin, id, 'administrator');
    t.equal((await bearer('/v1/auth/roles')).status, 200, 'a new grant takes effect at once');
    const post = await bearer('/v1/auth/roles', { method: 'POST', body: { name: 'bearer-made', capabilities: ['read'] } });
    t.equal(post.status, 201, 'bearer requests need no CSRF header');

    const ref = await authenticateServiceToken(authOf(svc.service.context), `Bearer ${minted.token}`);
    t.same(ref, { identityId: id, name: 'erp-bridge', kind: 'integration' });

    const rv = await admin(`/v1/auth/service-identities/tokens/${minted.token_id}/revoke`, { method: 'POST', body: { reason: 'rotated' } });
    t.equal(rv.status, 200);
    t.ok((rv.json as { revoked_ns: unknown }).revoked_ns);
    t.equal((await bearer('/v1/auth/whoami')).status, 401, 'a revoked token gets 401 at once');
    await t.rejects(authenticateServiceToken(authOf(svc.service.context), minted.token), { code: 'unauthenticated' });
    t.equal((await admin('/v1/auth/service-identities/tokens/00000000-0000-4000-8000-000000000999/revoke', { method: 'POST', body: {} })).status, 404);
  });

  await t.test('an expired token gets 401 and an expiry in the past is refused', async (t) => {
    const s = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind: 'collector', name: 'plc-7' } });
    const id = (s.json as { identity_id: string }).identity_id;
    const past = await admin(`/v1/auth/service-identities/${id}/tokens`, { method: 'POST', body: { expires_at_ns: 1 } });
    t.equal(past.status, 400);
    const soon = BigInt(Date.now() + 1500) * 1_000_000n;
    const k = await admin(`/v1/auth/service-identities/${id}/tokens`, { method: 'POST', body: { expires_at_ns: soon } });
    t.equal(k.status, 201);
    const bearer = bearerClient(url, (k.json as { token: string }).token);
    t.equal((await bearer('/v1/auth/whoami')).status, 200);
    await new Promise((r) => setTimeout(r, 1600));
    t.equal((await bearer('/v1/auth/whoami')).status, 401);
    const dup = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind: 'collector', name: 'plc-7' } });
    t.equal(dup.status, 409);
    const badKind = await admin('/v1/auth/service-identities', { method: 'POST', body: { kind: 'robot', name: 'x' } });
    t.equal(badKind.status, 400);
  });

  await t.test('the built-in roles exist with their documented capabilities and cannot be changed', async (t) => {
    const r = await admin('/v1/auth/roles');
    const roles = (r.json as { items: Array<{ role_id: string; name: string; capabilities: string[]; builtin: boolean }> }).items;
    const byName = Object.fromEntries(roles.filter((x) => x.builtin).map((x) => [x.name, x.capabilities]));
    t.same(byName.viewer, ['read']);
    t.same(byName.operator, ['read', 'annotate', 'enter', 'episode-manage']);
    t.notOk(byName.engineer.includes('admin'));
    t.ok(byName.administrator.includes('admin'));
    const viewer = roles.find((x) => x.name === 'viewer');
    t.equal((await admin(`/v1/auth/roles/${viewer?.role_id}`, { method: 'PUT', body: { capabilities: ['read', 'admin'] } })).status, 409);
  });

  await t.test('a custom role is created, updated and retired; a retired role grants nothing', async (t) => {
    const c = await admin('/v1/auth/roles', { method: 'POST', body: { name: 'annotator', capabilities: ['annotate', 'read', 'read'] } });
    t.equal(c.status, 201);
    const role = c.json as { role_id: string; capabilities: string[]; version: bigint };
    t.same(role.capabilities, ['read', 'annotate'], 'deduplicated, in enum order');
    const unknown = await admin('/v1/auth/roles', { method: 'POST', body: { name: 'wizard', capabilities: ['read', 'fly'] } });
    t.equal(unknown.status, 400);
    t.match((unknown.json as { error: string }).error, /fly/);
    t.equal((await admin('/v1/auth/roles', { method: 'POST', body: { name: 'Annotator', capabilities: ['read'] } })).status, 409);

    const pid = await createPerson(admin, 'carol', 'carol has a long password');
    const carol = await login(url, 'carol', 'carol has a long password');
    const g = await admin('/v1/auth/grants', { method: 'POST', body: { principal_id: pid, role_id: role.role_id, scope: { kind: 'everywhere' } } });
    t.equal(g.status, 201);
    t.equal((await admin('/v1/auth/grants', { method: 'POST', body: { principal_id: pid, role_id: role.role_id, scope: { kind: 'everywhere' } } })).status, 409, 'the same grant twice conflicts');
    const eff = async () => ((await carol('/v1/auth/effective', { method: 'POST', body: { target: { kind: 'everywhere' } } })).json as { capabilities: string[] }).capabilities;
    t.same(await eff(), ['read', 'annotate']);

    const u = await admin(`/v1/auth/roles/${role.role_id}`, { method: 'PUT', body: { capabilities: ['read'], reason: 'narrow' } });
    t.equal(u.status, 200);
    t.equal(BigInt((u.json as { version: bigint }).version), 2n);
    t.same(await eff(), ['read'], 'a role change takes effect at once');
    await admin(`/v1/auth/roles/${role.role_id}`, { method: 'PUT', body: { retired: true } });
    t.same(await eff(), [], 'a retired role grants nothing');
    t.equal((await admin(`/v1/auth/roles/${role.role_id}`)).status, 200);
    t.equal((await admin('/v1/auth/roles/00000000-0000-4000-8000-000000000999')).status, 404);
    t.equal((await admin('/v1/auth/roles/not-a-uuid')).status, 400);
  });

  await t.test('grants are listed, filtered and deleted; deletion takes effect at once', async (t) => {
    const pid = await createPerson(admin, 'dave', 'dave has a long password', 'operator');
    const dave = await login(url, 'dave', 'dave has a long password');
    const list = await admin(`/v1/auth/grants?principal_id=${pid}`);
    const grants = (list.json as { items: Array<{ grant_id: string; role_name: string; scope: unknown }> }).items;
    t.equal(grants.length, 1);
    t.equal(grants[0].role_name, 'operator');
    t.same(grants[0].scope, { kind: 'everywhere' });
    const can = async (capability: string) => ((await dave('/v1/auth/effective', { method: 'POST', body: { target: { kind: 'everywhere' }, capability } })).json as { allowed: boolean }).allowed;
    t.equal(await can('annotate'), true);
    t.equal(await can('admin'), false);
    t.equal(await can('annotate-everything'), false, 'an unknown capability is never allowed');
    t.equal((await admin(`/v1/auth/grants/${grants[0].grant_id}`, { method: 'DELETE' })).status, 204);
    t.equal(await can('annotate'), false);
    t.equal((await admin(`/v1/auth/grants/${grants[0].grant_id}`, { method: 'DELETE' })).status, 404);
    const events = await db.query<{ action: string }>(`SELECT e.action FROM model_event e JOIN model_tx x USING (tx_id) WHERE e.entity_kind = 'grant' AND e.entity_id = $1 ORDER BY e.tx_id`, [grants[0].grant_id]);
    t.same(events.rows.map((r) => r.action), ['created', 'deleted'], 'grant changes are in the transaction log');
  });

  await t.test('asset grants cover their subtree and view grants their view, as the scope resolver describes them', async (t) => {
    // A small tree described by a resolver of our own: root > child; other is elsewhere.
    const root = '11111111-1111-4111-8111-111111111111';
    const child = '44444444-4444-4444-8444-444444444444';
    const other = '33333333-3333-4333-8333-333333333333';
    const view = '22222222-2222-4222-8222-222222222222';
    const auth = authOf(svc.service.context);
    const real = auth.scopeResolver;
    auth.useScopeResolver({
      async assetAncestors(id) { return id === child ? [child, root] : id === root || id === other ? [id] : null; },
      async viewsContainingAsset(id) { return id === other ? [view] : []; },
    });
    t.teardown(() => auth.useScopeResolver(real));
    const pid = await createPerson(admin, 'erin', 'erin has a long password');
    await grantRole(admin, pid, 'engineer', { kind: 'asset', asset_id: root });
    await grantRole(admin, pid, 'viewer', { kind: 'view', view_id: view });
    const erin = await login(url, 'erin', 'erin has a long password');
    const eff = async (target: object) => ((await erin('/v1/auth/effective', { method: 'POST', body: { target } })).json as { capabilities: string[] }).capabilities;
    t.ok((await eff({ kind: 'asset', asset_id: root })).includes('model-edit'), 'the granted asset itself');
    t.ok((await eff({ kind: 'asset', asset_id: child })).includes('model-edit'), 'a grant on an ancestor covers the child');
    t.same(await eff({ kind: 'asset', asset_id: other }), ['read'], 'an asset outside the subtree gets only what its view grants');
    t.same(await eff({ kind: 'asset', asset_id: '55555555-5555-4555-8555-555555555555' }), [], 'an unknown asset gets nothing');
    t.same(await eff({ kind: 'view', view_id: view }), ['read']);
    t.same(await eff({ kind: 'everywhere' }), []);
    t.ok((await eff({ kind: 'anywhere' })).includes('model-edit'));
    const who = (await erin('/v1/auth/whoami')).json as { authorization: { assets: Array<{ asset_id: string }>; views: Array<{ view_id: string }> } };
    t.same(who.authorization.assets.map((a) => a.asset_id), [root]);
    t.same(who.authorization.views.map((v) => v.view_id), [view]);
  });

  await t.test('effective for another principal needs admin', async (t) => {
    const pid = await createPerson(admin, 'frank', 'frank has a long password', 'viewer');
    const frank = await login(url, 'frank', 'frank has a long password');
    const adminId = ((await admin('/v1/auth/whoami')).json as { principal: { principal_id: string } }).principal.principal_id;
    t.equal((await frank('/v1/auth/effective', { method: 'POST', body: { principal_id: adminId, target: { kind: 'everywhere' } } })).status, 403);
    const r = await admin('/v1/auth/effective', { method: 'POST', body: { principal_id: pid, target: { kind: 'everywhere' } } });
    t.same((r.json as { capabilities: string[] }).capabilities, ['read']);
    t.equal((await admin('/v1/auth/effective', { method: 'POST', body: { principal_id: '00000000-0000-4000-8000-000000000999', target: { kind: 'everywhere' } } })).status, 404);
  });

  await t.test('every auth change is recorded with its principal and reason', async (t) => {
    const { rows } = await db.query<{ principal: string; reason: string }>(
      `SELECT DISTINCT x.principal, x.reason FROM model_tx x JOIN model_event e USING (tx_id) WHERE e.entity_kind = 'role' AND x.reason = 'narrow'`);
    t.same(rows, [{ principal: 'admin', reason: 'narrow' }]);
    t.equal((await request(`${url}/v1/auth/principals`)).status, 401);
  });
});
