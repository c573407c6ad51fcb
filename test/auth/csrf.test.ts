// Cross-site request forgery defence by Fetch Metadata (src/auth/csrf.ts), over real HTTP:
// curl with a cookie jar passes, a browser request from another site is refused, a bearer
// request never is, and a configured trusted origin passes.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from '../helpers/service.js';
import { startAuthService, sessionCookieOf, createServiceWithToken, grantRole, ADMIN_PASSWORD } from '../helpers/auth.js';
import { loadConfig } from '../../src/config/config.js';

const run = promisify(execFile);
const PORTAL = 'https://portal.example.com';

t.test('state-changing requests from another site are refused', async (t) => {
  const svc = await startAuthService(t, { SERVICE_TRUSTED_ORIGINS: `${PORTAL}, http://localhost:5173` });
  const { url, admin } = svc;
  const cookie = sessionCookieOf(await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'admin', password: ADMIN_PASSWORD } }));
  let n = 0;
  const role = () => ({ name: `csrf-probe-${++n}`, capabilities: ['read'] });
  const post = (headers: Record<string, string>) => request(`${url}/v1/auth/roles`, { method: 'POST', headers: { cookie, ...headers }, body: role() });

  await t.test('curl with a cookie jar logs in and then POSTs with only the cookie', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'csrf-jar-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const jar = join(dir, 'jar.txt');
    const login = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-c', jar, '-H', 'content-type: application/json',
      '--data', JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }), `${url}/v1/auth/login/local`]);
    t.equal(login.stdout, '204');
    const created = await run('curl', ['-sS', '-w', '\n%{http_code}', '-b', jar, '-H', 'content-type: application/json',
      '--data', JSON.stringify(role()), `${url}/v1/auth/roles`]);
    const lines = created.stdout.trim().split('\n');
    t.equal(lines.at(-1), '201', `created: ${created.stdout}`);
  });

  await t.test('a same-origin browser request passes, with or without Origin', async (t) => {
    t.equal((await post({ 'sec-fetch-site': 'same-origin', origin: url })).status, 201);
    t.equal((await post({ 'sec-fetch-site': 'none' })).status, 201, 'a typed URL or bookmark');
    t.equal((await post({ origin: url })).status, 201, 'an older browser that sends only Origin');
  });

  await t.test('Sec-Fetch-Site cross-site or same-site is 403 csrf-rejected', async (t) => {
    for (const site of ['cross-site', 'same-site']) {
      const r = await post({ 'sec-fetch-site': site, origin: 'https://evil.example' });
      t.equal(r.status, 403, site);
      t.equal((r.json as { code: string }).code, 'csrf-rejected');
      t.match((r.json as { error: string }).error, site);
    }
    const forged = await post({ 'sec-fetch-site': 'cross-site' });
    t.equal(forged.status, 403, 'without Origin too');
  });

  await t.test('a foreign Origin without Sec-Fetch-Site is 403 csrf-rejected', async (t) => {
    for (const origin of ['https://evil.example', 'null', `${url}.evil.example`, 'not an origin']) {
      const r = await post({ origin });
      t.equal(r.status, 403, origin);
      t.equal((r.json as { code: string }).code, 'csrf-rejected');
    }
  });

  await t.test('a trusted origin passes from another site', async (t) => {
    t.equal((await post({ 'sec-fetch-site': 'cross-site', origin: PORTAL })).status, 201);
    t.equal((await post({ origin: 'http://localhost:5173' })).status, 201);
  });

  await t.test('login and other anonymous writes are checked too', async (t) => {
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' }, body: { username: 'admin', password: ADMIN_PASSWORD } });
    t.equal(r.status, 403);
    t.equal((r.json as { code: string }).code, 'csrf-rejected');
  });

  await t.test('reads are never checked', async (t) => {
    const r = await request(`${url}/v1/auth/whoami`, { headers: { cookie, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } });
    t.equal(r.status, 200);
  });

  await t.test('a bearer request is never refused', async (t) => {
    const { token, identityId } = await createServiceWithToken(admin, 'csrf-bearer');
    await grantRole(admin, identityId, 'administrator');
    const r = await request(`${url}/v1/auth/roles`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, body: role(),
    });
    t.equal(r.status, 201);
  });
});

t.test('SERVICE_TRUSTED_ORIGINS takes origins only', async (t) => {
  t.same([...loadConfig({ SERVICE_TRUSTED_ORIGINS: 'https://A.example.com:443/, http://b.example:8080' }).trustedOrigins], ['https://a.example.com', 'http://b.example:8080']);
  t.same([...loadConfig({}).trustedOrigins], []);
  for (const bad of ['a.example.com', 'https://a.example.com/portal', 'ftp://a.example.com', 'https://a.example.com?x=1']) {
    t.throws(() => loadConfig({ SERVICE_TRUSTED_ORIGINS: bad }), { message: /SERVICE_TRUSTED_ORIGINS: .* is not an origin/ }, bad);
  }
});
