// Collector ingest benchmark: a real server process (node --import tsx src/main.ts) and
// several collector sessions in this process over loopback gRPC, both on this machine.
//   node --import tsx bench/ingest.ts [--sessions 4] [--streams 1200] [--points 12000000] [--batch 1000] [--json]
//     [--no-backfill]      phase 1 only (profiles of in-order ingest alone)
//     [--cpu-prof <dir>]   V8 CPU profiles of every server thread (node --cpu-prof), and the
//                          split of each thread's CPU time: ingest, storage, gRPC, GC, rest
//     [--trace <dir>]      phase 1 timing trace: the ingest worker's groups, transactions and GCs
//                          (HISTORIAN_INGEST_TRACE, src/ingest/group-trace.ts) in <dir>/server.jsonl,
//                          every ack and this process's event-loop stalls in <dir>/acks.jsonl
// Phase 1: every session streams its share of the streams as fast as credit allows:
//   durably acknowledged points/s over the whole phase and after its first second (with the
//   slowest whole second), ack latency p50/p99, CPU s per million points.
// HISTORIAN_SEAL_THREAD=0 in the environment runs the server without its seal thread (the
// ingest worker then encodes chunks inside its write transactions), for comparisons.
// Phase 2: one session backfills at full speed while another sends a small live batch
//   every 20 ms: live-lane ack latency p50/p99 during the backfill, and the backfill's own
//   rate and server CPU per backfill point (history written before existing data).
// Inputs are generated from a fixed seed before timing. Needs DATABASE_URL (a database is
// created and dropped) or runs on embedded PGlite.
import { spawn, type ChildProcess } from 'node:child_process';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
import { mkdtemp, rm, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CollectorClient, type OutgoingColumns } from '../src/collector/collector-client.js';
import { printSplit, splitProfiles } from './cpu-split.js';
import { mulberry32 } from './seeded-random.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const SESSIONS = opt('sessions', 4), STREAMS = opt('streams', 1200), POINTS = opt('points', 12_000_000), BATCH = opt('batch', 1000);
const JSON_OUT = args.includes('--json');
const BACKFILL = !args.includes('--no-backfill');
const PROF_DIR = (() => { const i = args.indexOf('--cpu-prof'); return i >= 0 ? args[i + 1] : null; })();
const TRACE_DIR = (() => { const i = args.indexOf('--trace'); return i >= 0 ? args[i + 1] : null; })();
/** With --trace: phase 1 acks and stalls of this process's event loop (absolute ms). */
const traceLines: string[] = [];
const absMs = () => performance.timeOrigin + performance.now();
const clientIds = new Map<CollectorClient, string>();
const T0 = 1_700_000_000_000_000_000n;

/** batchesPerStream batches of BATCH points for each stream: 1 s cadence, ms jitter, a 0.01-resolution random walk. */
function generate(streams: number, batchesPerStream: number, startNs: bigint): OutgoingColumns[][] {
  const r = mulberry32(42);
  return Array.from({ length: streams }, () => {
    let level = 100 * r();
    return Array.from({ length: batchesPerStream }, (_, b) => {
      const times = new BigInt64Array(BATCH), values = new Float64Array(BATCH);
      for (let i = 0; i < BATCH; i++) {
        const k = b * BATCH + i;
        times[i] = startNs + BigInt(k) * 1_000_000_000n + BigInt(Math.floor(r() * 8)) * 1_000_000n;
        level += (r() - 0.5) * 0.1;
        values[i] = Math.round(level * 100) / 100;
      }
      return { times, values, quality: null };
    });
  });
}

const freePort = () => new Promise<number>((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); }); });
const pct = (xs: number[], p: number) => { if (!xs.length) return NaN; const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };

