// kill -9 the server process under load, restart it on the same data directory and
// model database, let the collector resume: every acknowledged point is there exactly
// once, and resending the unacknowledged batches adds no duplicate.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from '../helpers/service.js';
import { CollectorClient } from '../../src/collector/collector-client.js';
import { openSeriesEnv, readRaw, withReadView } from '../../src/storage/series-store.js';
import { floatBatch, T0 } from '../helpers/ingest.js';

const STREAMS = 20;
const BATCH = 1000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); });
  });
}

function startServer(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function connectWhenUp(address: string, epoch: bigint): Promise<CollectorClient> {
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      return await CollectorClient.connect({ address, collectorId: 'crash-1', epoch, streams: Array.from({ length: STREAMS }, (_, i) => ({ name: `s${i}`, type: 'float64' as const })) });
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

t.test('kill -9 under load, restart, resume: zero acknowledged points lost, zero duplicates', { timeout: 180_000 }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-crash-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const databaseUrl = await freshDatabase(t);
  const grpcPort = await freePort();
  const env: Record<string, string> = {
    SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(await freePort()), SERVICE_GRPC_PORT: String(grpcPort),
    SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', SERVICE_WORKERS: '1',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const address = `127.0.0.1:${grpcPort}`;

  let server = startServer(env);
  t.teardown(() => { server.kill('SIGKILL'); });
  const first = await connectWhenUp(address, 1n);
  const seriesIds = first.welcome.streams.map((s) => s.series_id);

  // Each stream gets consecutive, non-overlapping batches; remember which were acknowledged.
  const acked: Array<[number, number]> = [];
  const unacked: Array<[number, number]> = [];
  let killed = false;
  const sends: Array<Promise<void>> = [];
  const batchOf = (stream: number, k: number) => floatBatch(T0 + BigInt(k * BATCH) * 1_000_000n, BATCH, 1_000_000n, stream * 1e6 + k * BATCH);
  let k = 0;
  const loadUntil = Date.now() + 1_500;
  while (!killed) {
    for (let s = 0; s < STREAMS; s++) {
      const kk = k;
      sends.push(first.send('LIVE', s, 'float64', batchOf(s, kk)).then(
        (o) => { if (o.ok) acked.push([s, kk]); else unacked.push([s, kk]); },
        () => { unacked.push([s, kk]); },
      ));
    }
    k++;
    if (Date.now() > loadUntil && acked.length > 0) { server.kill('SIGKILL'); killed = true; }
    if (first.waitingForCredit() > 40) await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(sends);
  first.close();
  t.ok(acked.length > 0, `${acked.length} batches were acknowledged before the kill`);
  t.ok(unacked.length > 0, `${unacked.length} batches were in flight or waiting at the kill`);

  server = startServer(env);
  const second = await connectWhenUp(address, 2n);
  t.same(second.welcome.streams.map((s) => s.series_id), seriesIds, 'the restarted server maps the streams to the same series');
  const resent = await Promise.all(unacked.map(([s, kk]) => second.send('BACKFILL', s, 'float64', batchOf(s, kk))));
  t.ok(resent.every((o) => o.ok), 'every unacknowledged batch is accepted on the backfill lane');
  second.close();
  await new Promise<void>((resolve) => { server.once('exit', () => resolve()); server.kill('SIGTERM'); });

  const env2 = openSeriesEnv(join(dataDir, 'series'), { readOnly: true });
  t.teardown(() => env2.close());
  let lost = 0, wrong = 0, total = 0;
  const expected = new Map<number, number>();
  for (const [s] of [...acked, ...unacked]) expected.set(s, (expected.get(s) ?? 0) + BATCH);
  for (let s = 0; s < STREAMS; s++) {
    const page = withReadView(env2, (v) => readRaw(v, seriesIds[s], { startNs: 0n, endNs: 2n ** 62n, limit: 10_000_000 }));
    total += page.count;
    const byTs = new Map<bigint, number>();
    for (let i = 0; i < page.count; i++) byTs.set(page.ts[i], page.f64![i]);
    t.equal(page.count, expected.get(s) ?? 0, `stream s${s}: exactly one point per time sent`);
    for (const [as, kk] of acked) {
      if (as !== s) continue;
      const b = batchOf(s, kk);
      for (let i = 0; i < BATCH; i++) {
        const v = byTs.get(b.times[i]);
        if (v === undefined) lost++;
        else if (v !== b.values[i]) wrong++;
      }
    }
  }
  t.equal(lost, 0, 'no acknowledged point is lost');
  t.equal(wrong, 0, 'every acknowledged point has its exact value');
  t.ok(total > 0, `${total} points stored`);
});
