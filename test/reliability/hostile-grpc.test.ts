// The bounded CI run of the collector-stream fuzz (reliability/hostile-input/grpc-fuzz.ts):
// garbage, truncated and out-of-order messages, broken batches, stale and fenced epochs,
// credit violations, bad credentials and an oversize message, each session over real gRPC
// to the real ingest worker. Every call ends with a gRPC status, a normal session is
// acknowledged after, and no point of a refused message is stored.
import t from 'tap';
import { startAuthService } from '../helpers/auth.js';
import { grpcAddress, readAll } from '../helpers/ingest.js';
import { request } from '../helpers/service.js';
import { runGrpcFuzz, grpcFiguresTable } from '../../reliability/hostile-input/grpc-fuzz.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);

// Setup (migrations, scrypt logins) is most of the time on a loaded box; the runs themselves are bounded.
t.setTimeout(300_000);

t.test('hostile collector sessions', async (t) => {
  const svc = await startAuthService(t);
  const { figures, findings } = await runGrpcFuzz({
    address: grpcAddress(svc), admin: svc.admin, sessions: Number(process.env.FUZZ_GRPC_SESSIONS ?? 60), seed: SEED,
    readSeries: (id) => readAll(svc, id).map((p) => p.ts), timeoutMs: 10_000,
  });
  t.comment(`seed ${SEED}\n${grpcFiguresTable(figures)}`);
  for (const f of findings) t.comment(JSON.stringify(f));
  t.ok(figures.rejectedBatches > 0, 'broken batches were sent and rejected');
  t.equal(figures.hangs, 0, 'every call ended with a status');
  t.equal(figures.unexpectedStatus, 0, 'every refusal is a status the protocol names for it');
  t.equal(figures.poisonStored, 0, 'no point of a refused message is stored');
  t.ok(figures.healthyAfter, 'a normal session is acknowledged after the run');
  t.equal((await request(`${svc.url}/v1/healthz`)).status, 200, 'the service is healthy after');
});
