// The bounded CI run of the hostile-input fuzz (reliability/hostile-input/): every
// operation of the router, requests generated from its schemas and mutated, over real HTTP
// to a real service in enforced mode, sent as an administrator so they reach validation
// and the handlers. Zero 5xx other than the spec's 503s, zero hangs, every error an
// ErrorEnvelope (a 400 naming its field), nothing the schema refuses answered 2xx, and
// the service healthy after. The long run: `npm run reliability:fuzz -- --duration 180`.
import t from 'tap';
import { allRoutes } from '../../src/http/routes/index.js';
import { startAuthService } from '../helpers/auth.js';
import { request } from '../helpers/service.js';
import { runHttpFuzz, figuresTable } from '../../reliability/hostile-input/http-fuzz.js';
import { fuzzPrincipal } from '../../reliability/hostile-input/fuzz-principal.js';

const BODY_LIMIT = 1024 * 1024;
const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
// A fixed number of requests, so every CI run sends the same ones (a time bound sent 600 on a
// loaded box and 7,900 on a quiet one); the duration only caps a very slow machine.
const COUNT = Number(process.env.FUZZ_COUNT ?? 5_000);
const DURATION_MS = Number(process.env.FUZZ_DURATION_MS ?? 120_000);

// Setup (migrations, scrypt logins) is most of the time on a loaded box; the runs themselves are bounded.
t.setTimeout(300_000);

t.test('hostile input over every operation', async (t) => {
  const svc = await startAuthService(t, { SERVICE_BODY_LIMIT: String(BODY_LIMIT) });
  const who = await fuzzPrincipal(svc.admin);
  const { figures, findings } = await runHttpFuzz({
    url: svc.url, authorization: who.authorization, protectedIds: who.protectedIds, routes: allRoutes(), bodyLimit: BODY_LIMIT,
    count: COUNT, durationMs: DURATION_MS, seed: SEED, concurrency: 3, timeoutMs: 15_000, traceFile: process.env.FUZZ_TRACE,
  });
  t.comment(`seed ${SEED}\n${figuresTable(figures)}`);
  for (const f of findings) t.comment(JSON.stringify(f));
  t.ok(figures.sent >= figures.operations, `every operation was called at least once (${figures.sent} requests over ${figures.operations} operations)`);
  t.equal(figures.fiveXx, 0, 'no 5xx other than the spec\'s 503s');
  t.equal(figures.hangs, 0, 'no hang and no connection closed without an answer');
  t.equal(figures.badEnvelopes, 0, 'every error is an ErrorEnvelope; every 400 names its fields');
  t.equal(figures.invalidAccepted, 0, 'nothing the schema refuses is answered 2xx');
  t.equal(figures.otherFieldNamed, 0, 'a 400 for a mutated member names that member (or the object holding it)');
  t.ok(figures.validAnswered2xx > 0, 'valid requests get through too (the fuzz reaches the handlers)');

  const health = await request(`${svc.url}/v1/healthz`);
  t.equal(health.status, 200, 'healthy after');
  const me = await request(`${svc.url}/v1/auth/whoami`, { headers: { authorization: who.authorization } });
  t.equal(me.status, 200, 'the fuzz principal still works');
  t.equal((await svc.admin('/v1/model/tree')).status, 200, 'the model still answers');
});
