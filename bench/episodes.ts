// Episodes benchmark, through the running service over loopback HTTP (the client shares
// the process and its two cores with the server: figures are pessimistic):
//   1. query: POST /v1/episodes/query by asset subtree (an area of 100 units) and a one-day
//      overlap, among 1,000,000 episodes on 10,000 assets (100 per unit, 2 days long,
//      every 3.65 days over a year), written with SQL generate_series before the start;
//   2. overlay: POST /v1/read/episode-overlay of 100 batches x 10 attributes x 500 points
//      (10 units with 10 float attributes, one point a second, ten 10-minute batches each),
//      in the spec's row layout (JSON) and the columns layout (JSON, msgpack), timed to the
//      last byte received (the client's parse is not counted), with the process's CPU time
//      per overlay (service, read workers and client: steadier than wall time under load);
//   3. trigger: from the instant a live condition has held for min_duration_ms to its
//      episode committed (a collector sends the points over gRPC; 20 cycles).
// Each figure is the median (p50) of its runs; max beside it.
//   node --import tsx bench/episodes.ts [--pglite] [--runs 41] [--phases query,overlay,trigger] [--layouts rows,columns_json,columns_msgpack] [--reuse-db NAME] [--json]   (npm run bench:episodes)
// Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and a fresh database
// dropped at the end; --pglite runs on the embedded model instead.
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import { openDb } from '../src/model/db.js';
import { migrate } from '../src/model/migrate.js';
import { nowNs } from '../src/clock.js';
import { stringifyJson } from '../src/json/json.js';
import { CollectorClient } from '../src/collector/collector-client.js';
import { mulberry32 } from './seeded-random.js';
import { unpack } from 'msgpackr';
import { benchDatabase } from './bench-database.js';
import { timedPost as post } from './timed-post.js';

const args = process.argv.slice(2);
const JSON_OUT = args.includes('--json');
const PGLITE = args.includes('--pglite');
const RUNS = (() => { const i = args.indexOf('--runs'); return i >= 0 ? Number(args[i + 1]) : 41; })();
/** Which figures to take (default all): --phases query,overlay,trigger. Without query no episodes are seeded. */
const PHASES = new Set((() => { const i = args.indexOf('--phases'); return i >= 0 ? args[i + 1].split(',') : ['query', 'overlay', 'trigger']; })());
/** Which overlay layouts to time (default all): --layouts rows,columns_json,columns_msgpack. */
const LAYOUTS = new Set((() => { const i = args.indexOf('--layouts'); return i >= 0 ? args[i + 1].split(',') : ['rows', 'columns_json', 'columns_msgpack']; })());
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };

const AREAS = 100, UNITS_PER_AREA = 100, UNITS = AREAS * UNITS_PER_AREA, PER_UNIT = 100;
const SEC = 1_000_000_000n, HOUR = 3600n * SEC, DAY = 24n * HOUR;
const T0 = 1_750_000_000_000_000_000n;
const STEP = 365n * DAY / BigInt(PER_UNIT), SPAN = 2n * DAY;
const SEED = 'bench-episodes-v1';
const id = (kind: string, expr: string) => `md5('${SEED}' || '${kind}' || (${expr})::text)::uuid`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs: number[]) => Math.max(...xs);
const figures: Record<string, number | string> = {};

// deterministic choices
const rand = mulberry32(0x5eed);

/** --reuse-db NAME: seed that database once and keep it between runs (the seed takes minutes). */
const REUSE = (() => { const i = args.indexOf('--reuse-db'); return i >= 0 ? args[i + 1] : undefined; })();
if (REUSE && [...PHASES].some((p) => p !== 'query')) throw new Error('--reuse-db goes with --phases query (the other phases create named templates once)');
const { databaseUrl, dataDir, reused, drop } = await benchDatabase('episodes', { pglite: PGLITE, reuse: REUSE });

