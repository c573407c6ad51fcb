// Collector ingest as a user sees a bulk load (issue 33 item 5): a fresh store, the shared
// dataset's numeric series (1,000 series x 10,000 samples: 950 numeric series, 9.42 M points;
// text series left out, booleans, counters and enum ordinals sent as float64, as a peer that
// only stores floats gets them), and every phase of the load counted, not only streaming:
//   1. series creation: 4 collector sessions open and declare their streams (new series);
//   2. streaming: every batch sent within credit until every ack (durable) is in;
//   3. sealing: until the store holds no open head (no open point, no head segment), or
//      --seal-timeout seconds (then the open points left are printed);
//   4. an idle period (--idle, 60 s; shorten it while developing): the data file again.
// Figures: points/s streaming and with creation, server CPU s per million points (streaming;
// creation + streaming + sealing; to the idle period's end), bytes written per point
// (/proc/<pid>/io), the data file (data.mdb) and its live pages per point at the end and
// after the idle period, the server's RSS peak, this process's CPU (the collector client).
//   node --import tsx bench/ingest.ts [--series 1000] [--points 10000] [--sessions 4]
//     [--batch 1000] [--seal-timeout 120] [--idle 60] [--peer vm] [--json]
//     [--cpu-prof <dir>]   V8 CPU profiles of every server thread and their split
//     [--trace <dir>]      the ingest worker's group trace (HISTORIAN_INGEST_TRACE) in <dir>/server.jsonl
//     [--source]           run the service from src/ through tsx (profiles name .ts lines);
//                          by default it runs as `npm start` runs it: dist/main.js, built first
//                          when a source is newer than the last build (scripts/start.mjs)
// --peer vm: the same points into VictoriaMetrics (Debian's victoria-metrics) in the same
// run, after ours, alone on the cores: influx line protocol to /write, 10,000-line bodies,
// 2 in flight, then /internal/force_flush; its CPU, RSS and bytes written from /proc, its
// directory at the end and after the same idle period. Its bodies are formatted before timing
// (the formatting CPU is printed apart); ours are sent from the columns the client holds.
// Needs DATABASE_URL (a database is created and dropped) or runs on embedded PGlite.
import { spawn, type ChildProcess } from 'node:child_process';
// @ts-expect-error: a plain .mjs script without types
import { buildIfStale } from '../scripts/start.mjs';
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries, numeric } from '../../shared/datasets/industrial.mjs';
import { CollectorClient } from '../src/collector/collector-client.js';
import { openSeriesEnv, withReadView } from '../src/storage/series-env.js';
import { decodeHeadRecord } from '../src/storage/head-record.js';
import { measureDisk } from '../src/storage/disk-usage.js';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
import { printSplit, splitProfiles } from './cpu-split.js';
import { cpuSeconds, dirBytes, threadCpuSeconds, writtenBytes, RssPeak } from './process-figures.js';
import { readFile } from 'node:fs/promises';
import { flushVm, influxBodies, startVm, vmMissing, writeVm } from './victoria-metrics.js';
import { freePort, sleep } from '../reliability/crash-loop/service-child.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const str = (name: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : null; };
const SERIES = opt('series', 1000), POINTS = opt('points', 10_000), SESSIONS = opt('sessions', 4), BATCH = opt('batch', 1000);
const SEAL_TIMEOUT_S = opt('seal-timeout', 120), IDLE_S = opt('idle', 60);
const JSON_OUT = args.includes('--json');
const PEER = str('peer');
const PROF_DIR = str('cpu-prof'), TRACE_DIR = str('trace');
const FROM_SOURCE = args.includes('--source');
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(`${s}\n`); };

interface Loaded { name: string; times: BigInt64Array; values: Float64Array }

function load(): Loaded[] {
  const list = datasetSeries({ series: SERIES, points: POINTS, seed: 1 }) as Array<{ name: string; type: string; points(): Iterable<[bigint, unknown, number]> }>;
  return list.filter((s) => s.type !== 'string').map((s) => {
    const times = new BigInt64Array(POINTS), values = new Float64Array(POINTS);
    let i = 0;
    for (const [t, v] of s.points()) { if (i === POINTS) break; times[i] = t; values[i] = Number(numeric(v)); i++; }
    // the dataset has gaps: a series may hold fewer points than asked for
    return { name: s.name, times: times.subarray(0, i), values: values.subarray(0, i) };
  });
}

const mb = (b: number) => Number((b / 2 ** 20).toFixed(1));
const r2 = (x: number) => Number(x.toFixed(2));
const r3 = (x: number) => Number(x.toFixed(3));

