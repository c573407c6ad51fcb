// Annotations benchmark, through the running service over loopback HTTP (the client shares
// the process and its two cores with the server: figures are pessimistic):
//   1. query: POST /v1/annotations/query by one attribute and a one-day overlap, among
//      1,000,000 annotations on 1,000 attributes (1,000 each over a year: half instants, 40 %
//      ranges up to 2 h, 10 % ranges of 1-14 days), written with SQL generate_series first;
//   2. upload: a 100 MB attachment (POST /v1/annotations/attachments, sent by curl from its
//      own process) and the growth of this process's resident memory (the service's) over
//      its baseline, sampled every 10 ms.
// The query figure is the median (p50) of its runs, with p95 and max beside it.
//   node --expose-gc --import tsx bench/annotations.ts [--pglite] [--runs 201] [--upload-mb 100] [--json]
// Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and a fresh database
// dropped at the end; --pglite runs on the embedded model instead.
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import { openDb } from '../src/model/db.js';
import { migrate } from '../src/model/migrate.js';
import { nowNs } from '../src/clock.js';
import { queryAnnotations } from '../src/annotations/annotation-query.js';
import type { Queryable } from '../src/model/db.js';
import { mulberry32 } from './seeded-random.js';
import { benchDatabase } from './bench-database.js';
import { timedPost as post } from './timed-post.js';

const args = process.argv.slice(2);
const JSON_OUT = args.includes('--json');
const PGLITE = args.includes('--pglite');
const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
const RUNS = opt('runs', 201);
const UPLOAD_MB = opt('upload-mb', 100);
const log = (s: string) => { if (!JSON_OUT) process.stderr.write(s + '\n'); };

const ASSETS = 100, PER_ASSET = 10, ATTRIBUTES = ASSETS * PER_ASSET, PER_ATTRIBUTE = 1000, TOTAL = ATTRIBUTES * PER_ATTRIBUTE;
const SEC = 1_000_000_000n, HOUR = 3600n * SEC, DAY = 24n * HOUR;
const T0 = 1_750_000_000_000_000_000n;
const STEP = 365n * DAY / BigInt(PER_ATTRIBUTE);
const SEED = 'bench-annotations-v1';
const id = (kind: string, expr: string) => `md5('${SEED}' || '${kind}' || (${expr})::text)::uuid`;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const figures: Record<string, number | string> = {};

// deterministic choices
const rand = mulberry32(0x5eed);

const { databaseUrl, dataDir, drop } = await benchDatabase('annotations', { pglite: PGLITE });