async function seed(): Promise<{ templateId: string }> {
  const db = await openDb({ url: databaseUrl, pgliteDir: join(dataDir, 'model') });
  try {
    await migrate(db);
    if (reused) {
      const { rows } = await db.query<{ id: string }>(`SELECT template_id AS id FROM episode_template_version WHERE template_id = ${id('tpl', '0')}`);
      if (rows[0]) { log('reusing the seeded database'); return { templateId: rows[0].id }; }
    }
    const t0 = process.hrtime.bigint();
    const tpl = await db.transaction(async (q) => {
      const { rows } = await q.query<{ tx_id: bigint }>("INSERT INTO model_tx (committed_ns, principal, reason) VALUES ($1, 'bench', 'episodes bulk build') RETURNING tx_id", [nowNs()]);
      const tx = rows[0].tx_id;
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, timezone, tx_from) VALUES (${id('root', '0')}, NULL, 'Site', 'UTC', $1)`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, tx_from) SELECT ${id('area', 'a')}, ${id('root', '0')}, 'Area ' || a, $1 FROM generate_series(0, ${AREAS - 1}) a`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, tx_from) SELECT ${id('unit', 'u')}, ${id('area', `u / ${UNITS_PER_AREA}`)}, 'Unit ' || u, $1 FROM generate_series(0, ${UNITS - 1}) u`, [tx]);
      const roleId = (await q.query<{ id: string }>(`SELECT ${id('role', '0')} AS id`)).rows[0].id;
      await q.query(`INSERT INTO registry_entry_version (entry_id, kind, name, valid_from_ns, tx_from) VALUES ($1, 'episode-roles', 'unit', 0, $2)`, [roleId, tx]);
      const definition = { overlap: 'allowed', retro_edit_approval: 'none', roles: [{ role: 'unit', role_id: roleId, cardinality: 'one', required: true }], attributes: [], naming_pattern: null, permitted_children: [], trigger: null };
      const templateId = (await q.query<{ id: string }>(`SELECT ${id('tpl', '0')} AS id`)).rows[0].id;
      await q.query(`INSERT INTO episode_template_version (template_id, version, name, family, definition, tx_from) VALUES ($1, 1, 'Run', 'run', $2::jsonb, $3)`, [templateId, JSON.stringify(definition), tx]);
      // episode g: unit g % UNITS, the (g / UNITS)-th of its runs; starts jittered per unit by up to 12 h
      const start = `(${T0}::bigint + (g / ${UNITS})::bigint * ${STEP}::bigint + ((g % ${UNITS}) * 7919 % 43200)::bigint * 1000000000)`;
      await q.query(`INSERT INTO episode_version (episode_id, version, template_id, template_version, name, state, start_ns, end_ns, parent_id, assets, attributes, void_reason, origin, tx_from)
        SELECT ${id('ep', 'g')}, 1, $1, 1, 'Run ' || g, 'closed', ${start}, ${start} + ${SPAN}, NULL,
               jsonb_build_array(jsonb_build_object('role', 'unit', 'asset_id', ${id('unit', `g % ${UNITS}`)})), '{}'::jsonb, NULL, 'manual', $2
          FROM generate_series(0, ${UNITS * PER_UNIT - 1}) g`, [templateId, tx]);
      await q.query(`INSERT INTO episode_asset (episode_id, asset_id, role, template_id, state, start_ns, end_ns)
        SELECT ${id('ep', 'g')}, ${id('unit', `g % ${UNITS}`)}, 'unit', $1, 'closed', ${start}, ${start} + ${SPAN}
          FROM generate_series(0, ${UNITS * PER_UNIT - 1}) g`, [templateId]);
      await q.query('UPDATE episode_span_bound SET max_span_ns = $1', [SPAN]);
      return templateId;
    });
    await db.exec('ANALYZE');
    log(`seeded ${UNITS * PER_UNIT} episodes on ${UNITS} units in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
    return { templateId: tpl };
  } finally {
    await db.close();
  }
}

