// A storage fault stops the process instead of retrying. The fault is real: the server runs
// under a file-size limit (prlimit --fsize; Node ignores SIGXFSZ), so once the LMDB file
// would grow past it, LMDB's page writes fail with EFBIG, the engine's commit fails, and
// the ingest worker must stop the service (exit code 70). Afterwards the data directory
// opens cleanly and holds every acknowledged point exactly.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from '../helpers/service.js';
import { CollectorClient } from '../../src/collector/collector-client.js';
import { openSeriesEnv, readRaw, withReadView } from '../../src/storage/series-store.js';
import { T0 } from '../helpers/ingest.js';

const BATCH = 20_000;
const LIMIT_BYTES = 8_000_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); });
  });
}

t.test('an LMDB write failure stops the process; acknowledged points survive', { timeout: 180_000, skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL: embedded PGlite writes files larger than the file-size limit' }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-fault-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const databaseUrl = await freshDatabase(t) as string;
  const grpcPort = await freePort();
  const server = spawn('prlimit', [`--fsize=${LIMIT_BYTES}`, process.execPath, '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(await freePort()), SERVICE_GRPC_PORT: String(grpcPort),
      SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled', SERVICE_ADMIN_PASSWORD: 'correct horse battery staple', SERVICE_LOG_LEVEL: 'warn',
      SERVICE_WORKERS: '1', DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  server.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  t.teardown(() => { server.kill('SIGKILL'); });

  let client: CollectorClient | null = null;
  for (let i = 0; i < 240 && !client; i++) {
    try {
      client = await CollectorClient.connect({ address: `127.0.0.1:${grpcPort}`, collectorId: 'fault-1', epoch: 1n, streams: [{ name: 'a', type: 'float64' }] });
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (!client) throw new Error(`the server did not come up: ${output}`);
  const series = client.welcome.streams[0].series_id;

  // Incompressible values, so the file grows by about 8.5 bytes per point.
  const batchOf = (k: number) => {
    const times = new BigInt64Array(BATCH), values = new Float64Array(BATCH);
    for (let i = 0; i < BATCH; i++) { times[i] = T0 + BigInt(k * BATCH + i) * 1_000_000n; values[i] = Math.sin(k * BATCH + i) * 1e6 + i / 7; }
    return { times, values, quality: null };
  };
  const acked: number[] = [];
  let ended: Error | null = null;
  for (let k = 0; !ended && k < 500; k++) {
    const sent = client.send('LIVE', 0, 'float64', batchOf(k)).then(
      (o) => { if (o.ok) acked.push(k); },
      (e: Error) => { ended = e; },
    );
    if (k % 4 === 3) await sent;
  }
  const code = await exited;
  client.close();
  t.ok(ended !== null, 'the session ended when the store failed');
  t.equal(code, 70, 'the process exited with code 70 (storage fault), it did not keep retrying');
  t.match(output, /ingest storage fault: stopping the process/, 'the fault was logged before stopping');
  t.ok(acked.length > 0, `${acked.length} batches were acknowledged before the fault`);

  const env = openSeriesEnv(join(dataDir, 'series'), { readOnly: true });
  t.teardown(() => env.close());
  const page = withReadView(env, (v) => readRaw(v, series, { startNs: 0n, endNs: 2n ** 62n, limit: 10_000_000 }));
  const byTs = new Map<bigint, number>();
  for (let i = 0; i < page.count; i++) byTs.set(page.ts[i], page.f64![i]);
  let lost = 0, wrong = 0;
  for (const k of acked) {
    const b = batchOf(k);
    for (let i = 0; i < BATCH; i++) {
      const v = byTs.get(b.times[i]);
      if (v === undefined) lost++;
      else if (v !== b.values[i]) wrong++;
    }
  }
  t.equal(lost, 0, 'every acknowledged point is in the reopened store');
  t.equal(wrong, 0, 'with its exact value');
});