async function seed(): Promise<void> {
  const db = await openDb({ url: databaseUrl, pgliteDir: join(dataDir, 'model') });
  try {
    await migrate(db);
    const t0 = process.hrtime.bigint();
    await db.transaction(async (q) => {
      const { rows } = await q.query<{ tx_id: bigint }>("INSERT INTO model_tx (committed_ns, principal, reason) VALUES ($1, 'bench', 'annotations bulk build') RETURNING tx_id", [nowNs()]);
      const tx = rows[0].tx_id;
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, timezone, tx_from) VALUES (${id('root', '0')}, NULL, 'Site', 'UTC', $1)`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, tx_from) SELECT ${id('asset', 'a')}, ${id('root', '0')}, 'Unit ' || a, $1 FROM generate_series(0, ${ASSETS - 1}) a`, [tx]);
      await q.query(`INSERT INTO attribute_version (attribute_id, asset_id, name, definition, tx_from)
        SELECT ${id('attr', 'i')}, ${id('asset', `i / ${PER_ASSET}`)}, 'Tag ' || (i % ${PER_ASSET}), '{}'::jsonb, $1 FROM generate_series(0, ${ATTRIBUTES - 1}) i`, [tx]);
      // annotation g: attribute g % ATTRIBUTES, its (g / ATTRIBUTES)-th note; start jittered by up to 8 h;
      // g % 10 < 5 an instant, < 9 a range up to 2 h, else 1-14 days
      const start = `(${T0}::bigint + (g / ${ATTRIBUTES})::bigint * ${STEP}::bigint + ((g * 7919) % 28800)::bigint * 1000000000)`;
      const dur = `(CASE WHEN g % 10 < 5 THEN 0::bigint WHEN g % 10 < 9 THEN ((g * 31) % 7200)::bigint * 1000000000 ELSE (g % 14 + 1)::bigint * 86400000000000 END)`;
      const text = `('Shift note ' || g || CASE g % 3 WHEN 0 THEN ': pump cavitation heard' WHEN 1 THEN ': filter changed' ELSE ': setpoint raised by operator' END)`;
      await q.query(`CREATE TEMP TABLE bench_note AS SELECT g, ${id('ann', 'g')} AS annotation_id, ${id('attr', `g % ${ATTRIBUTES}`)} AS attribute_id,
          ${id('asset', `(g % ${ATTRIBUTES}) / ${PER_ASSET}`)} AS asset_id, ${start} AS start_ns, ${start} + ${dur} AS end_ns, ${text} AS text
        FROM generate_series(0::bigint, ${TOTAL - 1}) g`);
      await q.query(`INSERT INTO annotation (annotation_id, version, target_kind, target_ids, scope_asset_ids, start_ns, end_ns, text, author, author_id, created_ns, updated_ns, updated_by, tx_id, search)
        SELECT annotation_id, 1, 'attributes', ARRAY[attribute_id], ARRAY[asset_id], start_ns, end_ns, text, 'bench', 'bench', start_ns, start_ns, 'bench', $1, to_tsvector('english', text) FROM bench_note`, [tx]);
      await q.query(`INSERT INTO annotation_target (target_id, span_class, start_ns, annotation_id, end_ns, asset_id)
        SELECT attribute_id, CASE WHEN end_ns = start_ns THEN 0 ELSE length(ltrim((end_ns - start_ns)::bit(64)::text, '0')) END, start_ns, annotation_id, end_ns, asset_id FROM bench_note`);
      await q.query('INSERT INTO annotation_span_class (span_class) SELECT DISTINCT span_class FROM annotation_target ON CONFLICT DO NOTHING');
      await q.query(`INSERT INTO annotation_version (annotation_id, version, tx_id, principal, committed_ns, content)
        SELECT annotation_id, 1, $1, 'bench', start_ns, jsonb_build_object('target', jsonb_build_object('attributes', jsonb_build_array(attribute_id)), 'start_ns', start_ns, 'end_ns', end_ns, 'text', text, 'tags', '[]'::jsonb, 'attachment_ids', '[]'::jsonb) FROM bench_note`, [tx]);
      await q.query('DROP TABLE bench_note');
    });
    await db.exec('ANALYZE');
    log(`seeded ${TOTAL} annotations on ${ATTRIBUTES} attributes in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
  } finally {
    await db.close();
  }
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Uploads `mb` MB from a file by curl (its own process) and samples this process's RSS meanwhile. */
async function upload(url: string, mb: number): Promise<{ ms: number; baselineMb: number; peakGrowthMb: number; status: string }> {
  const file = join(dataDir, 'upload.bin');
  const f = await open(file, 'w');
  const chunk = randomBytes(1 << 20);
  for (let i = 0; i < mb; i++) await f.write(chunk);
  await f.close();
  gc?.(); gc?.();
  await new Promise((r) => setTimeout(r, 200));
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => { const r = process.memoryUsage().rss; if (r > peak) peak = r; }, 10);
  const t0 = process.hrtime.bigint();
  const out = await new Promise<string>((resolve, reject) => {
    const c = spawn('curl', ['-sS', '-X', 'POST', '-T', file, '-H', 'content-type: application/octet-stream', '-o', '-', '-w', '\n%{http_code}', `${url}/v1/annotations/attachments`]);
    let text = '';
    c.stdout.on('data', (d: Buffer) => { text += d.toString(); });
    c.on('error', reject);
    c.on('exit', () => resolve(text));
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  clearInterval(sampler);
  const status = out.trim().split('\n').pop() ?? '';
  if (status !== '201') throw new Error(`upload: ${out.slice(0, 300)}`);
  return { ms, baselineMb: baseline / 2 ** 20, peakGrowthMb: (peak - baseline) / 2 ** 20, status };
}

try {
  await seed();
} catch (e) {
  await drop();
  throw e;
}
const config = loadConfig({
  SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_AUTH_MODE: 'disabled',
  SERVICE_WORKERS: '2', SERVICE_ATTACHMENT_MAX_BYTES: String((UPLOAD_MB + 1) * 2 ** 20), ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const service = await startService(config, pino({ level: 'silent' }), { printBootstrapSecret: () => undefined });
const url = `http://127.0.0.1:${service.http.port}`;
try {
  // ---- 1. query by attribute and a one-day overlap
  const attributeIds = (await service.context.db.query<{ id: string }>(`SELECT ${id('attr', 'i')} AS id FROM generate_series(0, ${ATTRIBUTES - 1}) i`)).rows.map((r) => r.id);
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < RUNS + 10; i++) {
    const attribute = attributeIds[Math.floor(rand() * ATTRIBUTES)];
    const start = T0 + BigInt(Math.floor(rand() * 364)) * DAY;
    const r = await post(`${url}/v1/annotations/query`, { attributes: [attribute], start_ns: start, end_ns: start + DAY });
    if (i >= 10) { times.push(r.ms); found += (r.json as { items: unknown[] }).items.length; } // the first 10 warm up
  }
  figures.query_attribute_day_p50_ms = +quantile(times, 0.5).toFixed(2);
  figures.query_attribute_day_p95_ms = +quantile(times, 0.95).toFixed(2);
  figures.query_attribute_day_max_ms = +Math.max(...times).toFixed(2);
  figures.query_mean_found = +(found / RUNS).toFixed(2);
  // the database's own share: the same query's EXPLAIN ANALYZE execution time (no HTTP, no scheduling of this process)
  const db = service.context.db;
  const execMs: number[] = [];
  const explaining: Queryable = {
    exec: (sql) => db.exec(sql),
    async query<T>(text: string, params?: Parameters<Queryable['query']>[1]) {
      if (!text.includes('annotation_span_class')) return db.query<T>(text, params);
      const { rows } = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
      const plan = rows[0]['QUERY PLAN'];
      const top = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ 'Execution Time': number }>;
      execMs.push(top[0]['Execution Time']);
      return { rows: [] as T[], rowCount: 0 };
    },
  };
  for (let i = 0; i < 41; i++) {
    const start = T0 + BigInt(Math.floor(rand() * 364)) * DAY;
    await queryAnnotations(explaining, { attributes: [attributeIds[Math.floor(rand() * ATTRIBUTES)]], window: { startNs: start, endNs: start + DAY } }, { limit: 100 });
  }
  figures.query_sql_execution_p50_ms = +quantile(execMs, 0.5).toFixed(3);

  // ---- 2. a large upload, streamed
  const up = await upload(url, UPLOAD_MB);
  figures.upload_mb = UPLOAD_MB;
  figures.upload_ms = Math.round(up.ms);
  figures.upload_rss_baseline_mb = +up.baselineMb.toFixed(1);
  figures.upload_rss_growth_mb = +up.peakGrowthMb.toFixed(1);
} finally {
  await service.stop(2_000);
  await drop();
}
figures.model = PGLITE ? 'pglite' : 'postgres';
figures.annotations = TOTAL;
figures.loadavg_1m = +loadavg()[0].toFixed(2);
figures.gc_exposed = gc ? 'yes' : 'no';

if (JSON_OUT) process.stdout.write(JSON.stringify(figures) + '\n');
else {
  const rows: Array<[string, string]> = [
    ['model', String(figures.model)],
    ['annotations', String(TOTAL)],
    [`query: one attribute, one-day overlap (p50 of ${RUNS})`, `${figures.query_attribute_day_p50_ms} ms (goal < 10 ms)`],
    ['query p95 / max', `${figures.query_attribute_day_p95_ms} / ${figures.query_attribute_day_max_ms} ms`],
    ['annotations found per query (mean)', String(figures.query_mean_found)],
    ['the SQL alone: EXPLAIN ANALYZE execution time (p50 of 41)', `${figures.query_sql_execution_p50_ms} ms`],
    [`upload of ${UPLOAD_MB} MB`, `${figures.upload_ms} ms`],
    ['service RSS growth during the upload', `${figures.upload_rss_growth_mb} MB (goal < 16 MB; baseline ${figures.upload_rss_baseline_mb} MB)`],
    ['load average (1 min) at the end', String(figures.loadavg_1m)],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
}