const { templateId } = PHASES.has('query') ? await seed() : { templateId: '' };
const config = loadConfig({
  SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled',
  SERVICE_WORKERS: '2', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const service = await startService(config, pino({ level: 'silent' }), { printBootstrapSecret: () => undefined });
const url = `http://127.0.0.1:${service.http.port}`;
const parts = service.context.parts;
async function queryPhase(): Promise<void> {
  const areaIds = (await service.context.db.query<{ id: string }>(`SELECT ${id('area', 'a')} AS id FROM generate_series(0, ${AREAS - 1}) a`)).rows.map((r) => r.id);
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < RUNS + 3; i++) {
    const area = areaIds[Math.floor(rand() * AREAS)];
    const day = BigInt(Math.floor(rand() * 360));
    const r = await post(`${url}/v1/episodes/query`, { template_ids: [templateId], asset: { kind: 'under', content: area }, overlaps: { start_ns: T0 + day * DAY, end_ns: T0 + (day + 1n) * DAY }, limit: 1000 });
    if (i >= 3) { times.push(r.ms); found += (r.json as { items: unknown[] }).items.length; }
  }
  figures.query_p50_ms = median(times);
  figures.query_max_ms = max(times);
  figures.query_episodes_per_answer = found / RUNS;
}

/** A model template of 10 float attributes and a plant to hang units on. */
async function batchPlant(): Promise<{ templateId: string; plantId: string }> {
  const attrs = Array.from({ length: 10 }, (_, k) => ({ name: `A${k}`, quantity_kind_id: null, default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector', enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [] }));
  const mt = (await post(`${url}/v1/model/templates`, { name: 'Batch unit', attributes: attrs })).json as { template_id: string };
  const plant = (await post(`${url}/v1/model/assets`, { name: 'Batch plant' })).json as { asset_id: string };
  return { templateId: mt.template_id, plantId: plant.asset_id };
}

async function overlayPhase(plant: { templateId: string; plantId: string }): Promise<void> {
  await post(`${url}/v1/model/registries/episode-roles/entries`, { name: 'vessel' });
  const bt = (await post(`${url}/v1/episodes/templates`, { name: 'Batch', family: 'batch', overlap: 'forbidden-per-asset', retro_edit_approval: 'none', roles: [{ role: 'vessel', cardinality: 'one', required: true }] })).json as { id: string };
  const B0 = T0 + 400n * DAY, BATCH = 600n * SEC;
  const episodeIds: string[] = [];
  for (let u = 0; u < 10; u++) {
    const unit = (await post(`${url}/v1/model/assets`, { name: `Vessel ${u}`, parent: plant.plantId, template_id: plant.templateId })).json as { asset_id: string };
    const list = (await post(`${url}/v1/model/resolve`, { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: unit.asset_id } } })).json as { results: Array<{ attribute_id: string }> };
    for (const [k, a] of list.results.entries()) {
      const s = await parts.series.create({ sourceName: `vessel-${u}-${k}`, valueType: 'float64' }, { principal: 'bench' });
      await post(`${url}/v1/model/bindings`, { attribute_id: a.attribute_id, series_id: s.id, from_ns: B0 - HOUR });
      const n = 6000;
      const t = new BigInt64Array(n), v = new Float64Array(n);
      for (let i = 0; i < n; i++) { t[i] = B0 + BigInt(i) * SEC; v[i] = Math.sin(i / 100) * (k + 1) + u; }
      await parts.storage.write([{ series: s.id, times: t, values: v, quality: new Uint32Array(n).fill(192) }], { principal: 'bench' });
    }
    for (let b = 0; b < 10; b++) {
      // batches of different lengths: 600 s, 590 s, ... 510 s
      const e = (await post(`${url}/v1/episodes`, { template_id: bt.id, assets: [{ role: 'vessel', asset_id: unit.asset_id }], start_ns: B0 + BigInt(b) * BATCH, end_ns: B0 + BigInt(b) * BATCH + BATCH - BigInt(b) * 10n * SEC })).json as { id: string };
      episodeIds.push(e.id);
    }
  }
  const overlayBody = { resolve: { select: { kind: 'all' }, scope: { under: { kind: 'asset_id', content: plant.plantId } } }, episodes: { kind: 'ids', ids: episodeIds }, points: 500, mode: 'u-grid' };
  const countRows = (json: unknown) => (json as { episodes: Array<{ series: Array<{ points: unknown[] }> }> }).episodes
    .reduce((acc, e) => acc + e.series.reduce((a, s) => a + s.points.length, 0), 0);
  const countColumns = (body: unknown) => (body as { episodes: Array<{ series: Array<{ count: number }> }> }).episodes
    .reduce((acc, e) => acc + e.series.reduce((a, s) => a + s.count, 0), 0);
  // the spec's row layout (JSON), then the columns layout in JSON and in msgpack
  const layouts = [
    { name: 'rows', body: overlayBody, accept: 'application/json', runs: 5, count: (b: Uint8Array) => countRows(JSON.parse(Buffer.from(b).toString('utf8'))) },
    { name: 'columns_json', body: { ...overlayBody, layout: 'columns' }, accept: 'application/json', runs: 13, count: (b: Uint8Array) => countColumns(JSON.parse(Buffer.from(b).toString('utf8'))) },
    { name: 'columns_msgpack', body: { ...overlayBody, layout: 'columns' }, accept: 'application/x-msgpack', runs: 13, count: (b: Uint8Array) => countColumns(unpack(b)) },
  ];
  for (const l of layouts) {
    if (!LAYOUTS.has(l.name)) continue;
    const ov: number[] = [], cpu: number[] = [];
    let bytes = 0;
    for (let i = 0; i < l.runs + 3; i++) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const res = await fetch(`${url}/v1/read/episode-overlay`, { method: 'POST', headers: { 'content-type': 'application/json', accept: l.accept }, body: stringifyJson(l.body) });
      const body = new Uint8Array(await res.arrayBuffer());
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const c = process.cpuUsage(c0);
      if (i >= 3) cpu.push((c.user + c.system) / 1e3);
      if (res.status !== 200) throw new Error(`overlay ${l.name}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
      if (i >= 3) ov.push(ms);
      const pts = l.count(body);
      if (pts !== 100 * 10 * 500) throw new Error(`overlay ${l.name} answered ${pts} points`);
      bytes = body.byteLength;
    }
    figures[`overlay_${l.name}_p50_ms`] = median(ov);
    figures[`overlay_${l.name}_max_ms`] = max(ov);
    figures[`overlay_${l.name}_mb`] = Math.round(bytes / 1e5) / 10;
    // CPU time of this process (the service, its read workers and the client) per overlay: steadier than wall time on a loaded box
    figures[`overlay_${l.name}_cpu_ms`] = median(cpu);
  }
}

async function triggerPhase(plant: { templateId: string; plantId: string }): Promise<void> {
  const probe = (await post(`${url}/v1/model/assets`, { name: 'Probe', parent: plant.plantId, template_id: plant.templateId })).json as { asset_id: string };
  const probeAttr = ((await post(`${url}/v1/model/resolve`, { select: { kind: 'attributes_named', content: { name: 'A0' } }, scope: { under: { kind: 'asset_id', content: probe.asset_id } } })).json as { results: Array<{ attribute_id: string }> }).results[0].attribute_id;
  const collector = await CollectorClient.connect({ address: `127.0.0.1:${parts.ingest.port}`, collectorId: 'bench-line', epoch: 1n, streams: [{ name: 'probe', type: 'float64' }] });
  try {
    await post(`${url}/v1/model/bindings`, { attribute_id: probeAttr, series_id: collector.welcome.streams[0].series_id, from_ns: 0 });
    await post(`${url}/v1/model/registries/episode-roles/entries`, { name: 'probe' });
    const MIN_MS = 200;
    const tt = (await post(`${url}/v1/episodes/templates`, { name: 'High', family: 'excursion', overlap: 'forbidden-per-asset', retro_edit_approval: 'none', roles: [{ role: 'probe', cardinality: 'one', required: true }], trigger: { open_when: 'A0 > 50', min_duration_ms: MIN_MS } })).json as { id: string };
    const triggers = parts.episodes.triggers;
    for (let i = 0; i < 100 && triggers.targetCount === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const send = (v: number) => collector.send('LIVE', 0, 'float64', { times: BigInt64Array.of(nowNs()), values: Float64Array.of(v), quality: null });
    const items = async () => ((await post(`${url}/v1/episodes/query`, { template_ids: [tt.id] })).json as { items: Array<{ state: string }> }).items;
    for (let cycle = 0; cycle < 20; cycle++) {
      await send(60);
      for (let w = 0; w < 300 && !(await items()).some((e) => e.state === 'open'); w++) await new Promise((r) => setTimeout(r, 10));
      await send(10);
      for (let w = 0; w < 300 && (await items()).some((e) => e.state === 'open'); w++) await new Promise((r) => setTimeout(r, 10));
    }
    const lat = triggers.openLatencies.map((ns) => ns / 1e6);
    figures.trigger_opens = lat.length;
    if (lat.length > 0) { figures.trigger_p50_ms = median(lat); figures.trigger_max_ms = max(lat); }
  } finally {
    collector.close();
  }
}

try {
  if (PHASES.has('query')) await queryPhase();
  if (PHASES.has('overlay') || PHASES.has('trigger')) {
    const plant = await batchPlant();
    if (PHASES.has('overlay')) await overlayPhase(plant);
    if (PHASES.has('trigger')) await triggerPhase(plant);
  }
  figures.model = PGLITE ? 'pglite' : 'postgres';
  if (JSON_OUT) process.stdout.write(JSON.stringify(figures) + '\n');
  else {
    const show = (k: string, w = 8) => (typeof figures[k] === 'number' ? (figures[k] as number).toFixed(1) : '-').padStart(w);
    console.log(`episodes benchmark (${figures.model}, ${RUNS} queries; goals: query < 20 ms, overlay < 100 ms, trigger < 1000 ms)`);
    console.log('figure                                          p50 ms      max ms');
    console.log(`query: subtree of 100 units, 1-day overlap   ${show('query_p50_ms')}  ${show('query_max_ms', 10)}   (${figures.query_episodes_per_answer ?? '-'} episodes/answer)`);
    for (const l of ['rows', 'columns_json', 'columns_msgpack']) {
      console.log(`overlay ${l.padEnd(16)} 100 x 10 x 500  ${show(`overlay_${l}_p50_ms`)}  ${show(`overlay_${l}_max_ms`, 10)}   (${figures[`overlay_${l}_mb`] ?? '-'} MB, CPU p50 ${show(`overlay_${l}_cpu_ms`, 1)} ms)`);
    }
    console.log(`trigger: due -> episode committed            ${show('trigger_p50_ms')}  ${show('trigger_max_ms', 10)}   (${figures.trigger_opens ?? '-'} opens)`);
  }
} finally {
  await service.stop(2_000);
  await drop();
}
