// Service-level storage figures on the shared industrial dataset, through the running
// service: the dataset goes in through the write path (series created in the model and
// LMDB), then a second process reads over loopback HTTP while this process watches its
// own event loop. Raw reads: every fleet series whole (one request each, over --connections connections),
// and the big series in pages of 1M points (one time slice per connection, each paged by cursor), in JSON and
// msgpack (rows), and both in the columnar layout (layout=columns); points are counted by the client in the bodies.
// Each fleet read kind runs once unmeasured before its measured run (JIT of that code path for all
// five value types, the workers' buffers): the figures are a running service's steady state, not its first minute.
// raw_one_point_* is a stream of 1-point reads: the fixed cost of a request (service CPU per request). The *_client_cpu_share figures
// are the client's own CPU (cores busy) while reading: on 2 shared cores it competes with
// the service, so it is part of the ceiling.
// http_thread_gc_* are the HTTP thread's own garbage-collection pauses during the reads (count,
// total, the longest with its kind and phase), next to the event-loop stalls they are part of;
// http_thread_heap_mb_after_load is its heap after the load (writes run on this thread here,
// in the ingest worker in the service), http_thread_heap_mb_at_reads after a full collection
// of that, when the reads start. event_loop_max_stall_ms_probe_quiet is
// the longest event-loop stall during which the idle probe process did not stall (see below).
// Each measured read kind runs --repeat times and reports its median run (a shared 2-core box
// moved single runs by +-30%), with every run's rate in *_runs_m_points_per_s.
//   node --v8-pool-size=2 --initial-old-space-size=128 --import tsx bench/storage.ts [--series 1000] [--points 10000] [--big-points 10000000] [--connections 4]
//        [--repeat 3] [--client-nice 0] [--json]
// (npm run bench:storage; the flags are the ones `npm start` gives the service.)
// Engine-only figures (write path, bytes/point, render without HTTP) are in bench/storage-engine.ts.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { closeSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import pg from 'pg';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import type { ValueType } from '../src/storage/encoding/chunk-types.js';
import type { PointBatch } from '../src/storage/series-store.js';

interface DatasetSeries { name: string; type: ValueType; points(): Iterable<[bigint, unknown, number]> }
interface Columns { id: string; times: BigInt64Array; values: PointBatch['values']; quality: Uint32Array }

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : dflt; };
const SERIES = opt('series', 1000), POINTS = opt('points', 10_000), BIG = opt('big-points', 10_000_000), CONNECTIONS = opt('connections', 4);
const REPEAT = Math.max(1, opt('repeat', 3));
// The client's nice value (default 0). At 0 on these 2 cores it outweighs each read worker
// (nice 10) ninefold; 10 was measured and not kept (decisions.md, "bench:storage: the client's
// nice value is an option").
const CLIENT_NICE = opt('client-nice', 0);
const JSON_OUT = args.includes('--json');
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';

function columnsOf(id: string, s: DatasetSeries, n: number): Columns {
  const times = new BigInt64Array(n), quality = new Uint32Array(n);
  const f64 = s.type === 'float64' ? new Float64Array(n) : null, i64 = s.type === 'int64' ? new BigInt64Array(n) : null;
  const u8 = s.type === 'boolean' ? new Uint8Array(n) : null, ord = s.type === 'enum' ? new Int32Array(n) : null;
  const str: string[] | null = s.type === 'string' ? [] : null;
  let k = 0;
  for (const [ts, v, q] of s.points()) {
    if (k === n) break;
    times[k] = ts; quality[k] = q;
    if (f64) f64[k] = v as number; else if (i64) i64[k] = BigInt(v as number); else if (u8) u8[k] = v ? 1 : 0;
    else if (ord) ord[k] = (v as { ordinal: number }).ordinal; else str!.push(v as string);
    k++;
  }
  const values = f64 ? f64.subarray(0, k) : i64 ? i64.subarray(0, k) : u8 ? u8.subarray(0, k) : ord ? ord.subarray(0, k) : str!;
  return { id, times: times.subarray(0, k), quality: quality.subarray(0, k), values };
}

