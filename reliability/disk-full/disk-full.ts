// Disk full (issue 31 item 2). The service's data directory (series storage and the embedded
// PGlite model) lives on a small filesystem of its own; collectors stream at full speed while
// the harness takes the space away in two steps:
//   1. ballast up to a little above the ingest threshold (SERVICE_INGEST_MIN_FREE_BYTES), so
//      ingest itself crosses it: batches must then be refused `storage-full` (retryable) and
//      the collectors must buffer them; reads and the model keep working;
//   2. a second ballast to the last byte (ENOSPC for everyone, PGlite included): model writes
//      may fail (a 503 is what the contract allows), reads must still answer, the process
//      must stay up;
// then gives the space back (deletes the ballast) and waits for the service to resume by
// itself: new acks, the collectors' buffers drained, model writes accepted. At the end the
// service is killed and every acknowledged point checked (../crash-loop/verify-stored.ts).
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckLedger } from '../crash-loop/ack-ledger.js';
import { LoopCollector } from '../crash-loop/loop-collector.js';
import { ServiceChild, sleep } from '../crash-loop/service-child.js';
import { planStreams } from '../crash-loop/crash-loop.js';
import { timeOf, type PlannedStream } from '../crash-loop/point-plan.js';
import { verifyStored } from '../crash-loop/verify-stored.js';
import { ModelProbe } from '../crash-loop/model-probe.js';
import { mountSmallFs } from './small-fs.js';
import { fillUntil, freeBytes, removeBallast } from './ballast.js';

export interface DiskFullOptions {
  sizeMiB: number;
  thresholdMiB: number;
  /** Room left above the threshold for ingest to use up by itself. */
  headroomMiB: number;
  collectors: number;
  prefer: 'ext4-loop' | 'tmpfs';
  /** How long each full phase is held (ms). */
  holdMs: number;
  log: (line: string) => void;
}

export const DISK_FULL_DEFAULTS: DiskFullOptions = { sizeMiB: 256, thresholdMiB: 32, headroomMiB: 4, collectors: 2, prefer: 'ext4-loop', holdMs: 5_000, log: () => undefined };

/** What one probe of the service saw while the disk was full. */
export interface FullProbe {
  alive: boolean;
  /** GET /v1/series/{uuid}/raw status. */
  rawRead: number;
  /** GET /v1/model/assets/{uuid} status. */
  modelRead: number;
  /** POST /v1/model/assets status (0: no answer). */
  modelWrite: number;
  modelWriteCode: string | null;
}

export type DiskFullReport = { skipped: string } | {
  skipped: null;
  fs: string;
  sizeMiB: number;
  thresholdMiB: number;
  /** From the start of ingest to the first storage-full refusal. */
  msToFirstRefusal: number | null;
  storageFullRefusals: number;
  /** Rejections by reason over the whole run. */
  rejected: Record<string, number>;
  belowThreshold: FullProbe;
  noSpaceAtAll: FullProbe;
  /** From deleting the ballast to the first new acknowledgement, and to empty forward buffers. */
  msToResume: number | null;
  msToBuffersDrained: number | null;
  /** From deleting the ballast to the first accepted model write. */
  msToModelWrites: number | null;
  pointsAcked: number;
  lost: number;
  duplicated: number;
  corrupt: number;
  checksumsMatch: boolean;
  modelWritesAcked: number;
  modelMissing: string[];
  unexpectedExits: number;
  serviceLogTail: string[];
};

async function status(url: string, init?: RequestInit): Promise<{ status: number; code: string | null }> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    let code: string | null = null;
    try { code = (JSON.parse(text) as { code?: string }).code ?? null; } catch { /* not an envelope */ }
    return { status: res.status, code };
  } catch {
    return { status: 0, code: null };
  }
}

/** Bytes on disk of each entry of the data directory (where the space went). */
function dirSizes(dir: string): string {
  try {
    return execFileSync('du', ['-sm', ...readdirSync(dir).map((e) => join(dir, e))], { encoding: 'utf8' }).trim().split('\n').map((l) => { const [mb, p] = l.split('\t'); return `${p.slice(dir.length + 1)} ${mb} MiB`; }).join(', ');
  } catch {
    return '';
  }
}

