// Live-update benchmark: a real server process (node --import tsx src/main.ts), collector
// sessions over loopback gRPC and live subscribers (half SSE, half WebSocket) in this
// process, all on this machine.
//   node --import tsx bench/live.ts [--subscribers 1000] [--series 2000] [--watched 1000]
//     [--points 6000000] [--batch 1000] [--sessions 2] [--rounds 2] [--settle-ms 8000] [--json] [--profile DIR]
// The model: `watched` attributes (10 per pump asset) each bound to one of the first
// `watched` series; the collectors write `series` streams round-robin, so about
// watched/series of the points are of a subscribed attribute. Subscriber i follows
// attribute i mod watched (select attribute_ids). The watched share of the ingested points
// is what costs: the defaults forward half of them (every series at ~250 points/s); a plant
// where dashboards watch a tenth is `--series 10000 --batch 500 --points 5000000`.
// The subscribers run in a child process of their own (their receiving must not stall the
// collectors' event loop); both stamp wall-clock ms. They read each event's entries from
// its bytes (bench/live-receivers.ts), as lean as a client can be: they share the cores.
// Each round runs the same ingest twice, as fast as credit allows, with the subscribers
// connected throughout: "without" writes a second set of `series` streams that nobody
// watches, "with" the watched set (alternated, so drift of the shared machine hits both;
// two sets, because runs "without" after the first "with" used to write the watched series
// to connected subscribers too: only round 1 measured what it said).
// Figures: ingest points/s without and with subscribers (and their ratio), the service's
// CPU per run split by thread (main, ingest worker, the rest: /proc/<pid>/task), and the
// latency from a batch's ack at the collector to its points' receipt by each subscriber
// of that series (receipt − ack; negative when the event beat the ack, which the commit
// feed allows: it is posted when the group is durable, before the ack is sent).
// Inputs are generated from a fixed seed before timing. Needs DATABASE_URL (a database is
// created and dropped) or runs on embedded PGlite.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
// @ts-expect-error: a plain .mjs script without types
import { SERVICE_ENV } from '../scripts/start.mjs';
import { CollectorClient, type OutgoingColumns } from '../src/collector/collector-client.js';
import { closeReceiver, sseReceiver, wsReceiver } from './live-receivers.js';
import { mulberry32 } from './seeded-random.js';
import { cpuSeconds, threadCpuSeconds } from './process-figures.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const SUBSCRIBERS = opt('subscribers', 1000), SERIES = opt('series', 2000), WATCHED = Math.min(opt('watched', 1000), opt('series', 2000));
const POINTS = opt('points', 6_000_000), BATCH = opt('batch', 1000), SESSIONS = opt('sessions', 2), ROUNDS = opt('rounds', 2);
const JSON_OUT = args.includes('--json');
/** --profile DIR: the server writes CPU profiles of its threads there (node --cpu-prof) when it exits, the subscribers' process in DIR/subscribers. */
const PROFILE_DIR = (() => { const i = args.indexOf('--profile'); return i >= 0 ? args[i + 1] : null; })();
const PER_ASSET = 10;
/**
 * --settle-ms: the pause before each timed run. Each run adds to the engine's open heads,
 * and later runs cost more (bigger heads, more of them reloaded into the writer's head
 * cache): with no pause and no subscribers, the runs "with" read 0.61-0.71x the runs
 * "without" before them. The pause lets the quiet seal (SERVICE_INGEST_QUIET_SEAL_MS, 3 s
 * by default) seal every head, so each run starts from the same storage state.
 */
const SETTLE_MS = opt('settle-ms', 8000);
const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