const slice = (c: Columns, a: number, b: number): PointBatch => ({
  series: c.id, times: c.times.subarray(a, b), quality: c.quality.subarray(a, b),
  values: Array.isArray(c.values) ? c.values.slice(a, b) : (c.values as Float64Array).subarray(a, b),
});

async function main() {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-storage-http-'));
  // With DATABASE_URL the model lives in a fresh PostgreSQL database (dropped at the end),
  // as in production; unset, in embedded PGlite, on a thread of its own (src/model/pglite-thread.ts).
  const model = await benchDatabase();
  const config = loadConfig({ SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled', ...(model ? { DATABASE_URL: model.url } : {}) });
  const svc = await startService(config, pino({ level: 'silent' }));
  const parts = svc.context.parts;
  const who = { principal: 'bench' };
  // the idle probe, stopped in `finally` too: a failed client run left it running for good
  let floorProbe: ReturnType<typeof execFileText> | null = null;
  const out: Record<string, number | string> = { series: SERIES, points_per_series: POINTS, big_series_points: BIG, workers: config.workers, repeat: REPEAT, client_nice: CLIENT_NICE, model: model ? 'postgresql' : 'pglite' };
  try {
    log(`generating ${SERIES} x ${POINTS} points and one series of ${BIG} ...`);
    const list = (datasetSeries({ series: SERIES, points: POINTS }) as DatasetSeries[]);
    const cols: Columns[] = [];
    for (const s of list) {
      const r = await parts.series.create({ sourceName: s.name, valueType: s.type, ...(s.type === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2, 3, 4, 5] } } : {}) }, who);
      cols.push(columnsOf(r.id, s, POINTS));
    }
    const bigSource = (datasetSeries({ series: 1, points: BIG }) as DatasetSeries[])[0];
    const big = await parts.series.create({ sourceName: 'bench/big', valueType: bigSource.type }, who);
    let bigCols: Columns | null = columnsOf(big.id, bigSource, BIG);

    log('writing through the write path (durable group commits) ...');
    const SLICE = 1000;
    let written = 0;
    const t0 = performance.now();
    for (let a = 0; a < POINTS; a += SLICE) {
      const r = await parts.storage.write(cols.map((c) => slice(c, a, Math.min(POINTS, a + SLICE))), who);
      written += r.accepted;
    }
    let writeMs = performance.now() - t0;
    // The fleet alone on disk (sealed, live pages): the env-file figure below mixes it with the big series.
    await parts.storage.sealHeads(0);
    const fleetDisk = await parts.storage.diskUsage();
    out.fleet_bytes_per_point_live = +(fleetDisk.liveBytes / written).toFixed(3);
    const t1 = performance.now();
    for (let a = 0; a < bigCols.times.length; a += 100_000) {
      const r = await parts.storage.write([slice(bigCols, a, Math.min(bigCols.times.length, a + 100_000))], who);
      written += r.accepted;
    }
    writeMs += performance.now() - t1;
    const writeS = writeMs / 1000;
    out.write_points_per_s = Math.round(written / writeS);
    await parts.storage.sealHeads(0);
    const envBytes = (await stat(join(dataDir, 'series', 'data.mdb'))).size;
    out.bytes_per_point_env_file = +(envBytes / written).toFixed(3);
    out.bytes_per_point_live = +((await parts.storage.diskUsage()).liveBytes / written).toFixed(3);

    log('decode throughput per worker ...');
    const decodes = await Promise.all([0, 1].slice(0, config.workers).map(() => parts.readPool.run('decode', { series: big.id, repeat: 5 })));
    const results = decodes.map((d) => { const r = JSON.parse(Buffer.from(d.bytes).toString()) as { points: number; seconds: number; cpu_seconds?: number | null }; d.release?.(); return r; });
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    out.decode_points_per_s_per_worker = Math.round(mean(results.map((r) => r.points / r.seconds)));
    // the same decode per second of the worker thread's own CPU (wall time includes waiting for a core)
    if (results.every((r) => typeof r.cpu_seconds === 'number' && r.cpu_seconds > 0)) out.decode_points_per_cpu_s_per_worker = Math.round(mean(results.map((r) => r.points / r.cpu_seconds!)));

    log('HTTP reads from a second process ...');
    let fleetStart = cols[0].times[0], fleetEnd = cols[0].times[0];
    for (const c of cols) {
      if (c.times.length === 0) continue;
      if (c.times[0] < fleetStart) fleetStart = c.times[0];
      if (c.times[c.times.length - 1] > fleetEnd) fleetEnd = c.times[c.times.length - 1];
    }
    const plan = {
      url: `http://127.0.0.1:${svc.http.port}`,
      fleet: cols.map((c) => c.id),
      startNs: String(fleetStart), endNs: String(fleetEnd + 1n),
      bigSeries: big.id, bigStartNs: String(bigCols.times[0]), bigEndNs: String(bigCols.times[bigCols.times.length - 1] + 1n),
      pageLimit: 1_000_000, renders: 200, connections: CONNECTIONS, repeat: REPEAT,
      rollupSeries: cols.filter((_, i) => list[i].type === 'float64').slice(0, 50).map((c) => c.id),
    };
    // The dataset stays out of the read phases: this process is the service, and a heap
    // holding 20M generated points (the text series' strings, the columns' objects) made
    // its major GCs 10-18 ms pauses of the HTTP thread (profiled) that a service on its
    // own does not have. Only the counts are kept, for the checks below.
    const fleetPoints = cols.reduce((a, c) => a + c.times.length, 0);
    const bigPoints = bigCols.times.length;
    cols.length = 0;
    bigCols = null;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    // The HTTP thread's garbage-collection pauses (this process's own heap; the workers have
    // theirs), in wall time: a pause whose helpers or thread wait for a core lasts that long.
    const gcPauses: number[] = [];
    let gcLongest = { ms: 0, kind: 0, at: 0 };
    const gcWatch = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        gcPauses.push(e.duration);
        if (e.duration > gcLongest.ms) gcLongest = { ms: e.duration, kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0, at: performance.timeOrigin + e.startTime };
      }
    });
    // The load above ran the write path on this thread; in the service it runs in the ingest
    // worker and leaves no garbage on the HTTP thread. Collect what the load left before the
    // reads are measured, so that a full collection of it is not charged to a read (with
    // 16 KiB chunks, one of 117 ms landed in the render phase of one run in four).
    out.http_thread_heap_mb_after_load = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    out.http_thread_heap_mb_at_reads = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
    gcWatch.observe({ entryTypes: ['gc'] });
    // The service's CPU (HTTP thread + read workers) sampled every 20 ms, to charge each
    // raw phase of the client with the service CPU it used: on 2 cores shared with other
    // work, wall-clock rates move with the machine's load, CPU per point much less.
    const cpuSamples: Array<[number, number]> = [];
    const sampleCpu = () => { const c = process.cpuUsage(); cpuSamples.push([performance.timeOrigin + performance.now(), c.user + c.system]); };
    sampleCpu();
    const sampler = setInterval(sampleCpu, 20);
    // A bare process that only watches its own event loop meanwhile: the delay the machine
    // itself imposes (scheduling on shared cores), next to which the service's is judged.
    floorProbe = execFileText(process.execPath, ['-e', LOOP_PROBE]);
    const clientArgv = [process.execPath, '--import', 'tsx', new URL('./storage-client.ts', import.meta.url).pathname, JSON.stringify(plan)];
    // through nice(1), so that every thread of the client (V8's GC helpers too) has the value
    const clientRun = CLIENT_NICE === 0 ? execFileText(clientArgv[0], clientArgv.slice(1)) : execFileText('nice', ['-n', String(CLIENT_NICE), ...clientArgv]);
    // Which phase a long delay fell in: the histogram above has no times, so each delay over
    // STALL_MS is also kept with its epoch time and charged to the client's phase windows
    // below (the probe does the same, so a phase's stall can be set against the machine's).
    // Started after the two spawns: forking this process (GBs of dataset) blocked its loop
    // 80-90 ms (profiled), the benchmark's own doing, which the histogram's first tick misses too.
    const stalls = stallRecorder();
    const clientOut = await clientRun;
    clearInterval(sampler);
    sampleCpu();
    loop.disable();
    gcWatch.disconnect();
    out.http_thread_gc_pauses_during_reads = gcPauses.length;
    out.http_thread_gc_pause_max_ms_during_reads = +gcLongest.ms.toFixed(1);
    // perf_hooks' kinds: 1 minor (scavenge), 4 major (mark-compact), 8 incremental marking, 16 weak callbacks
    out.http_thread_gc_pause_max_kind = gcLongest.kind;
    out.http_thread_gc_pause_total_ms_during_reads = +gcPauses.reduce((a, b) => a + b, 0).toFixed(0);
    const ownStalls = stalls.stop();
    const floor = JSON.parse(await floorProbe.stopAndRead()) as { max: number; p99: number; stalls: Stall[] };
    out.machine_loop_max_delay_ms_during_reads = floor.max;
    out.machine_loop_p99_delay_ms_during_reads = floor.p99;
    const cpuAt = (t: number) => { let k = 0; while (k < cpuSamples.length - 1 && cpuSamples[k + 1][0] <= t) k++; return cpuSamples[k][1]; };
    const client = JSON.parse(clientOut) as Record<string, number> & { phases: Record<string, [number, number]> };
    const longest = (list: Stall[], a: number, b: number) => list.reduce<Stall | null>((m, x) => (x[0] >= a && x[0] - x[1] <= b && (m === null || x[1] > m[1]) ? x : m), null);
    const stallMax = (list: Stall[], a: number, b: number) => longest(list, a, b)?.[1] ?? 0;
    // [longest stall, of it the time this thread waited for a core, of it the time it ran, the probe's longest]
    // (the rest of the stall the thread was blocked: page faults, locks, I/O)
    const row = (a: number, b: number, own: Stall[], probe: Stall[]): number[] => {
      const x = longest(own, a, b);
      return [+(x?.[1] ?? 0).toFixed(1), +(x?.[2] ?? 0).toFixed(1), +(x?.[3] ?? 0).toFixed(1), +stallMax(probe, a, b).toFixed(1)];
    };
    const byPhase: Record<string, number[]> = {};
    const windows = Object.values(client.phases);
    const outside = (list: Stall[]) => list.filter(([t, ms]) => !windows.some(([a, b]) => t >= a && t - ms <= b));
    for (const [name, [a, b]] of Object.entries(client.phases)) byPhase[name] = row(a, b, ownStalls, floor.stalls);
    byPhase.between_phases = row(0, Infinity, outside(ownStalls), outside(floor.stalls));
    out.http_thread_gc_pause_max_phase = Object.entries(client.phases).find(([, [a, b]]) => gcLongest.at >= a && gcLongest.at <= b)?.[0] ?? 'between_phases';
    out.http_thread_cpu_s_during_reads = +stalls.cpuS.toFixed(2);
    out.http_thread_runqueue_wait_s_during_reads = +stalls.waitS.toFixed(2);
    for (const [name, [a, b]] of Object.entries(client.phases)) {
      if (!name.startsWith('raw_')) continue;
      const cpuS = (cpuAt(b) - cpuAt(a)) / 1e6;
      // a repeated kind's window holds all of its runs
      const points = (client[`${name}_points`] ?? client[name.replace('msgpack', 'json') + '_points']) * (name === 'raw_one_point' ? 1 : REPEAT);
      out[`${name}_service_cpu_cores`] = +(cpuS / ((b - a) / 1000)).toFixed(2);
      out[`${name}_points_per_service_cpu_s`] = Math.round(points / cpuS);
      if (name === 'raw_one_point') out.raw_one_point_service_cpu_ms_per_request = +((cpuS * 1000) / points).toFixed(3);
    }
    delete (client as Partial<typeof client>).phases;
    Object.assign(out, client);
    if (out.raw_fleet_json_parsed_points !== fleetPoints || out.raw_big_json_parsed_points !== bigPoints) log(`WARNING: the parsing client counted ${out.raw_fleet_json_parsed_points} fleet and ${out.raw_big_json_parsed_points} big-series points`);
    if (out.raw_fleet_json_points !== fleetPoints) log(`WARNING: the client counted ${out.raw_fleet_json_points} fleet points, ${fleetPoints} were written`);
    if (out.raw_fleet_json_columns_points !== fleetPoints || out.raw_fleet_json_columns_parsed_points !== fleetPoints) log(`WARNING: the client counted ${out.raw_fleet_json_columns_points} (parsed ${out.raw_fleet_json_columns_parsed_points}) fleet points in JSON columns, ${fleetPoints} were written`);
    if (out.raw_big_json_columns_points !== bigPoints) log(`WARNING: the client counted ${out.raw_big_json_columns_points} big-series points in JSON columns, ${bigPoints} were written`);
    if (out.raw_fleet_columns_points !== fleetPoints) log(`WARNING: the client counted ${out.raw_fleet_columns_points} fleet points in columns, ${fleetPoints} were written`);
    if (out.raw_big_columns_points !== bigPoints) log(`WARNING: the client counted ${out.raw_big_columns_points} big-series points in columns, ${bigPoints} were written`);
    if (out.raw_big_json_points !== bigPoints || out.raw_big_msgpack_points !== bigPoints) log(`WARNING: the client counted ${out.raw_big_json_points}/${out.raw_big_msgpack_points} points of the big series, ${bigPoints} were written`);
    out.event_loop_max_delay_ms_during_reads = +(loop.max / 1e6).toFixed(1);
    out.event_loop_p99_delay_ms_during_reads = +(loop.percentile(99) / 1e6).toFixed(1);
    // The longest of this process's stalls during which the idle probe did not stall (no
    // probe stall over STALL_MS overlaps it, the phases' own test): a pause the machine imposed
    // on every process shows in both, one of the service's own making (its work, its threads,
    // its client's load on the cores) only here. Only stalls over STALL_MS are kept, so 0 means none.
    const ownOnly = ownStalls.filter(([end, ms]) => longest(floor.stalls, end - ms, end) === null);
    out.event_loop_max_stall_ms_probe_quiet = +Math.max(0, ...ownOnly.map((x) => x[1])).toFixed(1);
    out.event_loop_stalls_over_20ms = ownStalls.filter((x) => x[1] > 20).length;
    out.event_loop_stalls_over_20ms_probe_quiet = ownOnly.filter((x) => x[1] > 20).length;
    // per phase: [this process's longest stall over STALL_MS, of it the time the HTTP thread
    // waited for a core and the time it ran (/proc schedstat), the idle probe's longest] (0: none over it)
    out.event_loop_stall_ms_by_phase = JSON.stringify(byPhase);
  } finally {
    floorProbe?.stopAndRead().catch(() => undefined);
    await svc.stop(2000);
    await model?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
  if (JSON_OUT) { process.stdout.write(JSON.stringify(out) + '\n'); return; }
  const w = Math.max(...Object.keys(out).map((k) => k.length));
  process.stdout.write(Object.entries(out).map(([k, v]) => `${k.padEnd(w)}  ${typeof v === 'number' ? v.toLocaleString('en-US') : v}`).join('\n') + '\n');
}

