// After a run of everything that handles a secret (logins right and wrong, password
// changes, service tokens minted and used, sessions listed, logged out and revoked), no
// plaintext secret is anywhere: not in any table of the model database, not in any file of
// the data directory (LMDB, PGlite), not in the service's log at its most verbose level.
// Also: login throttling holds under a password-guessing loop, the right password included.
import t from 'tap';
import { Writable } from 'node:stream';
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { startService } from '../../src/service.js';
import { freshDatabase, request } from '../helpers/service.js';
import { sessionCookieOf, cookieClient, createPerson, createServiceWithToken, ADMIN_PASSWORD } from '../helpers/auth.js';

/** Each secret in the forms a careless store could hold it in. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')].filter((f) => f.length >= 12);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

// Setup (migrations, scrypt logins) is most of the time on a loaded box; the runs themselves are bounded.
t.setTimeout(300_000);

t.test('no plaintext secret in the database, the data directory or the log; throttling holds', async (t) => {
  const logLines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { logLines.push(chunk.toString('utf8')); done(); } });
  // Started here rather than by startTestService: the log must go to a stream the test reads.
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-secrets-'));
  const databaseUrl = await freshDatabase(t);
  const config = loadConfig({
    SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_WORKERS: '2',
    SERVICE_AUTH_MODE: 'enforced', SERVICE_ADMIN_PASSWORD: ADMIN_PASSWORD, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const service = await startService(config, pino({ level: 'trace' }, sink), { printBootstrapSecret: () => undefined });
  t.teardown(async () => { await service.stop(2_000); await rm(dataDir, { recursive: true, force: true }); });
  const url = `http://127.0.0.1:${service.http.port}`;
  const svc = { service, dataDir };
  const secrets = new Map<string, string>(); // secret -> what it is
  const login = async (username: string, password: string) => {
    const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username, password } });
    t.equal(r.status, 204, `login ${username}`);
    const cookie = sessionCookieOf(r);
    const value = cookie.slice(cookie.indexOf('=') + 1);
    // "<session id>.<secret>": the id is no secret (it is listed), the part after the dot is
    secrets.set(value, `session cookie of ${username}`).set(value.slice(value.indexOf('.') + 1), `session secret of ${username}`);
    return cookie;
  };

  secrets.set(ADMIN_PASSWORD, 'administrator password');
  const adminCookie = await login('admin', ADMIN_PASSWORD);
  const admin = cookieClient(url, adminCookie);

  // People: created with a password, logged in, the password changed, a wrong guess.
  const firstPassword = 'operator first password 0001';
  const secondPassword = 'operator second password 0002';
  secrets.set(firstPassword, 'a person\'s first password').set(secondPassword, 'a person\'s changed password');
  const operatorId = await createPerson(admin, 'secret-operator', firstPassword, 'operator');
  const opCookie = await login('secret-operator', firstPassword);
  const change = await cookieClient(url, opCookie)(`/v1/auth/principals/${operatorId}/password`, { method: 'POST', body: { current_password: firstPassword, new_password: secondPassword } });
  t.equal(change.status, 204, 'own password changed');
  const wrongGuess = 'operator mistyped password 0003';
  secrets.set(wrongGuess, 'a wrong password typed at login');
  t.equal((await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'secret-operator', password: wrongGuess } })).status, 401, 'a wrong password is refused');
  const set = await admin(`/v1/auth/principals/${operatorId}/password`, { method: 'POST', body: { new_password: 'operator password set by admin 0004' } });
  t.equal(set.status, 204, 'an administrator sets another person\'s password');
  secrets.set('operator password set by admin 0004', 'a password set by an administrator');
  const op2 = await login('secret-operator', 'operator password set by admin 0004');

  // Service tokens: minted, used, listed, revoked.
  const svcToken = await createServiceWithToken(admin, 'secret-collector', 'collector', 'viewer');
  secrets.set(svcToken.token, 'a service token');
  secrets.set(svcToken.token.slice(svcToken.token.lastIndexOf('_') + 1), 'the secret part of a service token');
  t.equal((await request(`${url}/v1/auth/whoami`, { headers: { authorization: `Bearer ${svcToken.token}` } })).status, 200, 'the token works');
  t.equal((await admin('/v1/auth/service-identities')).status, 200, 'identities listed with their tokens');
  const second = await admin(`/v1/auth/service-identities/${svcToken.identityId}/tokens`, { method: 'POST', body: { comment: 'second' } });
  const secondToken = (second.json as { token: string; token_id: string });
  secrets.set(secondToken.token, 'a second service token');
  t.equal((await admin(`/v1/auth/service-identities/tokens/${secondToken.token_id}/revoke`, { method: 'POST', body: {} })).status, 200, 'token revoked');
  t.equal((await request(`${url}/v1/auth/whoami`, { headers: { authorization: `Bearer ${secondToken.token}` } })).status, 401, 'a revoked token is refused');

  // Sessions: listed, logged out, revoked by id; neither works afterwards.
  t.equal((await admin('/v1/auth/sessions?all=true')).status, 200, 'sessions listed');
  t.equal((await request(`${url}/v1/auth/logout`, { method: 'POST', headers: { cookie: op2 } })).status, 204, 'logout');
  t.equal((await request(`${url}/v1/auth/whoami`, { headers: { cookie: op2 } })).status, 401, 'a session cannot be used after logout');
  const op3 = await login('secret-operator', 'operator password set by admin 0004');
  const sessions = (await admin('/v1/auth/sessions?all=true')).json as { items: Array<{ session_id: string; principal_id: string }> };
  const opSessions = sessions.items.filter((s) => s.principal_id === operatorId);
  t.equal(opSessions.length, 1, 'the one live session of the person is listed');
  t.equal((await admin(`/v1/auth/sessions/${opSessions[0]?.session_id}`, { method: 'DELETE' })).status, 204, 'a session revoked by id');
  t.equal((await request(`${url}/v1/auth/whoami`, { headers: { cookie: op3 } })).status, 401, 'a session cannot be used after it is revoked');

  await t.test('login throttling holds under a password-guessing loop', async (t) => {
    await createPerson(admin, 'guess-target', 'the real password 0005');
    secrets.set('the real password 0005', 'the throttled person\'s password');
    // The throttle (src/auth/login-throttle.ts): 5 free failures, then each checked failure
    // blocks the pair for 1 s, 2 s, 4 s...; blocked tries are answered 429 without a hash.
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    let lastCheckedAt = 0;
    const loopStart = performance.now();
    for (let i = 0; i < 40; i++) {
      const guess = `guess number ${String(i).padStart(4, '0')} xx`;
      secrets.set(guess, 'a guessed password');
      const r = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'guess-target', password: guess } });
      statuses.push(r.status);
      if (r.status === 401) lastCheckedAt = performance.now();
      if (r.status === 429) retryAfter ??= r.headers.get('retry-after');
    }
    const loopMs = performance.now() - loopStart;
    const tried = statuses.filter((s) => s === 401).length;
    // However slow the box, the blocks bound how many guesses reach the password check.
    const bound = 5 + Math.floor(Math.log2(loopMs / 1000 + 1)) + 1;
    t.ok(tried >= 5 && tried <= bound, `${tried} of 40 guesses were checked against the password in ${Math.round(loopMs)} ms (at most ${bound})`);
    t.equal(statuses.filter((s) => s === 429).length, 40 - tried, 'every other guess answered 429');
    t.match(retryAfter, /^[1-9][0-9]*$/, 'with Retry-After in seconds');
    const blockMs = 1000 * 2 ** (tried - 5);
    const sentAt = performance.now();
    const right = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'guess-target', password: 'the real password 0005' } });
    if (right.status === 429) t.equal((right.json as { code: string }).code, 'too-many-requests', 'the right password is refused too while the block lasts (a guess cannot be confirmed)');
    else t.ok(right.status === 204 && sentAt - lastCheckedAt >= blockMs - 100, `the right password got in only after the block ran out (${Math.round(sentAt - lastCheckedAt)} ms after the last checked failure, block ${blockMs} ms; got ${right.status})`);
    const other = await request(`${url}/v1/auth/login/local`, { method: 'POST', body: { username: 'secret-operator', password: 'operator password set by admin 0004' } });
    t.equal(other.status, 204, 'another person is not locked out by the loop');
    secrets.set(sessionCookieOf(other).slice('service_session='.length), 'session cookie after the loop');
  });

  await t.test('no secret in any table, data file or log line', async (t) => {
    const found: string[] = [];
    const search = (where: string, text: string) => {
      for (const [secret, what] of secrets) for (const form of formsOf(secret)) if (text.includes(form)) found.push(`${what} in ${where}`);
    };
    const db = svc.service.context.db;
    const tables = (await db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)).rows;
    t.ok(tables.length > 10, `${tables.length} tables dumped`);
    let rows = 0;
    let everything = '';
    for (const { table_name } of tables) {
      const dump = (await db.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)).rows;
      rows += dump.length;
      const text = dump.map((r) => r.row).join('\n');
      everything += text;
      search(`table ${table_name}`, text);
    }
    // Controls: the search does see what is stored (names and ids that are no secret).
    t.ok(everything.includes('secret-operator') && everything.includes(svcToken.tokenId.replaceAll('-', '').slice(0, 8)), 'the dump holds the person and the token id');
    t.ok(rows > 0, `${rows} rows searched`);
    const files = await filesUnder(svc.dataDir);
    for (const f of files) search(`file ${f.slice(svc.dataDir.length)}`, (await readFile(f)).toString('latin1'));
    t.ok(files.length > 0, `${files.length} data files searched`);
    const log = logLines.join('');
    t.ok(logLines.length > 50, `${logLines.length} log lines at level trace searched`);
    search('the log', log);
    t.ok(log.includes('secret-operator'), 'the log names the person (the search sees it)');
    t.same([...new Set(found)], [], `none of ${secrets.size} secrets found`);
  });
});
