// The three postures (enforced is covered everywhere else), and the bootstrap
// administrator with a generated password.
import t from 'tap';
import { stat, readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { request, startTestService } from '../helpers/service.js';
import { createPerson, login } from '../helpers/auth.js';
import { bootstrapAdmin } from '../../src/auth/index.js';

t.test('disabled mode needs no credentials and acts as the local administrator', async (t) => {
  const { url } = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'disabled' } });
  const m = await request(`${url}/v1/auth/methods`);
  t.equal((m.json as { auth_mode: string }).auth_mode, 'disabled');
  const w = await request(`${url}/v1/auth/whoami`);
  t.equal(w.status, 200);
  const who = w.json as { authenticated_via: string; capabilities: string[] };
  t.equal(who.authenticated_via, 'disabled-mode');
  t.ok(who.capabilities.includes('admin'));
  const r = await request(`${url}/v1/auth/roles`, { method: 'POST', body: { name: 'made-without-login', capabilities: ['read'] } });
  t.equal(r.status, 201);
});

// One shadow-mode service for its three checks (a start costs seconds), its log captured.
t.test('shadow mode', async (t) => {
  const lines: string[] = [];
  const capture = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  const svc = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'shadow', SERVICE_ADMIN_PASSWORD: 'the shadow admin password' }, logLevel: 'info', logStream: capture });

  t.test('runs every check but lets a denied request proceed', async (t) => {
    const admin = await login(svc.url, 'admin', 'the shadow admin password');
    await createPerson(admin, 'shadow-viewer', 'shadow viewer password', 'viewer');
    const viewer = await login(svc.url, 'shadow-viewer', 'shadow viewer password');
    const who = (await viewer('/v1/auth/whoami')).json as { auth_mode: string; capabilities: string[] };
    t.equal(who.auth_mode, 'shadow');
    t.same(who.capabilities, ['read'], 'the real grants are still resolved');
    t.equal((await viewer('/v1/auth/principals')).status, 200, 'a principal lacking admin proceeds');
    t.equal((await request(`${svc.url}/v1/auth/roles`)).status, 200, 'a request without credentials proceeds');
    t.equal((await request(`${svc.url}/v1/auth/whoami`, { headers: { authorization: 'Bearer svc_bad' } })).status, 401, 'bad credentials are still refused');
  });

  t.test('would-be denials reach the log with the correlation id', async (t) => {
    const r = await request(`${svc.url}/v1/auth/principals`);
    t.equal(r.status, 200);
    const cid = r.headers.get('x-correlation-id');
    const line = lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.would_deny !== undefined && l.correlation_id === cid);
    t.ok(line, 'a would-be denial line carries the request\'s correlation id');
  });

  // The bootstrap does not depend on the posture: the login above used this password.
  t.test('SERVICE_ADMIN_PASSWORD sets the bootstrap password and no file is written', async (t) => {
    t.ok(await login(svc.url, 'admin', 'the shadow admin password'), 'the administrator logs in with SERVICE_ADMIN_PASSWORD');
    await t.rejects(stat(`${svc.dataDir}/initial-admin-password`));
  });
});

t.test('the first start creates the bootstrap administrator with a generated password written once with mode 0600', async (t) => {
  const printed: string[] = [];
  const svc = await startTestService(t, { env: { SERVICE_AUTH_MODE: 'enforced' }, printBootstrapSecret: (l) => printed.push(l) });
  const file = `${svc.dataDir}/initial-admin-password`;
  t.equal((await stat(file)).mode & 0o777, 0o600);
  const password = (await readFile(file, 'utf8')).trim();
  t.ok(password.length >= 20);
  t.equal(printed.length, 1);
  t.ok(printed.join('').includes(password), 'printed once');
  await login(svc.url, 'admin', password);
  const again = await bootstrapAdmin(svc.service.context, (l) => printed.push(l));
  t.equal(again.created, false, 'a later start creates nothing');
  t.equal(printed.length, 1);
});
