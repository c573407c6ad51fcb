// A principal's account over real HTTP with real cookies and tokens: changing one's own
// password (with the current one), an administrator setting another's, and disabling and
// enabling a principal. Each takes effect from the next request on.
import t from 'tap';
import { request } from '../helpers/service.js';
import { startAuthService, login, createPerson, createServiceWithToken, bearerClient, ADMIN_PASSWORD, type Client } from '../helpers/auth.js';

const CSRF = { 'x-service-csrf': '1' };

async function loginStatus(url: string, username: string, password: string): Promise<number> {
  return (await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username, password } })).status;
}

async function whoamiStatus(c: Client): Promise<number> {
  return (await c('/v1/auth/whoami')).status;
}

t.test('account changes', async (t) => {
  const svc = await startAuthService(t);
  const { url, admin } = svc;

  await t.test('a person changes their own password with the current one; the old one stops working, other sessions end, this one goes on', async (t) => {
    const id = await createPerson(admin, 'olga', 'olga first password', 'viewer');
    const other = await login(url, 'olga', 'olga first password');
    const me = await login(url, 'olga', 'olga first password');
    const r = await me(`/v1/auth/principals/${id}/password`, { method: 'POST', body: { current_password: 'olga first password', new_password: 'olga second password' }, headers: CSRF });
    t.equal(r.status, 204, r.text);
    t.equal(await loginStatus(url, 'olga', 'olga first password'), 401, 'the old password no longer logs in');
    t.equal(await loginStatus(url, 'olga', 'olga second password'), 204, 'the new one does');
    t.equal(await whoamiStatus(other), 401, 'a session opened with the old password is over');
    t.equal(await whoamiStatus(me), 200, 'the session that made the change goes on');
  });

  await t.test('changing your own password needs the right current password', async (t) => {
    const id = await createPerson(admin, 'pavel', 'pavel first password', 'viewer');
    const me = await login(url, 'pavel', 'pavel first password');
    const missing = await me(`/v1/auth/principals/${id}/password`, { method: 'POST', body: { new_password: 'pavel second password' }, headers: CSRF });
    t.equal(missing.status, 400);
    t.match(missing.json, { code: 'invalid-request', details: { errors: [{ field: 'body.current_password' }] } });
    const wrong = await me(`/v1/auth/principals/${id}/password`, { method: 'POST', body: { current_password: 'not my password', new_password: 'pavel second password' }, headers: CSRF });
    t.equal(wrong.status, 403);
    t.match(wrong.json, { code: 'wrong-current-password' });
    const short = await me(`/v1/auth/principals/${id}/password`, { method: 'POST', body: { current_password: 'pavel first password', new_password: 'short' }, headers: CSRF });
    t.equal(short.status, 400, 'a new password under 12 characters is refused');
    t.equal(await loginStatus(url, 'pavel', 'pavel first password'), 204, 'nothing changed');
  });

  await t.test('only an administrator sets another person\'s password, and needs no current password for it', async (t) => {
    const victim = await createPerson(admin, 'quinn', 'quinn first password', 'viewer');
    await createPerson(admin, 'rosa', 'rosa first password', 'engineer');
    const rosa = await login(url, 'rosa', 'rosa first password');
    const denied = await rosa(`/v1/auth/principals/${victim}/password`, { method: 'POST', body: { current_password: 'quinn first password', new_password: 'rosa chose this one' }, headers: CSRF });
    t.equal(denied.status, 403, 'an engineer cannot');
    const quinn = await login(url, 'quinn', 'quinn first password');
    const set = await admin(`/v1/auth/principals/${victim}/password`, { method: 'POST', body: { new_password: 'quinn reset password', reason: 'forgotten' }, headers: CSRF });
    t.equal(set.status, 204, set.text);
    t.equal(await whoamiStatus(quinn), 401, 'the person\'s open session ends');
    t.equal(await loginStatus(url, 'quinn', 'quinn first password'), 401, 'the old password no longer logs in');
    t.equal(await loginStatus(url, 'quinn', 'quinn reset password'), 204);
    const identity = await createServiceWithToken(admin, 'pw-integration');
    const svcPw = await admin(`/v1/auth/principals/${identity.identityId}/password`, { method: 'POST', body: { new_password: 'services have no password' }, headers: CSRF });
    t.equal(svcPw.status, 400, 'a service identity has no password');
    const unknown = await admin('/v1/auth/principals/00000000-0000-4000-8000-000000000000/password', { method: 'POST', body: { new_password: 'nobody has this one' }, headers: CSRF });
    t.equal(unknown.status, 404);
  });

  await t.test('the administrator changes the bootstrap password, as the first-start message asks', async (t) => {
    const who = (await admin('/v1/auth/whoami')).json as { principal: { principal_id: string } };
    const r = await admin(`/v1/auth/principals/${who.principal.principal_id}/password`, { method: 'POST', body: { current_password: ADMIN_PASSWORD, new_password: 'a better admin password' }, headers: CSRF });
    t.equal(r.status, 204, r.text);
    t.equal(await loginStatus(url, 'admin', ADMIN_PASSWORD), 401);
    t.equal(await loginStatus(url, 'admin', 'a better admin password'), 204);
  });

  await t.test('a disabled person\'s session is refused and their login is sealed; enabled again, they log in', async (t) => {
    const id = await createPerson(admin, 'sven', 'sven first password', 'viewer');
    const sven = await login(url, 'sven', 'sven first password');
    t.equal(await whoamiStatus(sven), 200);
    const off = await admin(`/v1/auth/principals/${id}/disable`, { method: 'POST', body: { reason: 'left the company' }, headers: CSRF });
    t.equal(off.status, 200, off.text);
    t.match(off.json, { principal_id: id, disabled: true });
    t.equal(await whoamiStatus(sven), 401, 'the existing session is refused');
    const sealed = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'sven', password: 'sven first password' } });
    t.equal(sealed.status, 403);
    t.match(sealed.json, { code: 'account-sealed' });
    const listed = (await admin('/v1/auth/principals')).json as { items: Array<{ principal_id: string; disabled: boolean }> };
    t.equal(listed.items.find((p) => p.principal_id === id)?.disabled, true, 'the listing shows it disabled');
    const on = await admin(`/v1/auth/principals/${id}/enable`, { method: 'POST', body: {}, headers: CSRF });
    t.equal(on.status, 200);
    t.match(on.json, { disabled: false });
    t.equal(await loginStatus(url, 'sven', 'sven first password'), 204);
  });

  await t.test('a disabled service identity\'s token stops working', async (t) => {
    const identity = await createServiceWithToken(admin, 'to-disable', 'integration', 'viewer');
    const bot = bearerClient(url, identity.token);
    t.equal(await whoamiStatus(bot), 200);
    t.equal((await admin(`/v1/auth/principals/${identity.identityId}/disable`, { method: 'POST', body: {}, headers: CSRF })).status, 200);
    t.equal(await whoamiStatus(bot), 401);
  });

  await t.test('only administrators disable, and not themselves', async (t) => {
    const id = await createPerson(admin, 'tara', 'tara first password', 'engineer');
    const tara = await login(url, 'tara', 'tara first password');
    t.equal((await tara(`/v1/auth/principals/${id}/disable`, { method: 'POST', body: {}, headers: CSRF })).status, 403);
    const who = (await admin('/v1/auth/whoami')).json as { principal: { principal_id: string } };
    const self = await admin(`/v1/auth/principals/${who.principal.principal_id}/disable`, { method: 'POST', body: {}, headers: CSRF });
    t.equal(self.status, 409);
    t.equal((await admin('/v1/auth/principals/00000000-0000-4000-8000-000000000000/disable', { method: 'POST', body: {}, headers: CSRF })).status, 404);
  });

  await t.test('the contract has the three operations', async (t) => {
    const doc = (await request(`${url}/v1/openapi.json`)).json as { paths: Record<string, Record<string, { operationId: string; 'x-capability': string | null }>> };
    t.equal(doc.paths['/v1/auth/principals/{id}/password']?.post?.operationId, 'changePassword');
    t.equal(doc.paths['/v1/auth/principals/{id}/disable']?.post?.['x-capability'], 'admin');
    t.equal(doc.paths['/v1/auth/principals/{id}/enable']?.post?.['x-capability'], 'admin');
  });
});