const freePort = () => new Promise<number>((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); }); });
const pct = (xs: number[], p: number) => { if (!xs.length) return NaN; const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const r1 = (x: number) => Math.round(x * 10) / 10;
/** The 1-minute load average (the box is shared: figures are read beside it). */
const loadAverage = (): number => { try { return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]); } catch { return NaN; } };
const r2 = (x: number) => Math.round(x * 100) / 100;
interface ThreadCpu { main: number; ingest: number; other: number }
/** CPU seconds per thread between two readings (threads that ended are left out). */
function threadDelta(a: Map<number, number>, b: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [tid, s] of b) out.set(tid, s - (a.get(tid) ?? 0));
  return out;
}
function split(d: Map<number, number>, mainTid: number, ingestTid: number): ThreadCpu {
  let other = 0;
  for (const [tid, s] of d) if (tid !== mainTid && tid !== ingestTid) other += s;
  return { main: d.get(mainTid) ?? 0, ingest: d.get(ingestTid) ?? 0, other };
}
const spread = (xs: number[]) => ({ p50: r1(pct(xs, 50)), p95: r1(pct(xs, 95)), p99: r1(pct(xs, 99)), max: r1(pct(xs, 100)), samples: xs.length });

/** Batches of BATCH points per stream: 1 ms cadence from startNs, a random walk. */
function generate(streams: number, batchesPerStream: number, startNs: bigint): OutgoingColumns[][] {
  const r = mulberry32(42);
  return Array.from({ length: streams }, () => {
    let level = 100 * r();
    return Array.from({ length: batchesPerStream }, (_, b) => {
      const times = new BigInt64Array(BATCH), values = new Float64Array(BATCH);
      for (let i = 0; i < BATCH; i++) { times[i] = startNs + BigInt(b * BATCH + i) * 1_000_000n; level += (r() - 0.5) * 0.1; values[i] = Math.round(level * 100) / 100; }
      return { times, values, quality: null };
    });
  });
}

