// Cost of authenticating one bearer request, and of one authorization check.
//
//   node --import tsx bench/auth.ts [--iterations 20000] [--json]
//
// Runs against the real AuthAccessControl over the model database (DATABASE_URL, or
// embedded PGlite in memory): one service identity with a grant and a token, created
// before timing. Reports per-request microseconds for
//   - a warm bearer authentication (token and principal caches hit): the request path;
//   - a cold one (caches dropped before every call: one token and one principal load);
//   - allows() on the global scope with the principal cached;
//   - a session cookie authentication (warm).
// Plus the scrypt cost of one password verification, for sizing login capacity.
import { pino } from 'pino';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { openDb } from '../src/model/db.js';
import { migrate } from '../src/model/migrate.js';
import { modelTransaction } from '../src/model/tx-log.js';
import { AuthAccessControl } from '../src/auth/access-control.js';
import { createServiceIdentity, createUser } from '../src/auth/principals.js';
import { mintToken } from '../src/auth/service-tokens.js';
import { createGrant } from '../src/auth/grants.js';
import { BUILTIN_ROLES } from '../src/auth/roles.js';
import { openSession } from '../src/auth/sessions.js';
import type { RequestCredentials } from '../src/auth/access-types.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const itArg = args.indexOf('--iterations');
const iterations = itArg >= 0 ? Number(args[itArg + 1]) : 20_000;

// With DATABASE_URL, a database of our own (created and dropped here), never the shared one.
let dropDatabase: (() => Promise<void>) | null = null;
let url = process.env.DATABASE_URL;
if (url) {
  const adminClient = new pg.Client({ connectionString: url });
  await adminClient.connect();
  const name = `bench_auth_${process.pid}_${randomBytes(3).toString('hex')}`;
  await adminClient.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  url = u.toString();
  dropDatabase = async () => { await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await adminClient.end(); };
}
const db = await openDb({ url, pgliteDir: 'memory://' });
await migrate(db);
const access = new AuthAccessControl({ db, mode: 'enforced', log: pino({ level: 'silent' }) });

const { result: token } = await modelTransaction(db, { principal: 'bench' }, async (tx, txId, ev) => {
  const id = await createServiceIdentity(tx, txId, ev, { name: 'bench-integration', kind: 'integration' });
  await createGrant(tx, txId, ev, { principalId: id.principal_id, roleId: BUILTIN_ROLES.operator.id, scope: { kind: 'everywhere' } });
  return (await mintToken(tx, txId, ev, { principalId: id.principal_id, comment: 'bench', expiresNs: null })).plaintext;
});
const { result: user } = await modelTransaction(db, { principal: 'bench' }, (tx, txId, ev) => createUser(tx, txId, ev, { username: 'bench-user', passwordHash: null }));
const session = await openSession(db, access.sessionPolicy, { principalId: user.principal_id, method: 'local', remoteAddress: '127.0.0.1', userAgent: 'bench' });

const bearer: RequestCredentials = { authorization: `Bearer ${token}`, cookie: undefined, remoteAddress: '127.0.0.1' };
const cookie: RequestCredentials = { authorization: undefined, cookie: `theme=dark; service_session=${session.cookieValue}`, remoteAddress: '127.0.0.1' };

async function time(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await fn(); // warm-up (JIT, caches)
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

const principal = await access.authenticate(bearer);
if (!principal) throw new Error('BUG: the bench token did not authenticate');
const warmBearerUs = await time(iterations, () => access.authenticate(bearer));
const allowsUs = await time(iterations, () => access.allows(principal, 'enter', { kind: 'global' }));
const warmCookieUs = await time(iterations, () => access.authenticate(cookie));
const coldN = Math.max(50, Math.floor(iterations / 100));
const coldBearerUs = await time(coldN, () => { access.invalidate(); return access.authenticate(bearer); });
await access.hasher.verify('a password of ordinary length', null); // makes the dummy hash once
const hashT0 = performance.now();
await access.hasher.verify('a password of ordinary length', null);
const scryptMs = performance.now() - hashT0;
await db.close();
await dropDatabase?.();

const figures = {
  backend: db.kind,
  iterations,
  bearer_warm_us: Math.round(warmBearerUs * 100) / 100,
  bearer_cold_us: Math.round(coldBearerUs * 10) / 10,
  session_warm_us: Math.round(warmCookieUs * 100) / 100,
  allows_global_us: Math.round(allowsUs * 100) / 100,
  scrypt_verify_ms: Math.round(scryptMs * 10) / 10,
};
if (json) {
  console.log(JSON.stringify(figures));
} else {
  console.log(`auth bench (${figures.backend}, ${iterations} iterations)`);
  console.log('what                                   cost');
  console.log(`bearer authenticate, caches warm       ${figures.bearer_warm_us} µs`);
  console.log(`bearer authenticate, caches cold       ${figures.bearer_cold_us} µs`);
  console.log(`session cookie authenticate, warm      ${figures.session_warm_us} µs`);
  console.log(`allows(enter, global), cached          ${figures.allows_global_us} µs`);
  console.log(`scrypt verification (N=2^16, r=8)      ${figures.scrypt_verify_ms} ms`);
}
