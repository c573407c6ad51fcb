// Resolved reads on the shared industrial dataset, through the running service: 1,000
// series x 10,000 samples and the 10,000,000-point series are written through the storage
// write path (the durable group commits the ingest worker uses), every series is bound to an
// attribute of an asset in a plant tree built through the Model routes (/Plant/Fleet/<area>/
// <unit> with ten attributes each; the text series under /Plant/Text so that /Plant/Fleet
// holds the numeric ones; the big series under /Plant/Big), and a tenth of the fleet has a
// sensor swap in the middle of its range (a second series bound from there, holding the
// second half of the points). The service is then stopped and started again in a process of
// its own, as `npm start` runs it (--source: from the TypeScript sources through tsx), and a
// third process (this file with --client) reads over loopback HTTP, timing each request to
// the full body at the client; each figure is the median of --repeat runs (the machine is shared: figures are pessimistic).
// The wide snapshot reads --snapshot-attributes attributes under /Wide (one float64 series
// each with ten points, created through the series catalogue's bulk path and bound through
// the model's own functions in one model transaction per thousand: 10,000 x 2 Model route
// calls took minutes).
//   node --import tsx bench/reads.ts [--series 1000] [--points 10000] [--big-points 10000000] [--snapshot-attributes 10000] [--repeat 15] [--rows snapshot,raw_one] [--json]
// --keep: leave the data directory and the model database in place (their paths are logged), to start a service on them again.
// --rows: only the reads whose names contain one of the comma-separated words (e.g. snapshot, raw_one, raw_hour, summary, render).
// (npm run bench:reads)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import { pino } from 'pino';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import { parseJson, stringifyJson } from '../src/json/json.js';
import { modelTransaction } from '../src/model/tx-log.js';
import { benchDatabase } from './bench-database.js';
import { threadCpuSeconds } from './process-figures.js';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
// @ts-expect-error a plain .mjs script without types
import { buildIfStale } from '../scripts/start.mjs';
import { freePort, sleep } from '../reliability/crash-loop/service-child.js';
import { createAssetIn } from '../src/model/assets/assets.js';
import { createAttributeIn } from '../src/model/attributes/attributes.js';
import { bindIn } from '../src/model/bindings/bindings.js';
import type { AttributeDefinition } from '../src/model/templates/templates.js';
import type { ValueType } from '../src/storage/encoding/chunk-types.js';
import type { PointBatch } from '../src/storage/series-store.js';

interface DatasetSeries { name: string; type: ValueType; points(): Iterable<[bigint, unknown, number]> }
interface Columns { id: string; times: BigInt64Array; values: PointBatch['values']; quality: Uint32Array }

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : dflt; };
const JSON_OUT = args.includes('--json');
const KEEP = args.includes('--keep');
const FROM_SOURCE = args.includes('--source');
const ROWS = args.includes('--rows') ? args[args.indexOf('--rows') + 1].split(',').filter((w) => w !== '') : [];
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };
const ENUM_SET = '00000000-0000-4000-8000-00000000e001';
const HOUR = 3_600_000_000_000n, SEC = 1_000_000_000n, DAY = 24n * HOUR;

interface Plan {
  url: string; repeat: number; rows: string[];
  /** The service's process: the client reads its CPU per thread around each read (/proc). */
  serverPid: number;
  fleet: string; oneAttribute: string; big: string; bigSeries: string;
  fleetStart: string; fleetEnd: string; hourStart: string; hourEnd: string; bigStart: string; bigEnd: string;
  fleetAttributes: number; numericAttributes: number;
  /** Attributes under /Wide (the wide snapshot's count). */
  wideAttributes: number;
}

// ---------------------------------------------------------------- client (second process)

/**
 * Waits until the service is idle (under 5% of a core over half a second, at most 60 s):
 * the write-up of the data leaves quiet seals and collections running, which the first
 * reads timed would otherwise share the cores with. Returns the seconds waited.
 */
async function settled(pid: number): Promise<number> {
  const t0 = performance.now();
  let before = await threadCpuSeconds(pid);
  while (performance.now() - t0 < 60_000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await threadCpuSeconds(pid);
    let used = 0;
    for (const [tid, s] of now) used += s - (before.get(tid) ?? 0);
    before = now;
    if (used < 0.025) break;
  }
  return +((performance.now() - t0) / 1000).toFixed(1);
}