async function http(base: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${base}${path}`, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function pool<T>(items: T[], n: number, fn: (x: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (next < items.length) { const i = next++; await fn(items[i], i); } }));
}

/** When each batch of a watched series was acknowledged: `${series}:${first ts}` → ms. */
const ackAt = new Map<string, number>();
/** Wall-clock ms with sub-ms resolution, comparable between this process and the subscribers' one. */
const absMs = () => performance.timeOrigin + performance.now();
/** When subscribers received each batch's points (the same key), per transport. */
const receipts = { sse: new Map<string, number[]>(), ws: new Map<string, number[]>() };
/** Notes one entry's receipt (its series and first time) by a subscriber of the transport. */
const receipt = (kind: 'sse' | 'ws') => (key: string, receivedMs: number): void => {
  const list = receipts[kind].get(key);
  if (list) list.push(receivedMs); else receipts[kind].set(key, [receivedMs]);
};
/** receipt − ack for every receipt of an acknowledged batch (a receipt may come first: the feed is posted before the ack). */
function latencies(kind: 'sse' | 'ws'): number[] {
  const out: number[] = [];
  for (const [key, times] of receipts[kind]) {
    const at = ackAt.get(key);
    if (at !== undefined) for (const t of times) out.push(t - at);
  }
  return out;
}

/** Writes `data` to one set of streams: each session's first half (watched), or with `unwatched` its second half (nobody's). */
async function ingest(clients: CollectorClient[], data: OutgoingColumns[][], seriesIds: string[], perSession: number, watchedIds: Set<string>, unwatched = false): Promise<{ points: number; secs: number }> {
  const t0 = performance.now();
  let acked = 0;
  await Promise.all(clients.map(async (c, ci) => {
    const all: Array<Promise<void>> = [];
    const mine = data.slice(ci * perSession, (ci + 1) * perSession);
    const offset = unwatched ? c.welcome.streams.length / 2 : 0;
    for (let b = 0; b < mine[0].length; b++) {
      for (let s = 0; s < mine.length; s++) {
        const cols = mine[s][b];
        const sid = seriesIds[ci * perSession + s];
        const key = watchedIds.has(sid) ? `${sid}:${cols.times[0]}` : null;
        all.push(c.send('LIVE', offset + s, 'float64', cols).then((o) => {
          if (!o.ok) throw new Error(`rejected: ${o.reason} ${o.detail}`);
          acked += BATCH - o.refused;
          if (key) ackAt.set(key, absMs());
        }));
        if (c.waitingForCredit() > 16) await new Promise((r) => setImmediate(r));
      }
    }
    await Promise.all(all);
  }));
  return { points: acked, secs: (performance.now() - t0) / 1000 };
}

/** Opens n subscriptions (even: SSE, odd: WebSocket), subscriber i on attribute i mod the list. */
async function openSubscribers(httpPort: number, attributes: string[], n: number): Promise<Array<{ socket: Socket; ws: boolean }>> {
  const subs: Array<{ socket: Socket; ws: boolean }> = [];
  await pool(Array.from({ length: n }, (_, i) => i), 50, async (i) => {
    const body = `{"resolve":{"select":{"kind":"attribute_ids","content":["${attributes[i % attributes.length]}"]},"scope":{}}}`;
    if (i % 2 === 0) subs.push({ socket: await sseReceiver(httpPort, body, receipt('sse')), ws: false });
    else subs.push({ socket: await wsReceiver(httpPort, `{"type":"subscribe","id":"s",${body.slice(1, -1)}}`, receipt('ws')), ws: true });
  });
  return subs;
}

/**
 * The subscribers run in a child process (this file with --role subscribers), so that
 * receiving does not stall the collectors' event loop, nor theirs the receipts.
 */
function subscriberProcess(): { ask(m: Record<string, unknown>): Promise<unknown>; stop(): void } {
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILE_DIR, 'subscribers')] : [];
  // the service's malloc settings (bench/service-flags.ts put them in this process's environment) are not the clients'
  const env = { ...process.env };
  for (const [k, v] of Object.entries(SERVICE_ENV as Record<string, string>)) if (env[k] === v) delete env[k];
  const proc = fork(new URL(import.meta.url).pathname, ['--role', 'subscribers'], { execArgv: [...profile, '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
  let waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void } | null = null;
  proc.on('message', (m) => { const w = waiting; waiting = null; w?.resolve(m); });
  proc.on('exit', (code) => { const w = waiting; waiting = null; w?.reject(new Error(`the subscriber process exited with code ${code}`)); });
  return {
    ask: (m) => new Promise((resolve, reject) => {
      waiting = { resolve, reject };
      proc.send(m, (e) => { if (e) reject(e); });
    }),
    stop: () => { proc.kill('SIGTERM'); },
  };
}

async function subscriberRole(): Promise<void> {
  let subs: Array<{ socket: Socket; ws: boolean }> = [];
  process.on('message', (m: { cmd: string; base?: string; httpPort?: number; attributes?: string[]; n?: number }) => {
    (async () => {
      if (m.cmd === 'open') { subs = await openSubscribers(m.httpPort as number, m.attributes as string[], m.n as number); return { opened: subs.length }; }
      if (m.cmd === 'clear') { receipts.sse.clear(); receipts.ws.clear(); return { ok: true }; }
      if (m.cmd === 'cpu') { const u = process.cpuUsage(); return { cpu_s: (u.user + u.system) / 1e6 }; }
      return { sse: [...receipts.sse], ws: [...receipts.ws] };
    })().then((r) => process.send?.(r), (e: unknown) => { console.error(e); process.exit(1); });
  });
  process.on('SIGTERM', () => { for (const s of subs) closeReceiver(s.socket, s.ws); process.exit(0); });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-bench-live-'));
  let dbName: string | null = null;
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
    dbName = `bench_live_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${dbName}`); await admin.end();
    const u = new URL(process.env.DATABASE_URL); u.pathname = `/${dbName}`; databaseUrl = u.toString();
  }
  const grpcPort = await freePort(), httpPort = await freePort();
  const server: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : []), '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(httpPort), SERVICE_GRPC_PORT: String(grpcPort), SERVICE_DATA_DIR: dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', SERVICE_WORKERS: '1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${httpPort}`;
  const clients: CollectorClient[] = [];
  const child = subscriberProcess();
  try {
    // Collectors first (the service is up once a session opens), then the model.
    const perSession = Math.ceil(SERIES / SESSIONS);
    const address = `127.0.0.1:${grpcPort}`;
    for (let i = 0; i < SESSIONS; i++) {
      const count = Math.min(perSession, SERIES - i * perSession);
      // the watched set first, then as many streams nobody watches (runs "without")
      const names = [...Array.from({ length: count }, (_, k) => `s${i * perSession + k}`), ...Array.from({ length: count }, (_, k) => `u${i * perSession + k}`)];
      const end = Date.now() + 120_000;
      for (;;) {
        try { clients.push(await CollectorClient.connect({ address, collectorId: `bench-${i}`, epoch: 1n, streams: names.map((name) => ({ name, type: 'float64' as const })) })); break; } catch (e) { if (Date.now() > end) throw e; await new Promise((r) => setTimeout(r, 250)); }
      }
    }
    // The sessions idle while the model is built and the subscribers connect: keep them open.
    const beat = setInterval(() => { for (const c of clients) c.heartbeat(); }, 10_000);
    beat.unref();
    const seriesIds = clients.flatMap((c) => c.welcome.streams.slice(0, c.welcome.streams.length / 2).map((s) => s.series_id));
    const unwatchedIds = clients.flatMap((c) => c.welcome.streams.slice(c.welcome.streams.length / 2).map((s) => s.series_id));
    const def = (name: string) => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });
    const tpl = await http(base, '/v1/model/templates', { name: 'Pump', attributes: Array.from({ length: PER_ASSET }, (_, i) => def(`F${i}`)) }) as { template_id: string };
    const plant = await http(base, '/v1/model/assets', { name: 'Plant' }) as { asset_id: string };
    await pool(Array.from({ length: Math.ceil(WATCHED / PER_ASSET) }, (_, i) => i), 4, async (i) => { await http(base, '/v1/model/assets', { name: `P${String(i).padStart(4, '0')}`, parent: plant.asset_id, template_id: tpl.template_id }); });
    const attrs = (await http(base, '/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } }) as { results: Array<{ attribute_id: string; path: string }> }).results
      .sort((a, b) => (a.path < b.path ? -1 : 1)).slice(0, WATCHED);
    const from = `${(BigInt(Date.now()) - 86_400_000n) * 1_000_000n}`;
    await pool(attrs, 4, async (a, i) => {
      const res = await fetch(`${base}/v1/model/bindings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"attribute_id":"${a.attribute_id}","series_id":"${seriesIds[i]}","from_ns":${from}}` });
      if (res.status >= 300) throw new Error(`binding: ${res.status} ${await res.text()}`);
    });
    const watchedIds = new Set(seriesIds.slice(0, attrs.length));

    const batchesPerStream = Math.max(1, Math.round(POINTS / (SERIES * BATCH)));
    const startNs = (BigInt(Date.now()) - 3_600_000n) * 1_000_000n;
    // Every run writes later times than the one before (each round: without, then with).
    const runs = Array.from({ length: ROUNDS * 2 }, (_, r) => generate(SERIES, batchesPerStream, startNs + BigInt(r * batchesPerStream * BATCH) * 1_000_000n + BigInt(r) * 1_000n));
    // warm-up: one small run (compiles the server's write path and the feed)
    await ingest(clients, generate(SERIES, 1, startNs - 3_600_000_000_000n), seriesIds, perSession, watchedIds);
    await ingest(clients, generate(SERIES, 1, startNs - 3_600_000_000_000n), unwatchedIds, perSession, new Set(), true);
    const t0 = performance.now();
    await child.ask({ cmd: 'open', base, httpPort, attributes: attrs.map((a) => a.attribute_id), n: SUBSCRIBERS });
    const subsOpenMs = performance.now() - t0;

    const without: number[] = [], withSubs: number[] = [];
    const loads: number[] = [loadAverage()];
    /** CPU seconds of the service process during each run, and of the subscribers' process during the runs with them. */
    const serverCpu = { without: [] as number[], with: [] as number[] }, subscriberCpu: number[] = [];
    /**
     * CPU seconds of the service's threads during each run: the main thread (HTTP, the
     * hub's fan-out, socket writes), the ingest worker (the thread busiest in the first run
     * without subscribers: gRPC, the write path, the commit feed) and all the others (seal
     * and read workers, the model's thread, GC helpers).
     */
    const threads = { without: [] as ThreadCpu[], with: [] as ThreadCpu[] };
    let ingestTid = 0;
    const pid = server.pid as number;
    for (let round = 0; round < ROUNDS; round++) {
      await settle();
      let c0 = await cpuSeconds(pid);
      let t0 = await threadCpuSeconds(pid);
      const a = await ingest(clients, runs[round * 2], unwatchedIds, perSession, new Set(), true);
      serverCpu.without.push(await cpuSeconds(pid) - c0);
      const d = threadDelta(t0, await threadCpuSeconds(pid));
      if (ingestTid === 0) for (const [tid, s] of d) if (tid !== pid && s > (d.get(ingestTid) ?? 0)) ingestTid = tid;
      threads.without.push(split(d, pid, ingestTid));
      without.push(a.points / a.secs);
      await child.ask({ cmd: 'clear' }); ackAt.clear(); // keep the last round's
      await settle();
      c0 = await cpuSeconds(pid);
      t0 = await threadCpuSeconds(pid);
      const s0 = (await child.ask({ cmd: 'cpu' }) as { cpu_s: number }).cpu_s;
      const b = await ingest(clients, runs[round * 2 + 1], seriesIds, perSession, watchedIds);
      serverCpu.with.push(await cpuSeconds(pid) - c0);
      threads.with.push(split(threadDelta(t0, await threadCpuSeconds(pid)), pid, ingestTid));
      subscriberCpu.push((await child.ask({ cmd: 'cpu' }) as { cpu_s: number }).cpu_s - s0);
      withSubs.push(b.points / b.secs);
      await new Promise((r) => setTimeout(r, 500)); // late receipts
      loads.push(loadAverage());
    }
    const got = await child.ask({ cmd: 'report' }) as { sse: Array<[string, number[]]>; ws: Array<[string, number[]]> };
    for (const [k, v] of got.sse) receipts.sse.set(k, v);
    for (const [k, v] of got.ws) receipts.ws.set(k, v);
    const sum = (xs: number[]) => xs.reduce((p, x) => p + x, 0);
    const avg = (xs: number[]) => xs.reduce((p, x) => p + x, 0) / xs.length;
    const lat = { sse: latencies('sse'), ws: latencies('ws') };
    const all = [...lat.sse, ...lat.ws];
    const all_ = spread(all), sse = spread(lat.sse), ws = spread(lat.ws);
    const out = {
      subscribers: SUBSCRIBERS, series: SERIES, watched_series: attrs.length, points_per_run: SERIES * batchesPerStream * BATCH, batch: BATCH, rounds: ROUNDS,
      ingest_points_per_s_without: Math.round(avg(without)), ingest_points_per_s_with: Math.round(avg(withSubs)),
      ingest_ratio_with_over_without: Math.round((avg(withSubs) / avg(without)) * 1000) / 1000,
      ingest_runs_without: without.map(Math.round), ingest_runs_with: withSubs.map(Math.round),
      subscribers_open_ms: Math.round(subsOpenMs),
      latency_samples: all.length,
      latency_ms_p50: all_.p50, latency_ms_p95: all_.p95, latency_ms_p99: all_.p99, latency_ms_max: all_.max,
      sse_latency_ms_p50: sse.p50, sse_latency_ms_p95: sse.p95, sse_latency_ms_p99: sse.p99, sse_latency_ms_max: sse.max,
      ws_latency_ms_p50: ws.p50, ws_latency_ms_p95: ws.p95, ws_latency_ms_p99: ws.p99, ws_latency_ms_max: ws.max,
      load_average_1m: loads,
      service_cpu_s_without: serverCpu.without.map(r1), service_cpu_s_with: serverCpu.with.map(r1), subscribers_cpu_s: subscriberCpu.map(r1),
      service_cpu_us_per_point_without: r1(sum(serverCpu.without) * 1e6 / (without.length * SERIES * batchesPerStream * BATCH)),
      service_cpu_us_per_point_with: r1(sum(serverCpu.with) * 1e6 / (withSubs.length * SERIES * batchesPerStream * BATCH)),
      main_thread_cpu_s_without: threads.without.map((x) => r2(x.main)), main_thread_cpu_s_with: threads.with.map((x) => r2(x.main)),
      ingest_thread_cpu_s_without: threads.without.map((x) => r2(x.ingest)), ingest_thread_cpu_s_with: threads.with.map((x) => r2(x.ingest)),
      other_threads_cpu_s_without: threads.without.map((x) => r2(x.other)), other_threads_cpu_s_with: threads.with.map((x) => r2(x.other)),
    };
    if (JSON_OUT) console.log(JSON.stringify(out));
    else {
      console.log(`live updates: ${SUBSCRIBERS} subscribers (half SSE, half WebSocket) on ${attrs.length} of ${SERIES} series; ${out.points_per_run} points a run, batches of ${BATCH}, ${ROUNDS} rounds`);
      console.log('| figure | value |\n|---|---|');
      console.log(`| ingest without subscribers | ${out.ingest_points_per_s_without.toLocaleString('en')} points/s (${out.ingest_runs_without.join(', ')}) |`);
      console.log(`| ingest with subscribers | ${out.ingest_points_per_s_with.toLocaleString('en')} points/s (${out.ingest_runs_with.join(', ')}) |`);
      console.log(`| ratio with / without | ${out.ingest_ratio_with_over_without} |`);
      const row = (name: string, x: ReturnType<typeof spread>) => `| ack to receipt, ${name} (${x.samples} samples) | p50 ${x.p50} ms, p95 ${x.p95} ms, p99 ${x.p99} ms, max ${x.max} ms |`;
      console.log(row('all', all_));
      console.log(row('SSE', sse));
      console.log(row('WebSocket', ws));
      console.log(`| opening ${SUBSCRIBERS} subscriptions | ${out.subscribers_open_ms} ms |`);
      console.log(`| service CPU per ingested point, without / with subscribers | ${out.service_cpu_us_per_point_without} / ${out.service_cpu_us_per_point_with} µs (runs: ${out.service_cpu_s_without.join(', ')} / ${out.service_cpu_s_with.join(', ')} s) |`);
      console.log(`| service threads' CPU per run, without / with: main | ${out.main_thread_cpu_s_without.join(', ')} / ${out.main_thread_cpu_s_with.join(', ')} s |`);
      console.log(`| ingest worker | ${out.ingest_thread_cpu_s_without.join(', ')} / ${out.ingest_thread_cpu_s_with.join(', ')} s |`);
      console.log(`| other threads | ${out.other_threads_cpu_s_without.join(', ')} / ${out.other_threads_cpu_s_with.join(', ')} s |`);
      console.log(`| subscribers' process CPU per run | ${out.subscribers_cpu_s.join(', ')} s |`);
      console.log(`| load average (1 min) at the start and after each round | ${loads.join(', ')} |`);
    }
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    // Sends still in flight fail once their session closes: nobody waits for them any more.
    process.on('unhandledRejection', () => undefined);
    child.stop();
    for (const c of clients) c.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    await rm(dataDir, { recursive: true, force: true });
    if (dbName && process.env.DATABASE_URL) {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.end();
    }
  }
}

if (args.includes('--role')) void subscriberRole();
else main().catch((e: unknown) => { console.error(e); process.exit(1); });