/**
 * What the store holds open, read from its LMDB file by a read-only opener in this process
 * (LMDB allows readers in other processes): open points and head segments over every head
 * record, and the file's size and live pages. Opened and closed per probe so that no read
 * snapshot of ours pins pages the server frees.
 */
async function probeStore(seriesDir: string): Promise<{ openPoints: number; segments: number; fileBytes: number; liveBytes: number }> {
  const env = openSeriesEnv(seriesDir, { readOnly: true });
  try {
    const open = withReadView(env, (view) => {
      let points = 0;
      for (const { value } of env.heads.getRange({ transaction: view.txn })) points += decodeHeadRecord(value).openPoints;
      let segments = 0;
      for (const _ of env.segments.getKeys({ transaction: view.txn })) segments++;
      return { points, segments };
    });
    const disk = await measureDisk(env);
    env.root.resetReadTxn();
    return { openPoints: open.points, segments: open.segments, fileBytes: disk.fileBytes, liveBytes: disk.liveBytes };
  } finally {
    await env.close();
  }
}

/**
 * The server's CPU seconds by thread over the load (creation to sealed), the busiest first:
 * "tid name seconds" ("main" is the pid; Node leaves JS worker threads named "node", its
 * helpers have their own names: libuv-worker, V8 workers, lmdb's writer...).
 */
