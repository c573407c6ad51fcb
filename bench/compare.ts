// Peers side by side (issue 31 item 5): the same load and the same questions against this
// service and VictoriaMetrics (Debian's `victoria-metrics` package), in one run, on one box.
//   node --import tsx bench/compare.ts [--series 200] [--points 20000] [--repeat 5] [--json]
// Load: --series float64 series of --points points a second apart from the shared industrial
// dataset (every value as a number, as VictoriaMetrics stores them), generated before timing.
// Ingest runs one system at a time (each alone on the cores): ours through two collector
// sessions over gRPC, acknowledged when durable (fsync); VictoriaMetrics through
// /api/v1/import over two connections, then /internal/force_flush (its import answers before
// the points are on disk). Bytes per point: theirs, the data directory's allocated blocks
// after the flush; ours, the pages LMDB's tables hold once every head is sealed (what the
// service reaches by itself when series go idle), beside the allocated blocks as loaded. Queries alternate between the two systems, --repeat times each, medians:
//   wide read   every series' last hour (ours: one raw read per series, 4 in flight;
//               VictoriaMetrics: one /api/v1/export matching every series)
//   raw read    one series, every point (ours: layout=columns JSON; theirs: /api/v1/export)
//   trend       one series over its whole range in hour buckets (ours: stored rollups at 1h;
//               theirs: query_range of min/max/avg_over_time at step 1h)
// Ratios are ours / theirs: below 1 means fewer bytes or less time for us. When the binary is
// not installed the run stops with a message saying how to get it.
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries, numeric } from '../../shared/datasets/industrial.mjs';
import { CollectorClient } from '../src/collector/collector-client.js';
import { SeriesStore } from '../src/storage/series-store.js';
import { ServiceChild, sleep } from '../reliability/crash-loop/service-child.js';
import { startVm, vmMissing, type VmServer } from './victoria-metrics.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const SERIES = opt('series', 200), POINTS = opt('points', 20_000), REPEAT = Math.max(1, opt('repeat', 5));
const JSON_OUT = args.includes('--json');
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(`${s}\n`); };

interface DatasetSeries { name: string; points(): Iterable<[bigint, unknown, number]> }
interface Loaded { name: string; times: BigInt64Array; values: Float64Array }

function load(): Loaded[] {
  return (datasetSeries({ series: SERIES, points: POINTS, seed: 7 }) as DatasetSeries[]).map((s) => {
    const times = new BigInt64Array(POINTS), values = new Float64Array(POINTS);
    let i = 0;
    for (const [t, v] of s.points()) { if (i === POINTS) break; times[i] = t; values[i] = Number(numeric(v) ?? 0); i++; }
    // The dataset has gaps: a series may hold fewer points than asked for.
    return { name: s.name, times: times.subarray(0, i), values: values.subarray(0, i) };
  });
}

function allocatedBytes(dir: string): number {
  return Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) * 1024;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

async function ok(res: Response, what: string): Promise<ArrayBuffer> {
  const body = await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
  return body;
}

// ---------- this service ----------

async function ingestOurs(grpc: string, data: Loaded[]): Promise<{ ms: number; series: string[] }> {
  const sessions = 2, batch = 1_000;
  const ids: string[] = new Array(data.length);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const mine = data.map((d, i) => ({ d, i })).filter(({ i }) => i % sessions === s);
    const c = await CollectorClient.connect({ address: grpc, collectorId: `compare-${s + 1}`, epoch: 1n, streams: mine.map(({ d }) => ({ name: d.name, type: 'float64' })) });
    c.welcome.streams.forEach((w, k) => { ids[mine[k].i] = w.series_id; });
    const outcomes: Array<Promise<unknown>> = [];
    for (let off = 0; off < POINTS; off += batch) {
      for (let k = 0; k < mine.length; k++) {
        const { d } = mine[k];
        const end = Math.min(d.times.length, off + batch);
        if (end <= off) continue;
        outcomes.push(c.send('LIVE', k, 'float64', { times: d.times.subarray(off, end), values: d.values.subarray(off, end), quality: null }).then((o) => { if (!o.ok) throw new Error(`batch rejected: ${o.reason} ${o.detail}`); }));
        while (c.waitingForCredit() > 8) await sleep(1);
      }
    }
    await Promise.all(outcomes);
    c.close();
  }));
  return { ms: performance.now() - t0, series: ids };
}

async function oursWide(url: string, ids: string[], startNs: bigint, endNs: bigint): Promise<number> {
  let next = 0, points = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const body = await ok(await fetch(`${url}/v1/series/${id}/raw?start_ns=${startNs}&end_ns=${endNs}&layout=columns&limit=1000000`), 'wide read');
      points += (JSON.parse(Buffer.from(body).toString('utf8')) as { count: number }).count;
    }
  }));
  return points;
}

