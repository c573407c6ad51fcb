// The crash loop (issue 31 item 1): the real service as a child process, several collectors
// sending at full speed on both lanes, SIGKILL at random moments 3 to 15 s apart, a restart
// each time, the collectors reconnecting and replaying their store-and-forward buffers, and
// model writes acknowledged over REST in between. After each restart: the last acknowledged
// point of every stream and every asset acknowledged before the kill must read back through
// REST. At the end the service is killed once more and the data directory is checked point
// by point against the collectors' record of acks (verify-stored.ts).
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckLedger } from './ack-ledger.js';
import { LoopCollector, type LoopCollectorStats } from './loop-collector.js';
import { ServiceChild, sleep } from './service-child.js';
import { expectedValue, qualityOf, timeOf, type PlannedStream } from './point-plan.js';
import { verifyStored, type StreamCheck } from './verify-stored.js';
import { ModelProbe } from './model-probe.js';
import { readPointRest } from './rest-probe.js';
import { mulberry32 } from '../../bench/seeded-random.js';

export interface CrashLoopOptions {
  durationMs: number;
  collectors: number;
  batchPoints: number;
  killMinMs: number;
  killMaxMs: number;
  seed: number;
  built: boolean;
  /** Keep the work directory (data, logs, buffers) for a look afterwards. */
  keep: boolean;
  log: (line: string) => void;
}

export const CRASH_LOOP_DEFAULTS: CrashLoopOptions = {
  durationMs: 10 * 60_000, collectors: 4, batchPoints: 1_000, killMinMs: 3_000, killMaxMs: 15_000, seed: 1, built: false, keep: false, log: () => undefined,
};

export interface CrashLoopReport {
  seconds: number;
  collectors: number;
  streams: number;
  kills: number;
  restartMs: { mean: number; max: number };
  sessions: number;
  pointsSent: number;
  pointsAcked: number;
  ackedPerSecond: number;
  lost: number;
  duplicated: number;
  corrupt: number;
  storedUnacked: number;
  checksumsMatch: boolean;
  refusedPoints: number;
  rejected: Record<string, number>;
  replayedBatches: number;
  maxBufferedBytes: number;
  readProbes: number;
  readProbeFailures: string[];
  modelWritesAcked: number;
  modelMissing: string[];
  unexpectedExits: number;
  seriesChanged: number;
  workDir: string;
  logFile: string;
  perStream: StreamCheck[];
}

/** Per collector: four live streams of every plain type and two history streams on the backfill lane. */
export function planStreams(collector: number, nowMs: number): PlannedStream[] {
  const liveT0 = BigInt(nowMs - 3_600_000) * 1_000_000n;
  const histT0 = BigInt(nowMs - 60 * 86_400_000) * 1_000_000n;
  const ms = 1_000_000n;
  const salt = collector * 16;
  return [
    { name: 'flow', type: 'float64', lane: 'LIVE', t0: liveT0, stepNs: ms, salt: salt + 1 },
    { name: 'counter', type: 'int64', lane: 'LIVE', t0: liveT0, stepNs: ms, salt: salt + 2 },
    { name: 'running', type: 'boolean', lane: 'LIVE', t0: liveT0, stepNs: ms, salt: salt + 3 },
    { name: 'batch-id', type: 'string', lane: 'LIVE', t0: liveT0, stepNs: ms, salt: salt + 4 },
    { name: 'history-level', type: 'float64', lane: 'BACKFILL', t0: histT0, stepNs: 100n * ms, salt: salt + 5 },
    { name: 'history-count', type: 'int64', lane: 'BACKFILL', t0: histT0, stepNs: 100n * ms, salt: salt + 6 },
  ];
}