async function threadsUsed(pid: number, before: Map<number, number>): Promise<string> {
  const after = await threadCpuSeconds(pid);
  const rows: Array<[string, number]> = [];
  for (const [tid, s] of after) {
    const used = s - (before.get(tid) ?? 0);
    if (used < 0.05) continue;
    const comm = tid === pid ? 'main' : (await readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8').catch(() => '?')).trim();
    rows.push([`${tid} ${comm}`, used]);
  }
  return rows.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
}

async function sendAll(c: CollectorClient, mine: Loaded[]): Promise<number> {
  let acked = 0;
  const all: Array<Promise<void>> = [];
  const rounds = Math.ceil(POINTS / BATCH);
  for (let b = 0; b < rounds; b++) {
    const off = b * BATCH;
    for (let s = 0; s < mine.length; s++) {
      const d = mine[s], end = Math.min(d.times.length, off + BATCH);
      if (end <= off) continue;
      all.push(c.send('LIVE', s, 'float64', { times: d.times.subarray(off, end), values: d.values.subarray(off, end), quality: null }).then((o) => {
        if (!o.ok) throw new Error(`batch rejected: ${o.reason} ${o.detail}`);
        acked += end - off - o.refused;
      }));
      if (c.waitingForCredit() > 16) await new Promise((r) => setImmediate(r));
    }
  }
  await Promise.all(all);
  return acked;
}

async function runOurs(data: Loaded[], total: number): Promise<Record<string, number | string | null>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-bench-ingest-'));
  let dbName: string | null = null, databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
    dbName = `bench_ingest_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${dbName}`); await admin.end();
    const u = new URL(process.env.DATABASE_URL); u.pathname = `/${dbName}`; databaseUrl = u.toString();
  }
  const grpcPort = await freePort(), httpPort = await freePort();
  // tsx compiles every thread's modules in memory (tens of MB of RSS per thread that a user's
  // `npm start` does not have): the service is measured as shipped unless --source.
  if (!FROM_SOURCE && buildIfStale() !== 0) throw new Error('npm run build failed');
  const entry = FROM_SOURCE ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js'];
  const server: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []), ...entry], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(httpPort), SERVICE_GRPC_PORT: String(grpcPort), SERVICE_DATA_DIR: dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', SERVICE_WORKERS: '1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...(TRACE_DIR ? { HISTORIAN_INGEST_TRACE: join(TRACE_DIR, 'server.jsonl') } : {}) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const address = `127.0.0.1:${grpcPort}`, seriesDir = join(dataDir, 'series');
  try {
    // a fresh store's embedded PGlite runs initdb first: over 180 s at load ~25
    for (const end = Date.now() + 600_000; ;) {
      try { if ((await fetch(`http://127.0.0.1:${httpPort}/v1/healthz`)).ok) break; } catch { /* not up yet */ }
      if (Date.now() > end) throw new Error('the service did not answer /v1/healthz in 600 s');
      await sleep(250);
    }
    const pid = server.pid as number;
    const cpu0 = await cpuSeconds(pid), written0 = await writtenBytes(pid), client0 = process.cpuUsage();
    const threads0 = await threadCpuSeconds(pid);
    const rss = new RssPeak(pid);
    const t0 = performance.now();
    const perSession = Math.ceil(data.length / SESSIONS);
    const shares = Array.from({ length: SESSIONS }, (_, i) => data.slice(i * perSession, (i + 1) * perSession)).filter((s) => s.length > 0);
    const clients = await Promise.all(shares.map((mine, i) => CollectorClient.connect({ address, collectorId: `bench-${i}`, epoch: 1n, streams: mine.map((d) => ({ name: d.name, type: 'float64' as const })) })));
    for (const c of clients) { const bad = c.welcome.streams.find((s) => !s.accepted); if (bad) throw new Error(`stream refused: ${bad.refusal}`); }
    const tCreated = performance.now(), cpuCreated = await cpuSeconds(pid);
    log(`ours: ${data.length} series created in ${((tCreated - t0) / 1000).toFixed(2)} s; streaming`);
    const acked = (await Promise.all(clients.map((c, i) => sendAll(c, shares[i])))).reduce((a, b) => a + b, 0);
    const tStreamed = performance.now(), cpuStreamed = await cpuSeconds(pid);
    const client = process.cpuUsage(client0);
    for (const c of clients) c.close();
    if (acked !== total) throw new Error(`acked ${acked} of ${total} points`);
    log(`ours: streamed in ${((tStreamed - tCreated) / 1000).toFixed(2)} s; waiting for the store to seal (at most ${SEAL_TIMEOUT_S} s)`);
    let probe = await probeStore(seriesDir);
    while ((probe.openPoints > 0 || probe.segments > 0) && performance.now() - tStreamed < SEAL_TIMEOUT_S * 1000) {
      await sleep(500);
      probe = await probeStore(seriesDir);
    }
    const sealed = probe.openPoints === 0 && probe.segments === 0;
    const tSealed = performance.now(), cpuSealed = await cpuSeconds(pid), writtenSealed = (await writtenBytes(pid)) - written0;
    const atEnd = probe;
    const threads = await threadsUsed(pid, threads0);
    log(`ours: ${sealed ? `sealed in ${((tSealed - tStreamed) / 1000).toFixed(1)} s` : `${probe.openPoints} points still open after ${SEAL_TIMEOUT_S} s`}; idle ${IDLE_S} s`);
    await sleep(IDLE_S * 1000);
    const idle = await probeStore(seriesDir);
    const cpuIdle = await cpuSeconds(pid), writtenIdle = (await writtenBytes(pid)) - written0;
    rss.stop();
    const loadS = (tStreamed - t0) / 1000, streamS = (tStreamed - tCreated) / 1000, m = total / 1e6;
    return {
      series: data.length,
      create_s: r2((tCreated - t0) / 1000),
      stream_s: r2(streamS),
      points_per_s_streaming: Math.round(total / streamS),
      points_per_s_with_creation: Math.round(total / loadS),
      seal_s: sealed ? r2((tSealed - tStreamed) / 1000) : null,
      open_points_left: probe.openPoints,
      server_cpu_s_per_million_streaming: r3((cpuStreamed - cpuCreated) / m),
      server_cpu_s_per_million_with_creation_and_sealing: r3((cpuSealed - cpu0) / m),
      server_cpu_s_per_million_to_idle_end: r3((cpuIdle - cpu0) / m),
      server_cpu_s_creation: r2(cpuCreated - cpu0),
      written_bytes_per_point: Number((writtenSealed / total).toFixed(1)),
      written_bytes_per_point_to_idle_end: Number((writtenIdle / total).toFixed(1)),
      file_bytes_per_point_end: r2(atEnd.fileBytes / total),
      live_bytes_per_point_end: r2(atEnd.liveBytes / total),
      file_bytes_per_point_idle: r2(idle.fileBytes / total),
      live_bytes_per_point_idle: r2(idle.liveBytes / total),
      file_over_live_idle: r2(idle.fileBytes / idle.liveBytes),
      data_dir_mb_idle: mb(await dirBytes(dataDir)),
      rss_peak_mb: Math.round(rss.all),
      rss_anon_peak_mb: Math.round(rss.anon),
      rss_file_peak_mb: Math.round(rss.file),
      client_cpu_s: r2((client.user + client.system) / 1e6),
      threads_cpu_s: threads,
    };
  } finally {
    await new Promise<void>((resolve) => { if (server.exitCode !== null) { resolve(); return; } server.once('exit', () => resolve()); server.kill('SIGTERM'); setTimeout(() => server.kill('SIGKILL'), 10_000).unref(); });
    await rm(dataDir, { recursive: true, force: true });
    if (PROF_DIR) printSplit(await splitProfiles([PROF_DIR]), (s) => process.stderr.write(s));
    if (dbName && process.env.DATABASE_URL) {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.end();
    }
  }
}

