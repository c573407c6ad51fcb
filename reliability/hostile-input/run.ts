// `npm run reliability:fuzz -- [--duration 180] [--count N] [--seed S] [--concurrency 3] [--json] [--findings FILE]`
// The long hostile-input run by hand: starts the service (enforced auth, a fresh data
// directory, PGlite or DATABASE_URL), sends generated and mutated requests to every
// operation for the duration (default 180 s) or count, checks the service is healthy after,
// prints the figures, and exits 1 on any 5xx, hang, bad envelope or invalid request accepted.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { allRoutes } from '../../src/http/routes/index.js';
import { startHarnessService } from './service.js';
import { runHttpFuzz, figuresTable } from './http-fuzz.js';
import { fuzzPrincipal } from './fuzz-principal.js';
import { runGrpcFuzz, grpcFiguresTable } from './grpc-fuzz.js';
import { readAll } from '../../test/helpers/ingest.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '180' },
    count: { type: 'string', default: '100000000' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000_007) },
    concurrency: { type: 'string', default: '3' },
    'grpc-sessions': { type: 'string', default: '300' },
    json: { type: 'boolean', default: false },
    findings: { type: 'string' },
    trace: { type: 'string' },
  },
});

const BODY_LIMIT = 1024 * 1024;
const seed = Number(values.seed);
const svc = await startHarnessService({ SERVICE_BODY_LIMIT: String(BODY_LIMIT) });
let failed = false;
try {
  const who = await fuzzPrincipal(svc.admin);
  const http = await runHttpFuzz({
    url: svc.url, authorization: who.authorization, protectedIds: who.protectedIds, routes: allRoutes(), bodyLimit: BODY_LIMIT,
    count: Number(values.count), durationMs: Number(values.duration) * 1000, seed, concurrency: Number(values.concurrency), timeoutMs: 15_000, traceFile: values.trace,
  });
  const grpc = await runGrpcFuzz({ address: svc.grpcAddress, admin: svc.admin, sessions: Number(values['grpc-sessions']), seed, readSeries: (id) => readAll(svc, id).map((p) => p.ts) });
  const healthy = (await fetch(`${svc.url}/v1/healthz`)).status === 200 && (await svc.admin('/v1/model/tree')).status === 200;
  failed = http.figures.fiveXx + http.figures.hangs + http.figures.badEnvelopes + http.figures.invalidAccepted > 0 || grpc.figures.failures > 0 || !healthy;
  if (values.findings) await writeFile(values.findings, JSON.stringify({ seed, http: http.findings, grpc: grpc.findings }, null, 2));
  if (values.json) {
    console.log(JSON.stringify({ seed, http: http.figures, grpc: grpc.figures, healthy_after: healthy }));
  } else {
    console.log(`hostile input, seed ${seed} (rerun with --seed ${seed})\n\nHTTP\n${figuresTable(http.figures)}\n\ngRPC collector stream\n${grpcFiguresTable(grpc.figures)}\n\nhealthy after: ${healthy ? 'yes' : 'NO'}`);
    for (const f of [...http.findings, ...grpc.findings]) console.log(JSON.stringify(f));
  }
} finally {
  await svc.stop();
}
process.exit(failed ? 1 : 0);
