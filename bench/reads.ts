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
import { execFile } from 'node:child_process';
import { pino } from 'pino';
// @ts-expect-error the shared dataset is plain JS without types
import { datasetSeries } from '../../shared/datasets/industrial.mjs';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import { parseJson, stringifyJson } from '../src/json/json.js';
import { modelTransaction } from '../src/model/tx-log.js';
import { benchDatabase } from './bench-database.js';
import type { Plan } from './reads-client.js';
import { SERVICE_NODE_FLAGS } from './service-flags.js';
// @ts-expect-error a plain .mjs script without types
import { buildIfStale, SERVICE_ENV } from '../scripts/start.mjs';
import { ServiceChild } from '../reliability/crash-loop/service-child.js';
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

// The client is a user's process, not the service: it runs without the glibc settings
// service-flags.ts put in this process's environment for the service (with
// MALLOC_MMAP_THRESHOLD_ each 64 KB chunk of a body was a fresh mapping: a columns hour's
// client CPU 150 -> 430 ms).
function clientEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(SERVICE_ENV as Record<string, string>)) delete env[k];
  return env;
}

// The reads are timed against a service in a process of its own, started as `npm start` starts
// it (its Node flags and allocator settings, the built code unless --source) on the data set
// this process wrote: the writer's heap (the generated columns, the 10M-point series) and
// tsx's in-memory compilation are not the service's, and their garbage collection ran on the
// same two cores as the reads.
async function serviceProcess(dataDir: string, databaseUrl: string | undefined, workers: number): Promise<ServiceChild> {
  if (!FROM_SOURCE && buildIfStale() !== 0) throw new Error('npm run build failed');
  const service = await ServiceChild.create({
    dataDir, logFile: join(dataDir, 'service.log'), built: !FROM_SOURCE, nodeArgs: [...SERVICE_NODE_FLAGS],
    ...(databaseUrl ? { databaseUrl } : {}),
    env: { ...(SERVICE_ENV as Record<string, string>), SERVICE_WORKERS: String(workers), SERVICE_LOG_LEVEL: 'error' },
  });
  await service.start(300_000);
  return service;
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
  let served: ServiceChild | undefined;
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
    served = await serviceProcess(dataDir, db.databaseUrl, config.workers);
    plan.url = served.url;
    plan.serverPid = served.pid as number;
    log('HTTP reads from a second process ...');
    const planFile = join(dataDir, 'plan.json');
    await writeFile(planFile, JSON.stringify(plan));
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--expose-gc', '--import', 'tsx', new URL('./reads-client.ts', import.meta.url).pathname, planFile], { maxBuffer: 1 << 24, env: clientEnv() }, (err, so, se) => (err ? reject(new Error(`${err.message}\n${se}`)) : resolve(so)));
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
    [`raw, one hour of ${out.raw_hour_attributes} numeric attributes (${out.raw_hour_points} points), msgpack`, `${out.raw_hour_all_numeric_msgpack_ms_p50} ms`, `${out.raw_hour_all_numeric_msgpack_bytes} bytes`],
    ['  same, JSON', `${out.raw_hour_all_numeric_json_ms_p50} ms`, `target < 400 ms; service CPU ${out.raw_hour_all_numeric_json_service_cpu_ms} ms, the client's ${out.raw_hour_all_numeric_json_client_cpu_ms} ms`],
    ['  same, columns layout, msgpack', `${out.raw_hour_all_numeric_msgpack_columns_ms_p50} ms`, `target < 150 ms (the issue's reference: 950 series-route reads, msgpack columns); ${out.raw_hour_all_numeric_msgpack_columns_bytes} bytes; service CPU ${out.raw_hour_all_numeric_msgpack_columns_service_cpu_ms} ms, the client's ${out.raw_hour_all_numeric_msgpack_columns_client_cpu_ms} ms`],
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

await main();
if (KEEP) process.exit(0); // the kept database's admin connection would hold the process open