async function oursRaw(url: string, id: string, startNs: bigint, endNs: bigint): Promise<number> {
  const body = await ok(await fetch(`${url}/v1/series/${id}/raw?start_ns=${startNs}&end_ns=${endNs}&layout=columns&limit=1000000`), 'raw read');
  return (JSON.parse(Buffer.from(body).toString('utf8')) as { count: number }).count;
}

async function oursTrend(url: string, id: string, startNs: bigint, endNs: bigint): Promise<number> {
  const body = await ok(await fetch(`${url}/v1/series/${id}/rollups?start_ns=${startNs}&end_ns=${endNs}&interval=1h`), 'trend');
  const j = JSON.parse(Buffer.from(body).toString('utf8')) as { buckets?: unknown[]; count?: unknown[] } & Record<string, unknown>;
  return Array.isArray(j.buckets) ? j.buckets.length : Object.keys(j).length;
}

// ---------- VictoriaMetrics ----------

async function ingestVm(url: string, data: Loaded[]): Promise<number> {
  const chunk = 10_000;
  const bodies: string[] = [];
  for (const d of data) {
    for (let off = 0; off < d.times.length; off += chunk) {
      const end = Math.min(d.times.length, off + chunk);
      const ts: number[] = [], vs: number[] = [];
      for (let i = off; i < end; i++) { ts.push(Number(d.times[i] / 1_000_000n)); vs.push(d.values[i]); }
      bodies.push(JSON.stringify({ metric: { __name__: 'plant', series: d.name }, values: vs, timestamps: ts }));
    }
  }
  // Bodies built before timing, as ours are.
  const perRequest = Math.max(1, Math.floor(bodies.length / 64));
  const requests: string[] = [];
  for (let i = 0; i < bodies.length; i += perRequest) requests.push(bodies.slice(i, i + perRequest).join('\n'));
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 2 }, async () => {
    while (next < requests.length) await ok(await fetch(`${url}/api/v1/import`, { method: 'POST', body: requests[next++] }), 'vm import');
  }));
  await ok(await fetch(`${url}/internal/force_flush`), 'vm flush');
  return performance.now() - t0;
}

async function vmExport(url: string, match: string, startMs: number, endMs: number): Promise<number> {
  const body = await ok(await fetch(`${url}/api/v1/export?match[]=${encodeURIComponent(match)}&start=${startMs / 1000}&end=${endMs / 1000}`), 'vm export');
  let points = 0;
  for (const line of Buffer.from(body).toString('utf8').split('\n')) if (line) points += (JSON.parse(line) as { values: number[] }).values.length;
  return points;
}

async function vmTrend(url: string, name: string, startMs: number, endMs: number): Promise<number> {
  const q = `{__name__="plant",series="${name}"}`;
  let buckets = 0;
  for (const f of ['min_over_time', 'max_over_time', 'avg_over_time']) {
    const body = await ok(await fetch(`${url}/api/v1/query_range?query=${encodeURIComponent(`${f}(${q}[1h])`)}&start=${startMs / 1000}&end=${endMs / 1000}&step=3600`), 'vm trend');
    const j = JSON.parse(Buffer.from(body).toString('utf8')) as { data: { result: Array<{ values: unknown[] }> } };
    buckets = j.data.result[0]?.values.length ?? 0;
  }
  return buckets;
}

async function timed(fn: () => Promise<number>): Promise<{ ms: number; n: number }> {
  const t0 = performance.now();
  const n = await fn();
  return { ms: performance.now() - t0, n };
}