export async function runCrashLoop(partial: Partial<CrashLoopOptions> = {}): Promise<CrashLoopReport> {
  const o = { ...CRASH_LOOP_DEFAULTS, ...partial };
  const rand = mulberry32(o.seed);
  const workDir = await mkdtemp(join(tmpdir(), 'historian-crash-loop-'));
  const dataDir = join(workDir, 'data');
  const stateDir = join(workDir, 'collectors');
  await mkdir(dataDir); await mkdir(stateDir);
  const logFile = join(workDir, 'service.log');
  // Timestamps run ahead of the clock at full speed (1 ms apart): allow a month ahead.
  const service = await ServiceChild.create({ dataDir, logFile, built: o.built, env: { SERVICE_INGEST_MAX_FUTURE_MS: String(30 * 86_400_000), SERVICE_INGEST_MIN_FREE_BYTES: String(64 * 1024 * 1024) } });
  const ledger = new AckLedger();
  const collectors: LoopCollector[] = [];
  const plans = new Map<string, PlannedStream>();
  const restartMs: number[] = [];
  const readProbeFailures: string[] = [];
  let readProbes = 0;
  let probe: ModelProbe | null = null;
  let ticker: NodeJS.Timeout | undefined;
  try {
    await service.start();
    o.log(`service up at ${service.url} (gRPC ${service.grpcAddress}), data in ${dataDir}`);
    const nowMs = Date.now();
    for (let c = 0; c < o.collectors; c++) {
      const streams = planStreams(c, nowMs);
      const collectorId = `crash-loop-${c + 1}`;
      for (const s of streams) plans.set(`${collectorId}/${s.name}`, s);
      const lc = new LoopCollector({ collectorId, address: () => service.grpcAddress, streams, stateDir, ledger, batchPoints: o.batchPoints });
      collectors.push(lc);
      lc.start();
    }
    probe = new ModelProbe(() => service.url);
    probe.start();

    const t0 = Date.now();
    let kills = 0;
    ticker = setInterval(() => {
      const on = collectors.filter((c) => c.connected()).length;
      const buffered = collectors.reduce((a, c) => a + c.pendingBufferBytes(), 0);
      o.log(`  ${((Date.now() - t0) / 1000).toFixed(0)} s: ${ledger.totalAcked()} points acknowledged, ${on}/${collectors.length} collectors connected, ${buffered} B buffered`);
    }, 10_000);
    for (;;) {
      const gap = o.killMinMs + rand() * (o.killMaxMs - o.killMinMs);
      if (Date.now() + gap - t0 > o.durationMs) break;
      await sleep(gap);
      // What must survive this kill: every stream's highest acknowledged point, every asset acknowledged.
      const mustRead = [...plans.entries()].map(([key, plan]) => {
        const ranges = ledger.ackedOf(key).ranges();
        return ranges.length === 0 ? null : { key, plan, k: ranges[ranges.length - 1][1] - 1 };
      }).filter((x): x is { key: string; plan: PlannedStream; k: number } => x !== null);
      const assets = probe.takeAcknowledged();
      await service.kill();
      kills++;
      const down = Date.now();
      await service.start();
      restartMs.push(Date.now() - down);
      o.log(`kill ${kills} at ${((down - t0) / 1000).toFixed(1)} s: back in ${Date.now() - down} ms; ${ledger.totalAcked()} points acknowledged so far`);
      for (const m of mustRead) {
        const series = seriesOf(collectors, m.key);
        readProbes++;
        const want = expectedValue(m.plan, m.k);
        let got;
        try {
          got = await readPointRest(service.url, series, timeOf(m.plan, m.k), m.plan.type === 'int64');
        } catch (e) {
          readProbeFailures.push(`after kill ${kills}: ${m.key} point ${m.k}: no answer (${(e as Error).message})`);
          continue;
        }
        if (!got || got.value !== want || got.quality !== qualityOf(m.k)) readProbeFailures.push(`after kill ${kills}: ${m.key} point ${m.k}: read ${got ? `${String(got.value)}/${got.quality}` : 'nothing'}, acknowledged ${String(want)}/${qualityOf(m.k)}`);
      }
      await probe.check(assets, `after kill ${kills}`);
    }
    const seconds = (Date.now() - t0) / 1000;
    clearInterval(ticker);
    probe.stop();
    await Promise.all(collectors.map((c) => c.stop()));
    // The last word is a crash too: nothing may depend on a clean shutdown.
    await service.kill();
    kills++;
    const streamList = [...plans.entries()].map(([key, plan]) => ({ key, plan, series: seriesOf(collectors, key) }));
    const perStream = verifyStored(dataDir, streamList, ledger);
    // The model after the last kill: every acknowledged asset is there.
    await service.start();
    await probe.check(probe.all(), 'after the last kill');
    await service.stop();

    const stats = collectors.map((c) => c.stats);
    const sum = (f: (s: LoopCollectorStats) => number) => stats.reduce((a, s) => a + f(s), 0);
    const rejected: Record<string, number> = {};
    for (const s of stats) for (const [k, v] of Object.entries(s.rejected)) rejected[k] = (rejected[k] ?? 0) + v;
    const total = (f: (r: StreamCheck) => number) => perStream.reduce((a, r) => a + f(r), 0);
    return {
      seconds, collectors: o.collectors, streams: perStream.length, kills,
      restartMs: { mean: Math.round(restartMs.reduce((a, b) => a + b, 0) / Math.max(1, restartMs.length)), max: Math.max(0, ...restartMs) },
      sessions: sum((s) => s.sessions), pointsSent: sum((s) => s.pointsSent), pointsAcked: total((r) => r.acked),
      ackedPerSecond: Math.round(total((r) => r.acked) / seconds),
      lost: total((r) => r.lost), duplicated: total((r) => r.duplicated), corrupt: total((r) => r.corrupt), storedUnacked: total((r) => r.storedUnacked),
      checksumsMatch: perStream.every((r) => r.checksumCollector === r.checksumStored),
      refusedPoints: sum((s) => s.refusedPoints), rejected, replayedBatches: sum((s) => s.replayedBatches), maxBufferedBytes: Math.max(0, ...stats.map((s) => s.maxBufferedBytes)),
      readProbes, readProbeFailures, modelWritesAcked: probe.acknowledgedCount(), modelMissing: probe.missing,
      unexpectedExits: service.unexpectedExits.length, seriesChanged: sum((s) => s.seriesChanged),
      workDir, logFile, perStream,
    };
  } finally {
    clearInterval(ticker);
    probe?.stop();
    await service.kill();
    if (!o.keep) await rm(workDir, { recursive: true, force: true });
  }
}

function seriesOf(collectors: LoopCollector[], key: string): string {
  const slash = key.lastIndexOf('/');
  for (const c of collectors) {
    const id = c.seriesIds.get(key.slice(slash + 1));
    if (id && key.startsWith(`${c.collectorId}/`)) return id;
  }
  throw new Error(`no series known for stream ${key}`);
}