async function runVm(data: Loaded[], total: number): Promise<Record<string, number | string | null>> {
  const dir = await mkdtemp(join(tmpdir(), 'historian-bench-vm-'));
  await mkdir(join(dir, 'data'));
  const f0 = process.cpuUsage();
  const bodies = influxBodies(data, 10_000);
  const format = process.cpuUsage(f0);
  const vm = await startVm(join(dir, 'data'));
  try {
    const pid = vm.pid;
    const cpu0 = await cpuSeconds(pid), written0 = await writtenBytes(pid), client0 = process.cpuUsage();
    const rss = new RssPeak(pid);
    const t0 = performance.now();
    await writeVm(vm.url, bodies, 2);
    const tWritten = performance.now();
    await flushVm(vm.url);
    const tFlushed = performance.now(), cpuFlushed = await cpuSeconds(pid), writtenFlushed = (await writtenBytes(pid)) - written0;
    const client = process.cpuUsage(client0);
    const bytesEnd = await dirBytes(join(dir, 'data'));
    log(`vm: written in ${((tWritten - t0) / 1000).toFixed(2)} s, flushed ${((tFlushed - tWritten) / 1000).toFixed(2)} s later; idle ${IDLE_S} s`);
    await sleep(IDLE_S * 1000);
    const cpuIdle = await cpuSeconds(pid), writtenIdle = (await writtenBytes(pid)) - written0;
    const bytesIdle = await dirBytes(join(dir, 'data'));
    rss.stop();
    // VM keeps recent parts in memory for a while; stopped, it writes them all out
    await vm.stop();
    const bytesStopped = await dirBytes(join(dir, 'data'));
    const m = total / 1e6;
    return {
      points_per_s_write: Math.round(total / ((tWritten - t0) / 1000)),
      points_per_s_with_flush: Math.round(total / ((tFlushed - t0) / 1000)),
      server_cpu_s_per_million_with_flush: r3((cpuFlushed - cpu0) / m),
      server_cpu_s_per_million_to_idle_end: r3((cpuIdle - cpu0) / m),
      written_bytes_per_point: Number((writtenFlushed / total).toFixed(1)),
      written_bytes_per_point_to_idle_end: Number((writtenIdle / total).toFixed(1)),
      dir_bytes_per_point_end: r2(bytesEnd / total),
      dir_bytes_per_point_idle: r2(bytesIdle / total),
      dir_bytes_per_point_stopped: r2(bytesStopped / total),
      rss_peak_mb: Math.round(rss.all),
      rss_anon_peak_mb: Math.round(rss.anon),
      rss_file_peak_mb: Math.round(rss.file),
      client_cpu_s: r2((client.user + client.system) / 1e6),
      client_format_cpu_s: r2((format.user + format.system) / 1e6),
    };
  } finally {
    await vm.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (PEER !== null && PEER !== 'vm') throw new Error(`--peer: only "vm" is known, got ${PEER}`);
  if (PEER === 'vm' && vmMissing() !== null) throw new Error(vmMissing() as string);
  log(`generating ${SERIES} series x ${POINTS} points (shared dataset, numeric)`);
  const data = load();
  const total = data.reduce((a, d) => a + d.times.length, 0);
  const load0 = loadavg()[0];
  const ours = await runOurs(data, total);
  const load1 = loadavg()[0];
  const vm = PEER === 'vm' ? await runVm(data, total) : null;
  const load2 = loadavg()[0];
  const ratio = (a: unknown, b: unknown) => (typeof a === 'number' && typeof b === 'number' && b !== 0 ? r3(a / b) : null);
  const ratios = vm === null ? null : {
    // ours / theirs: above 1 is better for the rate, below 1 for the rest
    ingest_with_creation_vs_write_with_flush: ratio(ours.points_per_s_with_creation, vm.points_per_s_with_flush),
    ingest_streaming_vs_write: ratio(ours.points_per_s_streaming, vm.points_per_s_write),
    server_cpu_per_million_sealing_vs_flush: ratio(ours.server_cpu_s_per_million_with_creation_and_sealing, vm.server_cpu_s_per_million_with_flush),
    server_cpu_per_million_to_idle_end: ratio(ours.server_cpu_s_per_million_to_idle_end, vm.server_cpu_s_per_million_to_idle_end),
    file_bytes_per_point_idle: ratio(ours.file_bytes_per_point_idle, vm.dir_bytes_per_point_idle),
    written_bytes_per_point: ratio(ours.written_bytes_per_point, vm.written_bytes_per_point),
    rss_peak: ratio(ours.rss_peak_mb, vm.rss_peak_mb),
    rss_anon_peak: ratio(ours.rss_anon_peak_mb, vm.rss_anon_peak_mb),
    client_cpu: ratio(ours.client_cpu_s, vm.client_cpu_s),
  };
  const result = {
    backend: process.env.DATABASE_URL ? 'postgresql' : 'pglite', series: data.length, points: total, sessions: SESSIONS, batch_points: BATCH,
    seal_timeout_s: SEAL_TIMEOUT_S, idle_s: IDLE_S, ours, vm, ratios,
    load_average_1m: [r2(load0), r2(load1), r2(load2)],
  };
  if (JSON_OUT) { process.stdout.write(`${JSON.stringify(result)}\n`); return; }
  const o = ours, v = vm ?? {};
  const s = (x: unknown) => (x === null || x === undefined ? '-' : String(x));
  const rows: string[][] = [
    ['figure', 'this service', vm ? 'VictoriaMetrics' : '', vm ? 'ratio' : ''],
    ['series creation (s)', s(o.create_s), '', ''],
    ['points/s streaming (ours: durable acks; VM: /write answers)', s(o.points_per_s_streaming), s(v.points_per_s_write), s(ratios?.ingest_streaming_vs_write)],
    ['points/s whole load (ours: with creation; VM: with flush)', s(o.points_per_s_with_creation), s(v.points_per_s_with_flush), s(ratios?.ingest_with_creation_vs_write_with_flush)],
    ['sealing after the load (s)', o.seal_s === null ? `not done: ${s(o.open_points_left)} open points` : s(o.seal_s), '', ''],
    ['server CPU s per M points, streaming', s(o.server_cpu_s_per_million_streaming), '', ''],
    ['  with creation and sealing (VM: to its flush)', s(o.server_cpu_s_per_million_with_creation_and_sealing), s(v.server_cpu_s_per_million_with_flush), s(ratios?.server_cpu_per_million_sealing_vs_flush)],
    [`  to the end of the idle ${IDLE_S} s (VM: its merges)`, s(o.server_cpu_s_per_million_to_idle_end), s(v.server_cpu_s_per_million_to_idle_end), s(ratios?.server_cpu_per_million_to_idle_end)],
    ['bytes written per point (to sealed; VM: to flush)', s(o.written_bytes_per_point), s(v.written_bytes_per_point), s(ratios?.written_bytes_per_point)],
    [`  to the end of the idle ${IDLE_S} s`, s(o.written_bytes_per_point_to_idle_end), s(v.written_bytes_per_point_to_idle_end), ''],
    ['data file B/pt at the end: file / live pages (VM: dir)', `${s(o.file_bytes_per_point_end)} / ${s(o.live_bytes_per_point_end)}`, s(v.dir_bytes_per_point_end), ''],
    [`  after the idle ${IDLE_S} s`, `${s(o.file_bytes_per_point_idle)} / ${s(o.live_bytes_per_point_idle)} (x${s(o.file_over_live_idle)})`, s(v.dir_bytes_per_point_idle), s(ratios?.file_bytes_per_point_idle)],
    ['  VM stopped (its in-memory parts written out)', '', s(v.dir_bytes_per_point_stopped), ''],
    ['server RSS peak (MB)', s(o.rss_peak_mb), s(v.rss_peak_mb), s(ratios?.rss_peak)],
    ['  its anonymous part / file-backed part (peaks)', `${s(o.rss_anon_peak_mb)} / ${s(o.rss_file_peak_mb)}`, vm ? `${s(v.rss_anon_peak_mb)} / ${s(v.rss_file_peak_mb)}` : '', s(ratios?.rss_anon_peak)],
    ['client CPU s (VM: formatting lines apart)', s(o.client_cpu_s), vm ? `${s(v.client_cpu_s)} (+${s(v.client_format_cpu_s)})` : '', s(ratios?.client_cpu)],
  ];
  const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  process.stdout.write(`ingest, whole load: ${data.length} series, ${total} points, ${SESSIONS} sessions, ${BATCH}-point batches, ${result.backend}; load average ${result.load_average_1m.join(' / ')}\n`);
  for (const r of rows) process.stdout.write(`  ${r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ')}\n`);
  process.stdout.write(`  server CPU s by thread, creation to sealed (tid name s): ${s(o.threads_cpu_s)}\n`);
}

main().catch((e: unknown) => { process.stderr.write(`bench/ingest: ${e instanceof Error ? e.stack : String(e)}\n`); process.exit(1); });