/** A fresh database on the server of DATABASE_URL, or null to use PGlite. */
async function benchDatabase(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const url = process.env.DATABASE_URL;
  if (!url) return null;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const name = `bench_storage_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end(); },
  };
}

/** Runs a child and resolves its stdout. */
function execFileText(file: string, argv: string[]): Promise<string> & { stopAndRead(): Promise<string> } {
  let child: ReturnType<typeof execFile> | null = null;
  const done = new Promise<string>((resolve, reject) => {
    child = execFile(file, argv, { maxBuffer: 1 << 24 }, (err, stdout, stderr) => (err && !stdout ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
  return Object.assign(done, { stopAndRead: () => { child?.kill('SIGTERM'); return done; } });
}

/** [epoch ms at the end of a stall, its length in ms, and (this process only) of it ms waiting on the run queue, ms running] */
type Stall = [number, number] | [number, number, number, number];
/** Event-loop delays longer than this are kept with their time (ms). */
const STALL_MS = 5;
const TICK_MS = 2;

/**
 * Keeps every lateness of a TICK_MS timer over STALL_MS, with the epoch time it ended and,
 * on Linux, how much of it this (the HTTP) thread spent waiting for a core and running:
 * /proc/thread-self/schedstat gives the thread's run time and run-queue wait (ns).
 */
function stallRecorder(): { stop(): Stall[]; cpuS: number; waitS: number } {
  const list: Stall[] = [];
  // One descriptor read again at offset 0 each tick: a readFileSync per 2 ms tick (open,
  // fstat, read, close, a Buffer) was 18 % of the HTTP thread's samples inside its long
  // loop iterations in a profile of this benchmark, the measurement weighing on what it measures.
  let fd = -1;
  try { fd = openSync('/proc/thread-self/schedstat', 'r'); } catch { /* not Linux: no split */ }
  const buf = Buffer.alloc(128);
  const sched = (): [number, number] => {
    if (fd < 0) return [0, 0];
    const n = readSync(fd, buf, 0, buf.length, 0);
    const f = buf.toString('latin1', 0, n).split(' ');
    return [Number(f[0]) / 1e6, Number(f[1]) / 1e6];
  };
  const first = sched();
  let last = performance.now(), lastRun = first[0], lastWait = first[1];
  const timer = setInterval(() => {
    const now = performance.now(), late = now - last - TICK_MS;
    const [run, wait] = sched();
    if (late > STALL_MS) list.push([performance.timeOrigin + now, late, Math.min(late, wait - lastWait), Math.min(late, run - lastRun)]);
    last = now; lastRun = run; lastWait = wait;
  }, TICK_MS);
  const out = { cpuS: 0, waitS: 0, stop: () => { clearInterval(timer); const [run, wait] = sched(); if (fd >= 0) closeSync(fd); out.cpuS = (run - first[0]) / 1000; out.waitS = (wait - first[1]) / 1000; return list; } };
  return out;
}

/** The machine's own event-loop delay: a process doing nothing but watching its loop until SIGTERM. */
const LOOP_PROBE = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
const stalls = []; let last = performance.now();
setInterval(() => { const now = performance.now(), late = now - last - ${TICK_MS}; if (late > ${STALL_MS}) stalls.push([performance.timeOrigin + now, late]); last = now; }, ${TICK_MS});
process.on('SIGTERM', () => { h.disable(); process.stdout.write(JSON.stringify({ max: +(h.max / 1e6).toFixed(1), p99: +(h.percentile(99) / 1e6).toFixed(1), stalls })); process.exit(0); });
`;

main().catch((e) => { process.stderr.write(String(e?.stack ?? e) + '\n'); process.exit(1); });