async function cpuSeconds(pid: number): Promise<number> {
  const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime in clock ticks (100 Hz)
}
/** Bytes the server process caused to be written to storage (LMDB page writes, msync). */
async function writtenBytes(pid: number): Promise<number> {
  const m = /write_bytes:\s+(\d+)/.exec(await readFile(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}
async function sysSeconds(pid: number): Promise<number> {
  return Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')[12]) / 100;
}
/** Resident memory of the server (MB): all of it, and its anonymous part (heaps, buffers;
 *  the rest is file pages, mostly the LMDB map, which the kernel can drop). */
async function rssMb(pid: number): Promise<{ all: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { all: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
}

/** Bytes of every file under the data directory (the LMDB env's high-water mark dominates). */
async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  }
  return total;
}

async function connect(address: string, id: string, names: string[]): Promise<CollectorClient> {
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      const c = await CollectorClient.connect({ address, collectorId: id, epoch: 1n, streams: names.map((name) => ({ name, type: 'float64' as const })) });
      clientIds.set(c, id);
      return c;
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Sends every batch of the given streams round-robin, keeping at most `window` batches queued for credit. */
/** Latencies of batches acknowledged WARMUP_MS or more after `steadyFromMs` (phase 1 without the server's cold start). */
const WARMUP_MS = 1000;

/** When each phase-1 ack arrived (ms, performance.now) and how many points it acknowledged. */
const ackAt: number[] = [], ackPoints: number[] = [];

async function stream(c: CollectorClient, lane: 'LIVE' | 'BACKFILL', batches: OutgoingColumns[][], lat: number[], steady: number[] = [], steadyFromMs = Infinity): Promise<number> {
  let acked = 0;
  const all: Array<Promise<void>> = [];
  for (let b = 0; b < batches[0].length; b++) {
    for (let s = 0; s < batches.length; s++) {
      all.push(c.send(lane, s, 'float64', batches[s][b]).then((o) => { if (!o.ok) throw new Error(`rejected: ${o.reason} ${o.detail}`); acked += BATCH - o.refused; lat.push(o.ackMs); const now = performance.now(); if (now >= steadyFromMs) steady.push(o.ackMs); if (steadyFromMs !== Infinity) { ackAt.push(now); ackPoints.push(BATCH - o.refused); }
        if (TRACE_DIR && lane === 'LIVE' && steadyFromMs !== Infinity) { const t = absMs(); traceLines.push(JSON.stringify({ k: 'ack', id: `${clientIds.get(c)}/${lane}/${o.seq}`, sent: t - o.ackMs, acked: t, ms: o.ackMs })); } }));
      if (c.waitingForCredit() > 16) await new Promise((r) => setImmediate(r));
    }
  }
  await Promise.all(all);
  return acked;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'historian-bench-ingest-'));
  let dbName: string | null = null;
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
    dbName = `bench_ingest_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${dbName}`); await admin.end();
    const u = new URL(process.env.DATABASE_URL); u.pathname = `/${dbName}`; databaseUrl = u.toString();
  }
  const grpcPort = await freePort();
  const server: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []), '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(await freePort()), SERVICE_GRPC_PORT: String(grpcPort), SERVICE_DATA_DIR: dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', SERVICE_WORKERS: '1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...(TRACE_DIR ? { HISTORIAN_INGEST_TRACE: join(TRACE_DIR, 'server.jsonl') } : {}) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const address = `127.0.0.1:${grpcPort}`;
  try {
    const perSession = Math.ceil(STREAMS / SESSIONS);
    const batchesPerStream = Math.max(1, Math.round(POINTS / (STREAMS * BATCH)));
    const data = generate(STREAMS, batchesPerStream, T0);
    const clients = await Promise.all(Array.from({ length: SESSIONS }, (_, i) =>
      connect(address, `bench-${i}`, Array.from({ length: Math.min(perSession, STREAMS - i * perSession) }, (_, k) => `s${i * perSession + k}`))));
    const pid = server.pid as number;

    // Phase 1: sustained ingest.
    const lat: number[] = [], steadyLat: number[] = [];
    const cpu0 = await cpuSeconds(pid), sys0 = await sysSeconds(pid), written0 = await writtenBytes(pid), client0 = process.cpuUsage();
    let rssMax = 0, anonMax = 0;
    const rssTimer = setInterval(() => { rssMb(pid).then((m) => { rssMax = Math.max(rssMax, m.all); anonMax = Math.max(anonMax, m.anon); }, () => undefined); }, 200);
    const t0 = performance.now();
    // With --trace: this process's event loop stalls over 5 ms (the collectors' side of an ack).
    let tick = performance.now();
    const stallTimer = TRACE_DIR ? setInterval(() => { const now = performance.now(); if (now - tick > 7) traceLines.push(JSON.stringify({ k: 'stall', t: performance.timeOrigin + tick, ms: now - tick })); tick = now; }, 2) : null;
    const acked = (await Promise.all(clients.map((c, i) => stream(c, 'LIVE', data.slice(i * perSession, (i + 1) * perSession), lat, steadyLat, t0 + WARMUP_MS)))).reduce((a, b) => a + b, 0);
    const t1 = performance.now(), secs = (t1 - t0) / 1000;
    // the rate after the warm-up, and its worst whole second: what "sustained" has to mean
    let steadyPoints = 0;
    const perSecond = new Array<number>(Math.max(0, Math.floor((t1 - t0 - WARMUP_MS) / 1000))).fill(0);
    for (let i = 0; i < ackAt.length; i++) {
      if (ackAt[i] < t0 + WARMUP_MS) continue;
      steadyPoints += ackPoints[i];
      const sec = Math.floor((ackAt[i] - t0 - WARMUP_MS) / 1000);
      if (sec < perSecond.length) perSecond[sec] += ackPoints[i];
    }
    const steadyRate = Math.round(steadyPoints / ((t1 - t0 - WARMUP_MS) / 1000));
    const worstSecond = perSecond.length > 0 ? Math.min(...perSecond) : null;
    if (stallTimer) clearInterval(stallTimer);
    if (TRACE_DIR) await writeFile(join(TRACE_DIR, 'acks.jsonl'), `${traceLines.join('\n')}\n`);
    const serverCpu = (await cpuSeconds(pid)) - cpu0, serverSys = (await sysSeconds(pid)) - sys0, written = (await writtenBytes(pid)) - written0;
    const cu = process.cpuUsage(client0);

    // Phase 2: live latency while one session backfills at full speed.
    const back = BACKFILL ? generate(perSession, batchesPerStream, T0 - 10_000_000_000_000_000n) : [];
    const liveLat: number[] = [], backLat: number[] = [];
    let backfilling = BACKFILL;
    const backCpu0 = await cpuSeconds(pid), backT0 = performance.now();
    const backfill = BACKFILL ? stream(clients[0], 'BACKFILL', back, backLat).finally(() => { backfilling = false; }) : Promise.resolve(0);
    const liveClient = clients[1] ?? clients[0];
    let k = 0;
    const liveSends: Array<Promise<void>> = [];
    while (backfilling) {
      const times = new BigInt64Array(100), values = new Float64Array(100);
      for (let i = 0; i < 100; i++) { times[i] = T0 + 5_000_000_000_000_000n + BigInt(k * 100 + i) * 1_000_000n; values[i] = i; }
      k++;
      liveSends.push(liveClient.send('LIVE', k % 10, 'float64', { times, values, quality: null }).then((o) => { if (o.ok) liveLat.push(o.ackMs); }));
      await new Promise((r) => setTimeout(r, 20));
    }
    const backAcked = await backfill;
    const backSecs = (performance.now() - backT0) / 1000, backCpu = (await cpuSeconds(pid)) - backCpu0;
    await Promise.all(liveSends);
    clearInterval(rssTimer); // RSS over both phases
    for (const c of clients) c.close();
    const dataBytes = await dirBytes(dataDir);

    const result = {
      sessions: SESSIONS, streams: STREAMS, batch_points: BATCH,
      points_acked: acked, seconds: Number(secs.toFixed(2)),
      acked_points_per_s: Math.round(acked / secs),
      // after the first WARMUP_MS (the server's cold start: JIT, a new LMDB file growing)
      acked_points_per_s_after_warmup: steadyRate,
      // the slowest whole second after the warm-up (null: the run was under two seconds)
      acked_points_worst_second: worstSecond,
      ack_p50_ms: Number(pct(lat, 50).toFixed(1)), ack_p99_ms: Number(pct(lat, 99).toFixed(1)),
      ack_after_warmup_p50_ms: Number(pct(steadyLat, 50).toFixed(1)), ack_after_warmup_p99_ms: Number(pct(steadyLat, 99).toFixed(1)),
      server_cpu_s_per_million: Number((serverCpu / (acked / 1e6)).toFixed(3)),
      // the kernel's part (page writes, msync/fsync, sockets) of the server's CPU
      server_sys_s_per_million: Number((serverSys / (acked / 1e6)).toFixed(3)),
      // bytes written to storage per point in phase 1 (chunks, head segments, rollups, LMDB pages)
      server_written_bytes_per_point: Number((written / acked).toFixed(1)),
      collector_cpu_s_per_million: Number(((cu.user + cu.system) / 1e6 / (acked / 1e6)).toFixed(3)),
      server_rss_max_mb: Math.round(rssMax),
      // the anonymous part at its own peak: heaps and buffers, without the LMDB map's file pages
      server_rss_anon_max_mb: Math.round(anonMax),
      backfill_points_acked: backAcked,
      backfill_points_per_s: Math.round(backAcked / backSecs),
      // server CPU of phase 2 over its backfill points (the small live batches ride in it)
      backfill_server_cpu_us_per_point: Number((backCpu * 1e6 / backAcked).toFixed(1)),
      live_during_backfill_p50_ms: Number(pct(liveLat, 50).toFixed(1)), live_during_backfill_p99_ms: Number(pct(liveLat, 99).toFixed(1)),
      live_batches_during_backfill: liveLat.length,
      // data directory after both phases: the LMDB file's high-water mark (head segments included)
      data_dir_mb: Number((dataBytes / 2 ** 20).toFixed(1)),
    };
    if (JSON_OUT) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      const rows: Array<[string, string, string]> = [
        ['acked points/s, whole phase 1', String(result.acked_points_per_s), ''],
        [`sustained acked points/s after ${WARMUP_MS} ms`, String(result.acked_points_per_s_after_warmup), '>= 2,000,000'],
        ['  its slowest whole second', String(result.acked_points_worst_second), ''],
        ['ack latency p50 / p99 (ms)', `${result.ack_p50_ms} / ${result.ack_p99_ms}`, 'p99 < 50'],
        [`  acked after the first ${WARMUP_MS} ms`, `${result.ack_after_warmup_p50_ms} / ${result.ack_after_warmup_p99_ms}`, ''],
        ['live p50 / p99 during backfill (ms)', `${result.live_during_backfill_p50_ms} / ${result.live_during_backfill_p99_ms}`, 'p99 < 100'],
        ['server CPU s per million points', String(result.server_cpu_s_per_million), ''],
        ['  of which in the kernel', String(result.server_sys_s_per_million), ''],
        ['collector CPU s per million points', String(result.collector_cpu_s_per_million), ''],
        ['server RSS max (MB): all / anonymous', `${result.server_rss_max_mb} / ${result.server_rss_anon_max_mb}`, 'bounded'],
        ['backfill points/s / server CPU us/point', `${result.backfill_points_per_s} / ${result.backfill_server_cpu_us_per_point}`, ''],
        ['bytes written per point (phase 1)', String(result.server_written_bytes_per_point), ''],
        ['data directory after the run (MB)', String(result.data_dir_mb), ''],
        ['points acked (phase 1) / seconds', `${acked} / ${result.seconds}`, ''],
      ];
      process.stdout.write(`ingest: ${SESSIONS} sessions, ${STREAMS} streams, ${BATCH}-point batches\n`);
      for (const [a, b, c] of rows) process.stdout.write(`  ${a.padEnd(38)} ${b.padStart(16)}   ${c}\n`);
    }
  } finally {
    await new Promise<void>((resolve) => { server.once('exit', () => resolve()); server.kill('SIGTERM'); setTimeout(() => server.kill('SIGKILL'), 10_000).unref(); });
    await rm(dataDir, { recursive: true, force: true });
    if (PROF_DIR) printSplit(await splitProfiles([PROF_DIR]), (s) => process.stderr.write(s));
    if (dbName && process.env.DATABASE_URL) {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.end();
    }
  }
}

main().catch((e: unknown) => { process.stderr.write(`bench/ingest: ${e instanceof Error ? e.stack : String(e)}\n`); process.exit(1); });