async function client(plan: Plan): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const post = async (path: string, body: unknown, accept = 'application/json'): Promise<{ ms: number; bytes: number; body: Uint8Array }> => {
    const t0 = performance.now();
    const res = await fetch(plan.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: stringifyJson(body) });
    const buf = new Uint8Array(await res.arrayBuffer());
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(buf).toString().slice(0, 400)}`);
    return { ms, bytes: buf.length, body: buf };
  };
  // The bulk rows read through node:http, the clock stopped at the body's last byte and the
  // chunks joined after it: fetch's web-stream body (res.arrayBuffer) cost the client ~150 ms
  // of CPU per 49 MB on this 2-core box, in the same cores the service sends and encodes on,
  // and the join is the client's own work, not the service's (2026-11-28). A connection per
  // read: a kept-alive one sat idle past uWebSockets' 10 s timeout while the client parsed the
  // JSON hour at load ~19, and the next read on it failed with "socket hang up".
  const postBulk = (path: string, body: unknown, accept = 'application/json', agent: http.Agent | false = false): Promise<{ ms: number; bytes: number; body: Uint8Array }> => new Promise((resolve, reject) => {
    const data = Buffer.from(stringifyJson(body));
    const t0 = performance.now();
    const req = http.request(plan.url + path, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept, 'content-length': data.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => { chunks.push(c); });
      res.on('end', () => {
        const ms = performance.now() - t0;
        const buf = Buffer.concat(chunks);
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode} ${buf.toString().slice(0, 400)}`));
        else resolve({ ms, bytes: buf.length, body: buf });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
  const get = async (path: string): Promise<{ ms: number; bytes: number; body: Uint8Array }> => {
    const t0 = performance.now();
    const res = await fetch(plan.url + path);
    const buf = new Uint8Array(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(buf).toString().slice(0, 400)}`);
    return { ms: performance.now() - t0, bytes: buf.length, body: buf };
  };
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
  /** Warm-up (one run, `n` more for a short read), then `n` timed runs: the median ms, and the last body. */
  // a failing read is recorded (`<name>_error`) and the others still run; its body is then empty
  const timed = async (name: string, n: number, run: () => Promise<{ ms: number; bytes: number; body: Uint8Array }>) => {
    if (plan.rows.length > 0 && !plan.rows.some((w) => name.includes(w))) return Buffer.from('[]');
    try {
      let last = await run();
      // short reads warm up as many times as they are timed, and at least 100 times: the first
      // few dozen run before the client's and the service's code is optimised (a 1,000-attribute
      // snapshot: ~12 ms p50 over its first 21 reads, ~4 ms after; after 21 warm-ups, its 21
      // timed reads still cost the HTTP thread 2.86 ms each and V8's platform threads 3.3 more,
      // against 0.95 ms in all for the same read a row later, load ~10, 2026-11-28)
      if (last.ms < 50) for (let i = 0; i < Math.max(n, 100); i++) last = await run();
      const ms: number[] = [];
      // the service's CPU over the timed runs: all threads, and its HTTP thread (the thread id is the pid)
      const cpu0 = await threadCpuSeconds(plan.serverPid);
      // a long read starts on a collected client heap: the last read's body and the parsed JSON
      // hour before it (hundreds of MB) were otherwise held or collected by the client during the next
      // timed read, on the two cores the service sends on (the columns hour read alone: 95 ms;
      // the same read after the JSON rows: 206 ms, with the same service CPU, 2026-11-28)
      const collect = last.ms >= 50 ? (globalThis as { gc?: () => void }).gc : undefined;
      const dropped = { ms: 0, bytes: 0, body: new Uint8Array(0) };
      for (let i = 0; i < n; i++) {
        if (collect !== undefined) { last = dropped; collect(); }
        last = await run();
        ms.push(last.ms);
      }
      const cpu1 = await threadCpuSeconds(plan.serverPid);
      let all = 0;
      for (const [tid, s] of cpu1) all += s - (cpu0.get(tid) ?? 0);
      out[`${name}_ms_p50`] = +median(ms).toFixed(2);
      out[`${name}_service_cpu_ms`] = +((all * 1000) / n).toFixed(2);
      out[`${name}_http_thread_cpu_ms`] = +((((cpu1.get(plan.serverPid) ?? 0) - (cpu0.get(plan.serverPid) ?? 0)) * 1000) / n).toFixed(2);
      // the busiest threads' CPU a read, by thread id minus the pid (0: the HTTP thread; V8's
      // platform threads come next, the read workers later): where the rest of the service CPU lands
      const perThread = [...cpu1].map(([tid, s]) => [tid - plan.serverPid, ((s - (cpu0.get(tid) ?? 0)) * 1000) / n] as const).filter(([, ms]) => ms > 0);
      out[`${name}_thread_cpu_ms`] = Object.fromEntries(perThread.sort((a, b) => b[1] - a[1]).slice(0, 6).map(([t, ms]) => [`+${t}`, +ms.toFixed(2)]));
      out[`${name}_bytes`] = last.bytes;
      return last.body;
    } catch (e) {
      out[`${name}_error`] = String((e as Error).cause ?? (e as Error).message).slice(0, 300);
      return Buffer.from('[]');
    }
  };
  const fleet = { select: { kind: 'all' }, scope: { under: { kind: 'path', content: plan.fleet } } };
  const R = plan.repeat;
  out.settle_s = await settled(plan.serverPid);

  // resolution alone (the model query every read starts with), for the breakdown
  await timed('resolve_fleet_model_route', R, () => post('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } }));
  await timed('resolve_one_model_route', R * 3, () => post('/v1/model/resolve', { select: { kind: 'attribute_ids', content: [plan.big] }, scope: {} }));
  // The snapshots read through node:http over one kept-alive connection (an HMI polling),
  // timed to the body's last byte. Through fetch (undici, the row "through fetch") the client
  // itself spent 2.4-4 ms of CPU and waited ~4 ms for the first byte per 359 KB snapshot, on
  // the same two cores as a service whose HTTP thread spent 1-2 ms on it (2026-11-28,
  // decisions.md). JSON.parse of the body is the client's own step after it: its own figure.
  const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const plantSnapshot = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Plant' } } } };
  const snap = await timed('snapshot_1000', R * 3, () => postBulk('/v1/read/snapshot', plantSnapshot, 'application/json', kept));
  out.snapshot_1000_attributes = (parseJson(snap) as unknown[]).length;
  if (snap.length > 2) {
    const parse: number[] = [];
    for (let i = 0; i < R * 3; i++) { const t0 = performance.now(); JSON.parse(Buffer.from(snap.buffer, snap.byteOffset, snap.length).toString('utf8')); parse.push(performance.now() - t0); }
    out.snapshot_1000_client_parse_ms = +median(parse).toFixed(2);
  }
  await timed('snapshot_1000_fetch', R * 3, () => post('/v1/read/snapshot', plantSnapshot));
  const everything = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Wide' } } } };
  const wide = await timed('snapshot_wide', R * 3, () => postBulk('/v1/read/snapshot', everything, 'application/json', kept));
  out.snapshot_wide_attributes = (parseJson(wide) as unknown[]).length;
  await timed('snapshot_wide_msgpack', R * 3, () => postBulk('/v1/read/snapshot', everything, 'application/x-msgpack', kept));
  kept.destroy();

  const one = { select: { kind: 'attribute_ids', content: [plan.oneAttribute] }, scope: {} };
  const raw1 = await timed('raw_one_attribute_json', R * 3, () => post('/v1/read/raw', { resolve: one, start_ns: BigInt(plan.fleetStart), end_ns: BigInt(plan.fleetEnd) }));
  out.raw_one_attribute_points = (parseJson(raw1) as Array<{ segments: Array<{ points: unknown[] }> }>)[0]?.segments.reduce((a, s) => a + s.points.length, 0);

  const hour = { start_ns: BigInt(plan.hourStart), end_ns: BigInt(plan.hourEnd), max_points: 10_000_000 };
  {
    // parsed in a block of its own: millions of parsed objects left reachable made the client's
    // collector pause for seconds during the next read, on a loaded box long enough (10 s
    // without reading) for uWebSockets to close the response (docs/decisions.md)
    const items = parseJson(await timed('raw_hour_all_numeric_json', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour }))) as Array<{ segments: Array<{ points: unknown[] }> }>;
    out.raw_hour_attributes = items.length;
    out.raw_hour_points = items.reduce((a, i) => a + i.segments.reduce((b, s) => b + s.points.length, 0), 0);
  }
  await timed('raw_hour_all_numeric_msgpack', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour }, 'application/x-msgpack'));
  // the columns layout (typed columns per segment, as the series routes' bulk reads): a third of the rows' bytes
  await timed('raw_hour_all_numeric_msgpack_columns', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour, layout: 'columns' }, 'application/x-msgpack'));
  await timed('raw_hour_all_numeric_json_columns', R, () => postBulk('/v1/read/raw', { resolve: fleet, ...hour, layout: 'columns' }));

  const bigOne = { select: { kind: 'attribute_ids', content: [plan.big] }, scope: {} };
  const bigRange = { start_ns: BigInt(plan.bigStart), end_ns: BigInt(plan.bigEnd) };
  const rollupStats = ['count', 'min', 'max', 'first', 'last', 'twa', 'percent_good'];
  const sum = await timed('summary_big_1d_rollup_stats', R * 3, () => post('/v1/read/summary', { resolve: bigOne, ...bigRange, interval: '1d', stats: rollupStats }));
  out.summary_big_1d_intervals = (parseJson(sum) as Array<{ intervals: unknown[] }>)[0]?.intervals.length;
  await timed('summary_big_1d_all_stats', Math.max(1, Math.floor(R / 3)), () => post('/v1/read/summary', { resolve: bigOne, ...bigRange, interval: '1d', stats: ['count', 'min', 'max', 'first', 'last', 'mean', 'twa', 'range', 'stddev', 'percent_good', 'duration_good_ns', 'duration_bad_ns', 'duration_uncertain_ns'] }));
  const twa = await timed('summary_1m_twa_hour_all_numeric', R, () => post('/v1/read/summary', { resolve: fleet, start_ns: hour.start_ns, end_ns: hour.end_ns, interval: '1m', stats: ['twa'] }));
  out.summary_1m_twa_attributes = (parseJson(twa) as unknown[]).length;

  const q = new URLSearchParams({ start_ns: plan.bigStart, end_ns: plan.bigEnd, width: '1000' });
  await timed('render_series_route_big_w1000', R * 2, () => get(`/v1/series/${plan.bigSeries}/render?${q}`));
  await timed('render_resolved_big_w1000', R * 2, () => post('/v1/read/render', { resolve: bigOne, ...bigRange, width: 1000 }));
  out.render_resolved_over_series_route = +((out.render_resolved_big_w1000_ms_p50 as number) / (out.render_series_route_big_w1000_ms_p50 as number)).toFixed(2);
  return out;
}

// ---------------------------------------------------------------- service and data (this process)

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

const slice = (c: Columns, a: number, b: number, id = c.id): PointBatch => ({
  series: id, times: c.times.subarray(a, b), quality: c.quality.subarray(a, b),
  values: Array.isArray(c.values) ? c.values.slice(a, b) : (c.values as Float64Array).subarray(a, b),
});

/**
 * `count` more float64 attributes under /Wide (100 per unit asset), each bound to a series
 * of its own holding ten points (the last at `endNs` - 1 s), for the wide snapshot.
 */
async function addWide(svc: Awaited<ReturnType<typeof startService>>, count: number, endNs: bigint, out: Record<string, unknown>): Promise<void> {
  const parts = svc.context.parts;
  const model = parts.model;
  if (!model) throw new Error('the model is not started');
  const who = { principal: 'bench' };
  const t0 = performance.now();
  log(`adding ${count} attributes under /Wide for the wide snapshot ...`);
  const ids: string[] = [];
  for (let a = 0; a < count; a += 1000) {
    const made = await parts.series.ensureManyForSource(Array.from({ length: Math.min(1000, count - a) }, (_, i) => ({ sourceName: `bench/wide/${a + i}`, valueType: 'float64' as const })), who);
    for (const m of made) { if (m.error) throw m.error; ids.push(m.record.id); }
    const batches: PointBatch[] = ids.slice(a).map((series, i) => {
      const times = new BigInt64Array(10), values = new Float64Array(10);
      for (let k = 0; k < 10; k++) { times[k] = endNs - BigInt(10 - k) * SEC; values[k] = Math.round(((a + i) % 997) * 10 + k) / 10; }
      return { series, times, values, quality: new Uint32Array(10).fill(192) };
    });
    await parts.storage.write(batches, who);
  }
  const definition = (name: string): AttributeDefinition => ({ name, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] });
  const root = (await modelTransaction(model.db, who, (q, tx, ev) => createAssetIn(q, tx, ev, { name: 'Wide' }))).result;
  for (let a = 0; a < count; a += 1000) {
    await modelTransaction(model.db, who, async (q, tx, ev) => {
      let unit = '';
      for (let i = a; i < Math.min(count, a + 1000); i++) {
        if (i % 100 === 0) unit = await createAssetIn(q, tx, ev, { name: `W${i / 100}`, parent: root });
        const attribute = await createAttributeIn(q, tx, ev, { asset_id: unit, definition: definition(`v${i % 100}`) });
        await bindIn(q, tx, ev, { attribute_id: attribute, series_id: ids[i], from_ns: endNs - DAY });
      }
    });
  }
  out.wide_build_s = +((performance.now() - t0) / 1000).toFixed(1);
}

const CONTINUITY: Record<ValueType, string> = { float64: 'continuous', int64: 'continuous', boolean: 'stepped', enum: 'stepped', string: 'event' };

// The reads are timed against a service in a process of its own, started as `npm start` starts
// it (its Node flags and allocator settings, the built code unless --source) on the data set
// this process wrote: the writer's heap (the generated columns, the 10M-point series) and
// tsx's in-memory compilation are not the service's, and their garbage collection ran on the
// same two cores as the reads.
async function serviceProcess(dataDir: string, databaseUrl: string | undefined): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  if (!FROM_SOURCE && buildIfStale() !== 0) throw new Error('npm run build failed');
  const entry = FROM_SOURCE ? ['--import', 'tsx', 'src/main.ts'] : ['dist/main.js'];
  const httpPort = await freePort(), grpcPort = await freePort();
  const server: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...entry], {
    env: { ...process.env, SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: String(httpPort), SERVICE_GRPC_PORT: String(grpcPort), SERVICE_DATA_DIR: dataDir,
      SERVICE_AUTH_MODE: 'disabled', SERVICE_LOG_LEVEL: 'error', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = () => new Promise<void>((resolve) => {
    if (server.exitCode !== null) { resolve(); return; }
    server.once('exit', () => resolve()); server.kill('SIGTERM'); setTimeout(() => server.kill('SIGKILL'), 10_000).unref();
  });
  const url = `http://127.0.0.1:${httpPort}`;
  for (const end = Date.now() + 300_000; ;) {
    try { if ((await fetch(`${url}/v1/healthz`)).ok) break; } catch { /* not up yet */ }
    if (server.exitCode !== null) throw new Error(`the service exited with ${server.exitCode} before answering /v1/healthz`);
    if (Date.now() > end) { await stop(); throw new Error('the service did not answer /v1/healthz in 300 s'); }
    await sleep(250);
  }
  return { url, pid: server.pid as number, stop };
}