async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number | null> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await cond()) return Date.now() - t0;
    await sleep(100);
  }
  return null;
}

export async function runDiskFull(partial: Partial<DiskFullOptions> = {}): Promise<DiskFullReport> {
  const o = { ...DISK_FULL_DEFAULTS, ...partial };
  const workDir = await mkdtemp(join(tmpdir(), 'historian-disk-full-'));
  const { fs, reasons } = mountSmallFs(workDir, o.sizeMiB, o.prefer);
  if (!fs) {
    await rm(workDir, { recursive: true, force: true });
    return { skipped: `no small filesystem could be mounted for the data directory (needs root and loop devices or tmpfs): ${reasons.join('; ')}` };
  }
  const dataDir = join(fs.dir, 'data');
  const stateDir = join(workDir, 'collectors'); // the collectors' disks are not the service's
  await mkdir(dataDir); await mkdir(stateDir);
  const logFile = join(workDir, 'service.log');
  const threshold = o.thresholdMiB * 1024 * 1024;
  const service = await ServiceChild.create({ dataDir, logFile, env: { SERVICE_INGEST_MIN_FREE_BYTES: String(threshold), SERVICE_INGEST_MAX_FUTURE_MS: String(30 * 86_400_000) } });
  const ballast = join(fs.dir, 'ballast-1'), ballast2 = join(fs.dir, 'ballast-2');
  const ledger = new AckLedger();
  const collectors: LoopCollector[] = [];
  const plans = new Map<string, PlannedStream>();
  const probe = new ModelProbe(() => service.url, 250);
  try {
    await service.start();
    o.log(`${fs.kind} of ${o.sizeMiB} MiB at ${fs.dir}; service up with ${(freeBytes(fs.dir) / 2 ** 20).toFixed(0)} MiB free, threshold ${o.thresholdMiB} MiB`);
    // A known asset to read while full.
    const created = await fetch(`${service.url}/v1/model/assets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'disk-full-anchor' }) });
    if (created.status !== 200) throw new Error(`creating the anchor asset: ${created.status} ${await created.text()}`);
    const anchor = ((await created.json()) as { asset_id: string }).asset_id;

    fillUntil(fs.dir, ballast, threshold + o.headroomMiB * 1024 * 1024);
    o.log(`ballast leaves ${(freeBytes(fs.dir) / 2 ** 20).toFixed(1)} MiB free: ingest crosses the threshold by itself`);
    const t0 = Date.now();
    const nowMs = Date.now();
    for (let c = 0; c < o.collectors; c++) {
      const collectorId = `disk-full-${c + 1}`;
      const streams = planStreams(c, nowMs);
      for (const s of streams) plans.set(`${collectorId}/${s.name}`, s);
      const lc = new LoopCollector({ collectorId, address: () => service.grpcAddress, streams, stateDir, ledger, batchPoints: 1_000 });
      collectors.push(lc);
      lc.start();
    }
    probe.start();
    const refusals = () => collectors.reduce((a, c) => a + (c.stats.rejected['storage-full'] ?? 0), 0);
    const msToFirstRefusal = await waitFor(() => refusals() > 0, 120_000);
    o.log(msToFirstRefusal === null ? 'no storage-full refusal within 120 s' : `first storage-full refusal after ${msToFirstRefusal} ms (${ledger.totalAcked()} points acknowledged)`);
    // From here the collectors stop producing: what they hold (refused, buffered, retried on the
    // backfill lane) is what must come through once space returns; a buffer of minutes of
    // full-speed points would only make the drain longer (replays cost more disk per point).
    for (const c of collectors) c.setPaused(true);

    const firstKey = [...plans.keys()][0];
    const sample = () => {
      const c = collectors[0];
      const series = c.seriesIds.get(plans.get(firstKey)!.name);
      const plan = plans.get(firstKey)!;
      return { series, start: timeOf(plan, 0), end: timeOf(plan, 1_000_000) };
    };
    const look = async (): Promise<FullProbe> => {
      const s = sample();
      const alive = (await status(`${service.url}/v1/healthz`)).status === 200;
      const raw = await status(`${service.url}/v1/series/${s.series}/raw?start_ns=${s.start}&end_ns=${s.end}&limit=1000`);
      const read = await status(`${service.url}/v1/model/assets/${anchor}`);
      const write = await status(`${service.url}/v1/model/assets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `while-full-${Date.now()}` }) });
      return { alive, rawRead: raw.status, modelRead: read.status, modelWrite: write.status, modelWriteCode: write.code };
    };
    await sleep(o.holdMs);
    const belowThreshold = await look();
    o.log(`below the threshold: ${JSON.stringify(belowThreshold)}`);

    fillUntil(fs.dir, ballast2, 0);
    o.log(`second ballast: ${freeBytes(fs.dir)} bytes free`);
    await sleep(o.holdMs);
    const noSpaceAtAll = await look();
    o.log(`no space at all: ${JSON.stringify(noSpaceAtAll)}`);

    const ackedBefore = ledger.totalAcked();
    removeBallast(ballast2);
    removeBallast(ballast);
    const freed = Date.now();
    o.log(`ballast removed: ${(freeBytes(fs.dir) / 2 ** 20).toFixed(0)} MiB free`);
    const msToResume = await waitFor(() => ledger.totalAcked() > ackedBefore, 60_000);
    let msToModelWrites: number | null = null;
    const modelOk = waitFor(async () => (await status(`${service.url}/v1/model/assets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `after-full-${Date.now()}` }) })).status === 200, 60_000)
      .then(() => { msToModelWrites = Date.now() - freed; });
    const watch = setInterval(() => o.log(`  draining: ${(freeBytes(fs.dir) / 2 ** 20).toFixed(1)} MiB free, ${collectors.reduce((a, c) => a + c.pendingBufferBytes(), 0)} B buffered, ${ledger.totalAcked()} acked; ${dirSizes(dataDir)}`), 5_000);
    const drained = await waitFor(() => collectors.every((c) => c.pendingBufferBytes() === 0 && c.inFlight() === 0), 120_000);
    clearInterval(watch);
    const msToBuffersDrained = drained === null ? null : Date.now() - freed;
    await modelOk;
    o.log(`resumed: first ack after ${msToResume} ms, buffers drained after ${msToBuffersDrained} ms, model writes after ${msToModelWrites} ms`);

    probe.stop();
    await Promise.all(collectors.map((c) => c.stop()));
    await service.kill();
    const checks = verifyStored(dataDir, [...plans.entries()].map(([key, plan]) => ({ key, plan, series: collectors.find((c) => key.startsWith(`${c.collectorId}/`))!.seriesIds.get(plan.name)! })), ledger);
    await service.start();
    await probe.check(probe.all(), 'after the disk-full run');
    await service.stop();
    const rejected: Record<string, number> = {};
    for (const c of collectors) for (const [k, v] of Object.entries(c.stats.rejected)) rejected[k] = (rejected[k] ?? 0) + v;
    const sum = (f: (r: (typeof checks)[number]) => number) => checks.reduce((a, r) => a + f(r), 0);
    const { readFileSync } = await import('node:fs');
    const serviceLogTail = readFileSync(logFile, 'utf8').split('\n').filter((l) => /"level":(40|50|60)/.test(l)).slice(-12).map((l) => l.slice(0, 400));
    void t0;
    return {
      skipped: null, fs: fs.kind, sizeMiB: o.sizeMiB, thresholdMiB: o.thresholdMiB, msToFirstRefusal, storageFullRefusals: refusals(), rejected,
      belowThreshold, noSpaceAtAll, msToResume, msToBuffersDrained, msToModelWrites,
      pointsAcked: sum((r) => r.acked), lost: sum((r) => r.lost), duplicated: sum((r) => r.duplicated), corrupt: sum((r) => r.corrupt),
      checksumsMatch: checks.every((r) => r.checksumCollector === r.checksumStored),
      modelWritesAcked: probe.acknowledgedCount(), modelMissing: probe.missing, unexpectedExits: service.unexpectedExits.length, serviceLogTail,
    };
  } finally {
    probe.stop();
    await service.kill();
    removeBallast(ballast2);
    removeBallast(ballast);
    fs.unmount();
    await rm(workDir, { recursive: true, force: true });
  }
}