async function main(): Promise<void> {
  const missing = vmMissing();
  if (missing !== null) {
    process.stdout.write(`SKIPPED: ${missing}\n`);
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'historian-compare-'));
  const ourData = join(work, 'ours'), vmData = join(work, 'vm');
  await mkdir(ourData); await mkdir(vmData);
  const ours = await ServiceChild.create({ dataDir: ourData, logFile: join(work, 'service.log'), env: { SERVICE_LOG_LEVEL: 'warn', SERVICE_WORKERS: '2' } });
  let vm: VmServer | null = null;
  try {
    log(`generating ${SERIES} series x ${POINTS} points`);
    const data = load();
    const total = data.reduce((a, d) => a + d.times.length, 0);
    await ours.start();
    log('ingest: this service');
    const oi = await ingestOurs(ours.grpcAddress, data);
    const ourBytesAsLoaded = allocatedBytes(join(ourData, 'series'));
    // At rest: the service seals idle heads into compressed chunks in the background; do it
    // now, with the service stopped, and count the pages the tables hold (LMDB keeps its file
    // at its high-water mark; freed pages are reused by later writes).
    await ours.stop();
    const store = SeriesStore.open(join(ourData, 'series'));
    await store.sealHeads(0);
    const ourBytes = (await store.diskUsage()).liveBytes;
    await store.close();
    await ours.start();
    vm = await startVm(vmData);
    log('ingest: VictoriaMetrics');
    const vmMs = await ingestVm(vm.url, data);
    await sleep(2_000); // let its in-memory parts reach disk as the flush promised
    const vmBytes = allocatedBytes(vmData);

    // Series of irregular kinds run further: the wide read's hour ends where every series still has points.
    let first = data[0].times[0], last = data[0].times[data[0].times.length - 1];
    let lastCommon = last;
    for (const d of data) {
      const end = d.times[d.times.length - 1];
      if (d.times[0] < first) first = d.times[0];
      if (end > last) last = end;
      if (end < lastCommon) lastCommon = end;
    }
    const wideStart = lastCommon - 3_600n * 1_000_000_000n, wideEnd = lastCommon + 1n, endNs = last + 1n;
    const ms = (ns: bigint) => Number(ns / 1_000_000n);
    const one = data[Math.floor(SERIES / 2)], oneId = oi.series[Math.floor(SERIES / 2)];
    const queries: Array<{ name: string; ours: () => Promise<number>; vm: () => Promise<number> }> = [
      { name: 'wide read (every series, last hour)', ours: () => oursWide(ours.url, oi.series, wideStart, wideEnd), vm: () => vmExport(vm!.url, '{__name__="plant"}', ms(wideStart), ms(wideEnd) - 1) },
      { name: `raw read (one series, ${one.times.length} points)`, ours: () => oursRaw(ours.url, oneId, first, endNs), vm: () => vmExport(vm!.url, `{__name__="plant",series="${one.name}"}`, ms(first), ms(endNs)) },
      { name: 'trend (one series, whole range, 1 h buckets)', ours: () => oursTrend(ours.url, oneId, first, endNs), vm: () => vmTrend(vm!.url, one.name, ms(first), ms(endNs)) },
    ];
    const results: Array<{ name: string; oursMs: number; vmMs: number; oursN: number; vmN: number }> = [];
    for (const q of queries) {
      await q.ours(); await q.vm(); // one unmeasured run each
      const a: number[] = [], b: number[] = [];
      let oursN = 0, vmN = 0;
      for (let r = 0; r < REPEAT; r++) {
        const x = await timed(q.ours); a.push(x.ms); oursN = x.n;
        const y = await timed(q.vm); b.push(y.ms); vmN = y.n;
      }
      results.push({ name: q.name, oursMs: median(a), vmMs: median(b), oursN, vmN });
    }
    const out = {
      series: SERIES, points_per_series: POINTS,
      ingest_points_per_s_ours: Math.round(total / (oi.ms / 1000)), ingest_points_per_s_vm: Math.round(total / (vmMs / 1000)),
      ingest_ratio: +(total / (oi.ms / 1000) / (total / (vmMs / 1000))).toFixed(3),
      bytes_per_point_ours_as_loaded: +(ourBytesAsLoaded / total).toFixed(2), bytes_per_point_ours: +(ourBytes / total).toFixed(2), bytes_per_point_vm: +(vmBytes / total).toFixed(2), bytes_ratio: +(ourBytes / vmBytes).toFixed(3),
      queries: results.map((r) => ({ name: r.name, ours_ms: +r.oursMs.toFixed(2), vm_ms: +r.vmMs.toFixed(2), ratio: +(r.oursMs / r.vmMs).toFixed(3), ours_points: r.oursN, vm_points: r.vmN })),
    };
    if (JSON_OUT) { process.stdout.write(`${JSON.stringify(out)}\n`); return; }
    const rows: string[][] = [
      ['figure', 'this service', 'VictoriaMetrics', 'ratio (ours/theirs)'],
      ['ingest, points/s (ours: acked durable)', String(out.ingest_points_per_s_ours), String(out.ingest_points_per_s_vm), `${out.ingest_ratio} (higher is better)`],
      ['bytes per point on disk (ours: sealed, live pages)', `${out.bytes_per_point_ours} (${out.bytes_per_point_ours_as_loaded} as loaded)`, String(out.bytes_per_point_vm), `${out.bytes_ratio} (lower is better)`],
      ...out.queries.map((q) => [`${q.name}, ms`, `${q.ours_ms} (${q.ours_points})`, `${q.vm_ms} (${q.vm_points})`, `${q.ratio} (lower is better)`]),
    ];
    const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    process.stdout.write(`peers side by side: ${SERIES} series x ${POINTS} points, medians of ${REPEAT}, queries interleaved\n`);
    for (const r of rows) process.stdout.write(`  ${r.map((c, i) => c.padEnd(w[i])).join('  ')}\n`);
  } finally {
    await vm?.stop();
    await ours.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`compare: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