async function main() {
  const SERIES = opt('series', 1000), POINTS = opt('points', 10_000), BIG = opt('big-points', 10_000_000), REPEAT = Math.max(1, opt('repeat', 15));
  const WIDE = opt('snapshot-attributes', 10_000);
  // the model on a fresh database of DATABASE_URL's server when it is set, else PGlite
  const db = await benchDatabase('reads', { pglite: !process.env.DATABASE_URL });
  const dataDir = db.dataDir;
  const config = loadConfig({ SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled', ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}) });
  const svc = await startService(config, pino({ level: 'silent' }));
  const parts = svc.context.parts;
  const url = `http://127.0.0.1:${svc.http.port}`;
  const who = { principal: 'bench' };
  const out: Record<string, unknown> = { series: SERIES, points_per_series: POINTS, big_series_points: BIG, workers: config.workers, repeat: REPEAT, model: db.databaseUrl ? 'postgresql' : 'pglite', swapped_series: 0 };
  const call = async (path: string, body: unknown, status = 201): Promise<Record<string, unknown>> => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stringifyJson(body) });
    const text = await res.text();
    if (res.status !== status) throw new Error(`${path}: ${res.status} ${text}`);
    return parseJson(Buffer.from(text)) as Record<string, unknown>;
  };
  let stopped = false;
  let served: Awaited<ReturnType<typeof serviceProcess>> | undefined;
  try {
    log(`generating ${SERIES} x ${POINTS} points and one series of ${BIG} ...`);
    const list = datasetSeries({ series: SERIES, points: POINTS }) as DatasetSeries[];
    const cols: Columns[] = [];
    for (const s of list) {
      const r = await parts.series.create({ sourceName: s.name, valueType: s.type, ...(s.type === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2, 3, 4, 5] } } : {}) }, who);
      cols.push(columnsOf(r.id, s, POINTS));
    }
    const bigSource = (datasetSeries({ series: 1, points: BIG }) as DatasetSeries[])[0];
    const bigSeries = await parts.series.create({ sourceName: 'bench/big', valueType: bigSource.type }, who);
    const bigCols = columnsOf(bigSeries.id, bigSource, BIG);
    let fleetStart = cols[0].times[0], fleetEnd = cols[0].times[0];
    for (const c of cols) {
      if (c.times[0] < fleetStart) fleetStart = c.times[0];
      if (c.times[c.times.length - 1] > fleetEnd) fleetEnd = c.times[c.times.length - 1];
    }
    fleetEnd += 1n;
    // the middle of the 1-second series' range (text series run 10x longer, vibration 10x shorter)
    const mid = fleetStart + BigInt(Math.floor(POINTS / 2)) * SEC;
    // a tenth of the fleet (every tenth series) swaps sensors at `mid`: the second half of its points is the new sensor's
    const swapped = new Map<number, string>();
    for (let i = 0; i < cols.length; i += 10) {
      const r = await parts.series.create({ sourceName: `${list[i].name}/new`, valueType: list[i].type, ...(list[i].type === 'enum' ? { enumSet: { id: ENUM_SET, ordinals: [0, 1, 2, 3, 4, 5] } } : {}) }, who);
      swapped.set(i, r.id);
    }
    out.swapped_series = swapped.size;

    log('writing through the write path (durable group commits) ...');
    const SLICE = 1000;
    const t0 = performance.now();
    let written = 0;
    for (let a = 0; a < POINTS; a += SLICE) {
      const batches: PointBatch[] = [];
      cols.forEach((c, i) => {
        const b = Math.min(c.times.length, a + SLICE);
        if (a >= b) return;
        const alt = swapped.get(i);
        if (alt === undefined) { batches.push(slice(c, a, b)); return; }
        // split at mid: before it the old sensor, from it the new one
        let m = a;
        while (m < b && c.times[m] < mid) m++;
        if (m > a) batches.push(slice(c, a, m));
        if (b > m) batches.push(slice(c, m, b, alt));
      });
      written += (await parts.storage.write(batches, who)).accepted;
    }
    for (let a = 0; a < bigCols.times.length; a += 100_000) written += (await parts.storage.write([slice(bigCols, a, Math.min(bigCols.times.length, a + 100_000))], who)).accepted;
    out.write_points_per_s = Math.round(written / ((performance.now() - t0) / 1000));
    await parts.storage.sealHeads(0);

    log('building the plant tree and binding every series ...');
    const m0 = performance.now();
    const asset = async (name: string, parent?: string) => (await call('/v1/model/assets', { name, ...(parent ? { parent } : {}) }, 200)).asset_id as string;
    const plant = await asset('Plant');
    const fleetRoot = await asset('Fleet', plant), textRoot = await asset('Text', plant), bigRoot = await asset('Big', plant);
    const from = fleetStart - 24n * HOUR;
    const attribute = async (assetId: string, name: string, type: ValueType) => (await call('/v1/model/attributes', {
      asset_id: assetId,
      definition: { name, quantity_kind_id: null, default_unit_id: null, continuity_class: CONTINUITY[type], writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] },
    })).attribute_id as string;
    const bind = (attributeId: string, seriesId: string, fromNs: bigint) => call('/v1/model/bindings', { attribute_id: attributeId, series_id: seriesId, from_ns: fromNs });
    const PER_UNIT = 10, PER_AREA = 10;
    let unit = '', textUnit = '', oneAttribute = '';
    let numeric = 0;
    const areas: string[] = [];
    for (let i = 0; i < cols.length; i++) {
      const text = list[i].type === 'string';
      if (text) {
        if (textUnit === '' || i % PER_UNIT === 0) textUnit = await asset(`T${i}`, textRoot);
      } else {
        if (i % (PER_UNIT * PER_AREA) === 0) areas.push(await asset(`Area${areas.length + 1}`, fleetRoot));
        if (i % PER_UNIT === 0 || unit === '') unit = await asset(`Unit${i}`, areas[areas.length - 1]);
        numeric++;
      }
      const a = await attribute(text ? textUnit : unit, list[i].name.replace(/[^A-Za-z0-9_-]/g, '_'), list[i].type);
      await bind(a, cols[i].id, from);
      const alt = swapped.get(i);
      if (alt !== undefined) await bind(a, alt, mid);
      if (oneAttribute === '' && list[i].type === 'float64' && alt === undefined && cols[i].times.length === POINTS) oneAttribute = a;
    }
    const historian = await asset('Historian', bigRoot);
    const bigAttr = await attribute(historian, 'Value', bigSource.type);
    await bind(bigAttr, bigSeries.id, bigCols.times[0] - 24n * HOUR);
    out.model_build_s = +((performance.now() - m0) / 1000).toFixed(1);
    out.numeric_attributes = numeric;
    const wideCount = Math.max(0, WIDE);
    if (wideCount > 0) await addWide(svc, wideCount, fleetEnd, out);

    const day0 = bigCols.times[0] - (bigCols.times[0] % DAY);
    // the hour straddles the swap
    const hourStart = mid - HOUR / 2n, hourEnd = hourStart + HOUR;
    const plan: Plan = {
      url: '', repeat: REPEAT, rows: ROWS, serverPid: 0, fleet: '/Plant/Fleet', oneAttribute, big: bigAttr, bigSeries: bigSeries.id,
      fleetStart: String(fleetStart), fleetEnd: String(fleetEnd), hourStart: String(hourStart), hourEnd: String(hourEnd),
      // UTC days: day intervals on midnights, as a plant asks for them (interior hours all come from rollups)
      bigStart: String(day0), bigEnd: String(day0 + DAY * ((bigCols.times[bigCols.times.length - 1] - day0) / DAY + 1n)),
      fleetAttributes: cols.length, numericAttributes: numeric, wideAttributes: wideCount,
    };
    cols.length = 0;
    await svc.stop(2_000);
    stopped = true;
    log('starting the service in its own process on that data ...');
    served = await serviceProcess(dataDir, db.databaseUrl);
    plan.url = served.url;
    plan.serverPid = served.pid;
    log('HTTP reads from a second process ...');
    const planFile = join(dataDir, 'plan.json');
    await writeFile(planFile, JSON.stringify(plan));
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname, '--client', planFile], { maxBuffer: 1 << 24 }, (err, so, se) => (err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so)));
    });
    Object.assign(out, JSON.parse(stdout));
  } finally {
    if (!stopped) await svc.stop(2_000);
    if (served !== undefined) await served.stop();
    // --keep: the data directory and the model database stay, for reads against a service started on them again (profiling)
    if (KEEP) log(`kept: SERVICE_DATA_DIR=${dataDir} DATABASE_URL=${db.databaseUrl ?? '(pglite)'} plan ${join(dataDir, 'plan.json')}`);
    else await db.drop();
  }
  out.not_measured = 'live updates (bench of issue 26 part D3)';
  if (JSON_OUT) { process.stdout.write(JSON.stringify(out) + '\n'); return; }
  const rows: Array<[string, string, string]> = [
    ['(resolution alone: POST /v1/model/resolve, all attributes)', `${out.resolve_fleet_model_route_ms_p50} ms`, ''],
    ['(resolution alone: POST /v1/model/resolve, one attribute)', `${out.resolve_one_model_route_ms_p50} ms`, ''],
    ['snapshot, 1,000 attributes', `${out.snapshot_1000_ms_p50} ms`, `target < 5 ms; service CPU ${out.snapshot_1000_service_cpu_ms} ms a read (HTTP thread ${out.snapshot_1000_http_thread_cpu_ms}); the client's JSON.parse after it ${out.snapshot_1000_client_parse_ms} ms`],
    ['  same, through fetch', `${out.snapshot_1000_fetch_ms_p50} ms`, `service CPU ${out.snapshot_1000_fetch_service_cpu_ms} ms a read`],
    [`snapshot, ${out.snapshot_wide_attributes} attributes`, `${out.snapshot_wide_ms_p50} ms`, `target < 30 ms; service CPU ${out.snapshot_wide_service_cpu_ms} ms a read (HTTP thread ${out.snapshot_wide_http_thread_cpu_ms})`],
    ['  same, msgpack', `${out.snapshot_wide_msgpack_ms_p50} ms`, `service CPU ${out.snapshot_wide_msgpack_service_cpu_ms} ms a read`],
    ['raw, one attribute, 10,000 points, JSON', `${out.raw_one_attribute_json_ms_p50} ms`, 'target <= 4.2 ms (VictoriaMetrics JSON export)'],
    [`raw, one hour of ${out.raw_hour_attributes} numeric attributes (${out.raw_hour_points} points), msgpack`, `${out.raw_hour_all_numeric_msgpack_ms_p50} ms`, 'target < 150 ms'],
    ['  same, JSON', `${out.raw_hour_all_numeric_json_ms_p50} ms`, 'target < 400 ms'],
    ['  same, columns layout, msgpack', `${out.raw_hour_all_numeric_msgpack_columns_ms_p50} ms`, `${out.raw_hour_all_numeric_msgpack_columns_bytes} bytes`],
    ['  same, columns layout, JSON', `${out.raw_hour_all_numeric_json_columns_ms_p50} ms`, `${out.raw_hour_all_numeric_json_columns_bytes} bytes`],
    [`summary, 10M-point series, ${out.summary_big_1d_intervals} 1-day intervals (rollup stats)`, `${out.summary_big_1d_rollup_stats_ms_p50} ms`, 'target < 5 ms'],
    ['  same, all stats (mean/stddev/bad/uncertain read every point)', `${out.summary_big_1d_all_stats_ms_p50} ms`, ''],
    [`summary, 1-minute twa over one hour of ${out.summary_1m_twa_attributes} attributes`, `${out.summary_1m_twa_hour_all_numeric_ms_p50} ms`, 'target < 150 ms'],
    ['render, 10M series, width 1000: series route', `${out.render_series_route_big_w1000_ms_p50} ms`, ''],
    ['render, 10M series, width 1000: through resolution', `${out.render_resolved_big_w1000_ms_p50} ms`, `${out.render_resolved_over_series_route}x (target <= 1.2x)`],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log(`resolved reads, ${out.series} series x ${out.points_per_series} + ${out.big_series_points} points, ${out.swapped_series} sensor swaps, ${out.workers} workers, median of ${out.repeat}+ runs (shared machine: pessimistic)`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w)}  ${b.padStart(10)}  ${c}`);
  console.log(`not measured: ${out.not_measured}`);
}

if (args.includes('--client')) {
  const { readFile } = await import('node:fs/promises');
  const plan = JSON.parse(await readFile(args[args.indexOf('--client') + 1], 'utf8')) as Plan;
  process.stdout.write(JSON.stringify(await client(plan)) + '\n');
} else {
  await main();
  if (KEEP) process.exit(0); // the kept database's admin connection would hold the process open
}
