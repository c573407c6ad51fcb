// Local login, sessions and logout over real HTTP with real cookies (cross-site refusals: csrf.test.ts).
import t from 'tap';
import { request } from '../helpers/service.js';
import { startAuthService, login, sessionCookieOf, createPerson, ADMIN_PASSWORD } from '../helpers/auth.js';
import { authOf } from '../../src/auth/index.js';

t.test('local login and sessions', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;
  const auth = authOf(svc.service.context);

  await t.test('methods are anonymous and say only the mode and the login methods', async (t) => {
    const r = await request(`${url}/v1/auth/methods`);
    t.equal(r.status, 200);
    t.same(r.json, { auth_mode: 'enforced', login_methods: ['local'] });
  });

  await t.test('a login sets an HttpOnly SameSite=Lax cookie on Path=/ with a fresh id each time', async (t) => {
    const a = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    const b = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    t.equal(a.status, 204);
    t.equal(a.text, '');
    const set = a.headers.getSetCookie().find((c) => c.startsWith('service_session='));
    t.match(set, /HttpOnly/);
    t.match(set, /SameSite=Lax/);
    t.match(set, /Path=\//);
    t.notMatch(set, /Secure/, 'not Secure over plain loopback HTTP');
    t.not(sessionCookieOf(a), sessionCookieOf(b));
  });

  await t.test('only a hash of the cookie secret is stored', async (t) => {
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    const value = sessionCookieOf(r).split('=')[1];
    const secret = value.split('.')[1];
    const { rows } = await svc.service.context.db.query<{ secret_hash: Buffer }>('SELECT secret_hash FROM auth_session');
    t.ok(rows.length >= 1);
    for (const row of rows) {
      t.notOk(row.secret_hash.toString('utf8').includes(secret));
      t.notOk(row.secret_hash.toString('base64url').includes(secret));
      t.equal(row.secret_hash.length, 32, 'a SHA-256');
    }
  });

  await t.test('whoami shows the session principal, its roles and the session expiry', async (t) => {
    const r = await admin('/v1/auth/whoami');
    t.equal(r.status, 200);
    const w = r.json as { principal: { subject: string }; authenticated_via: string; roles: Array<{ name: string }>; capabilities: string[]; session_expires_ns: bigint; auth_mode: string };
    t.equal(w.principal.subject, 'admin');
    t.equal(w.authenticated_via, 'session');
    t.equal(w.auth_mode, 'enforced');
    t.same(w.roles.map((r) => r.name), ['administrator']);
    t.ok(w.capabilities.includes('admin'));
    t.ok(BigInt(w.session_expires_ns) > BigInt(Date.now()) * 1_000_000n);
  });

  await t.test('a wrong password and an unknown user get the same status and body, and each costs one hash', async (t) => {
    const before = auth.hasher.hashCount;
    const wrong = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: 'nope-nope' }, headers: { 'x-forwarded-for': 'a' } });
    const mid = auth.hasher.hashCount;
    const unknown = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'nobody-here', password: 'nope-nope' } });
    const after = auth.hasher.hashCount;
    t.equal(wrong.status, 401);
    t.equal(unknown.status, 401);
    const strip = (j: unknown) => { const { correlation_id: _c, ...rest } = j as Record<string, unknown>; return rest; };
    t.same(strip(wrong.json), strip(unknown.json));
    t.equal(strip(wrong.json).code, 'invalid-credentials');
    t.equal(mid - before, 1, 'the wrong password costs one hash');
    t.equal(after - mid, 1, 'the unknown user costs one hash too');
  });

  await t.test('repeated failures are throttled with 429 before any hashing', async (t) => {
    for (let i = 0; i < 5; i++) {
      const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'victim', password: 'guess' + i } });
      t.equal(r.status, 401);
    }
    const before = auth.hasher.hashCount;
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'victim', password: 'guess' } });
    t.equal(r.status, 429);
    t.equal((r.json as { code: string }).code, 'too-many-requests');
    t.ok(Number(r.headers.get('retry-after')) >= 1);
    t.equal(auth.hasher.hashCount, before, 'no hash was computed');
    const other = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } });
    t.equal(other.status, 204, 'another username from the same address is not locked out');
  });

  await t.test('a disabled account gets 403 account-sealed and loses its sessions at once', async (t) => {
    const id = await createPerson(admin, 'sealed-user', 'a long enough password', 'viewer');
    const client = await login(url, 'sealed-user', 'a long enough password');
    t.equal((await client('/v1/auth/whoami')).status, 200);
    const { setPrincipalDisabled } = await import('../../src/auth/principals.js');
    const { modelTransaction } = await import('../../src/model/tx-log.js');
    await modelTransaction(auth.db, { principal: 'admin', reason: 'test' }, (tx, txId, ev) => setPrincipalDisabled(tx, txId, ev, id, true, 'admin'));
    auth.invalidate();
    t.equal((await client('/v1/auth/whoami')).status, 401, 'the open session no longer works');
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'sealed-user', password: 'a long enough password' } });
    t.equal(r.status, 403);
    t.equal((r.json as { code: string }).code, 'account-sealed');
    const wrong = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'sealed-user', password: 'not the password' } });
    t.equal(wrong.status, 401, 'a wrong password does not reveal that the account is sealed');
  });

  await t.test('sessions lists only the caller\'s own; all=true needs admin', async (t) => {
    await createPerson(admin, 'viewer-1', 'viewer password 1', 'viewer');
    const v = await login(url, 'viewer-1', 'viewer password 1');
    const own = await v('/v1/auth/sessions');
    t.equal(own.status, 200);
    const items = (own.json as { items: Array<{ subject: string; current: boolean }> }).items;
    t.equal(items.length, 1);
    t.equal(items[0].subject, 'viewer-1');
    t.equal(items[0].current, true);
    t.equal((await v('/v1/auth/sessions?all=true')).status, 403);
    const all = await admin('/v1/auth/sessions?all=true');
    t.equal(all.status, 200);
    t.ok((all.json as { items: Array<{ subject: string }> }).items.some((s) => s.subject === 'viewer-1'));
  });

  await t.test('sessions pages with a cursor', async (t) => {
    const first = await admin('/v1/auth/sessions?limit=1');
    const page = first.json as { items: Array<{ session_id: string }>; next_cursor: string | null };
    t.equal(page.items.length, 1);
    t.type(page.next_cursor, 'string');
    const second = await admin(`/v1/auth/sessions?limit=1&cursor=${page.next_cursor}`);
    t.equal(second.status, 200);
    t.not((second.json as typeof page).items[0].session_id, page.items[0].session_id);
    t.equal((await admin('/v1/auth/sessions?cursor=garbage!')).status, 400);
  });

  await t.test('logout revokes the session and clears the cookie', async (t) => {
    const c = await login(url, 'admin', ADMIN_PASSWORD);
    const r = await c('/v1/auth/logout', { method: 'POST' });
    t.equal(r.status, 204);
    t.match(r.headers.getSetCookie().join('\n'), /service_session=;.*Max-Age=0/);
    t.equal((await c('/v1/auth/whoami')).status, 401);
    const { rows } = await svc.service.context.db.query<{ n: bigint }>(`SELECT count(*)::int8 AS n FROM model_event WHERE entity_kind = 'session' AND action = 'revoked'`);
    t.ok(rows[0].n >= 1n, 'the revocation is in the model transaction log');
  });

  await t.test('an administrator revokes another person\'s session; others see it as not found', async (t) => {
    await createPerson(admin, 'viewer-2', 'viewer password 2', 'viewer');
    const v2 = await login(url, 'viewer-2', 'viewer password 2');
    const v1 = await login(url, 'viewer-1', 'viewer password 1');
    const sid = ((await v2('/v1/auth/sessions')).json as { items: Array<{ session_id: string }> }).items[0].session_id;
    t.equal((await v1(`/v1/auth/sessions/${sid}`, { method: 'DELETE' })).status, 404);
    t.equal((await admin(`/v1/auth/sessions/${sid}`, { method: 'DELETE' })).status, 204);
    t.equal((await v2('/v1/auth/whoami')).status, 401);
    t.equal((await admin('/v1/auth/sessions/00000000-0000-4000-8000-00000000abcd', { method: 'DELETE' })).status, 404);
  });

  await t.test('no credentials get 401 and a garbage cookie or bearer gets 401', async (t) => {
    t.equal((await request(`${url}/v1/auth/whoami`)).status, 401);
    t.equal((await request(`${url}/v1/auth/whoami`, { headers: { cookie: 'service_session=garbage' } })).status, 401);
    t.equal((await request(`${url}/v1/auth/whoami`, { headers: { authorization: 'Bearer svc_nope' } })).status, 401);
    t.equal((await request(`${url}/v1/auth/whoami`, { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } })).status, 401);
  });
});
