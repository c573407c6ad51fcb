// Asset model benchmark: a model of 100,000 assets and 1,000,000 attributes (built with
// bulk SQL in one model transaction, deterministic ids from md5 of a fixed seed), then:
// resolve of ~10,000 attributes under a path (current model, warm tree), a subtree of
// ~10,000 nodes materialised with paths, the full tree load from the database, and an
// as-of resolve (cold: loads the tree at that transaction; warm: reuses it). Current
// resolves report the first run (cold: fills the attribute cache from SQL) and the
// median of the later ones (warm); as-of resolves always take the SQL path.
//   node --import tsx bench/model.ts [--json] [--runs 7] [--keep NAME]
// Uses DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and a fresh
// database dropped at the end. --keep NAME builds the model into database NAME once and
// keeps it; later runs with the same NAME reuse it (the build takes ~50 s).
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { openDb } from '../src/model/db.js';
import { migrate } from '../src/model/migrate.js';
import { AssetModel } from '../src/model/assets/asset-model.js';
import { resolve } from '../src/model/resolve/resolve.js';
import { nowNs } from '../src/clock.js';
import type { AssetNode } from '../src/model/assets/asset-tree.js';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const runs = (() => { const i = args.indexOf('--runs'); return i >= 0 ? Number(args[i + 1]) : 7; })();
const SEED = 'bench-model-v1';
const SITES = 10, AREAS = 100, ASSETS = 100_000, ATTRS_PER_UNIT = 10;
const UNITS = ASSETS - 1 - SITES - AREAS;

const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const admin = new pg.Client({ connectionString: baseUrl });
await admin.connect();
const keepAt = args.indexOf('--keep');
const kept = keepAt >= 0 ? args[keepAt + 1] : null;
if (kept !== null && !/^[a-z_][a-z0-9_]{0,40}$/.test(kept)) throw new Error('--keep takes a lowercase database name');
const dbName = kept ?? `bench_model_${process.pid}_${randomBytes(3).toString('hex')}`;
const reuse = kept !== null && (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1;
if (!reuse) await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(baseUrl); u.pathname = `/${dbName}`;
const db = await openDb({ url: u.toString(), pgliteDir: 'memory://', poolSize: 4 });

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figures: Record<string, number> = {};

try {
  await migrate(db);
  const t0 = process.hrtime.bigint();
  if (!reuse) {
    // One model transaction builds everything; ids are md5(seed || kind || n) as uuids.
    const id = (kind: string, expr: string) => `md5('${SEED}' || '${kind}' || (${expr})::text)::uuid`;
    await db.transaction(async (q) => {
      const { rows } = await q.query<{ tx_id: bigint }>("INSERT INTO model_tx (committed_ns, principal, reason) VALUES ($1, 'bench', 'bulk build') RETURNING tx_id", [nowNs()]);
      const tx = rows[0].tx_id;
      await q.query(`INSERT INTO template_version (template_id, name, version, tx_from) VALUES (${id('tpl', '0')}, 'Unit', 1, $1)`, [tx]);
      await q.query(`INSERT INTO attr_def_version (attr_def_id, template_id, ordinal, name, definition, tx_from)
        SELECT ${id('def', 'd')}, ${id('tpl', '0')}, d, 'A' || d, jsonb_build_object('name', 'A' || d, 'quantity_kind_id', null, 'default_unit_id', null,
          'continuity_class', 'continuous', 'writer_class', 'collector', 'enum_set_id', null, 'limit_traits', null, 'lifecycle_policy', null,
          'entry_cadence', null, 'overridable', '[]'::jsonb), $1 FROM generate_series(0, ${ATTRS_PER_UNIT - 1}) d`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, timezone, tx_from) VALUES (${id('root', '0')}, NULL, 'Enterprise', 'UTC', $1)`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, tx_from) SELECT ${id('site', 's')}, ${id('root', '0')}, 'Site ' || s, $1 FROM generate_series(0, ${SITES - 1}) s`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, tx_from) SELECT ${id('area', 'a')}, ${id('site', `a % ${SITES}`)}, 'Area ' || a, $1 FROM generate_series(0, ${AREAS - 1}) a`, [tx]);
      await q.query(`INSERT INTO asset_version (asset_id, parent_id, name, template_id, tx_from) SELECT ${id('unit', 'n')}, ${id('area', `n % ${AREAS}`)}, 'Unit ' || n, ${id('tpl', '0')}, $1 FROM generate_series(0, ${UNITS - 1}) n`, [tx]);
      await q.query(`INSERT INTO attribute_version (attribute_id, asset_id, name, attr_def_id, tx_from)
        SELECT ${id('attr', "n || '/' || d")}, ${id('unit', 'n')}, 'A' || d, ${id('def', 'd')}, $1 FROM generate_series(0, ${UNITS - 1}) n, generate_series(0, ${ATTRS_PER_UNIT - 1}) d`, [tx]);
      // Area 0's attributes are bound (one series each), so resolve also returns bindings.
      await q.query(`INSERT INTO binding_version (binding_id, attribute_id, series_id, from_ns, tx_from)
        SELECT ${id('bind', "n || '/' || d")}, ${id('attr', "n || '/' || d")}, ${id('series', "n || '/' || d")}, 0, $1
          FROM generate_series(0, ${UNITS - 1}, ${AREAS}) n, generate_series(0, ${ATTRS_PER_UNIT - 1}) d`, [tx]);
    });
    await db.exec('ANALYZE');
    figures.build_ms = Math.round(ms(t0));
  }

  const model = new AssetModel(db);
  let t = process.hrtime.bigint();
  const tree = await model.tree();
  figures.tree_load_100k_ms = +ms(t).toFixed(1);

  const site0 = tree.byPath('/Enterprise/Site 0') as AssetNode;
  const sub: number[] = [];
  let subCount = 0;
  for (let i = 0; i < runs; i++) {
    t = process.hrtime.bigint();
    const nodes: AssetNode[] = [];
    tree.collectSubtree(site0, false, nodes);
    const shaped = nodes.map((n) => tree.projection(n));
    sub.push(ms(t));
    subCount = shaped.length;
  }
  figures.subtree_nodes = subCount;
  figures.subtree_with_paths_ms = +median(sub).toFixed(2);

  const req = { select: { kind: 'all' as const }, scope: { under: { kind: 'path' as const, content: '/Enterprise/Site 0/Area 0' } } };
  const times: number[] = [];
  const cpu: number[] = [];
  let n = 0, bound = 0;
  // The first resolve fills the attribute cache for the subtree (cold); later ones are warm.
  for (let i = 0; i <= runs; i++) {
    t = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const r = await resolve(model, req, async () => true);
    const c1 = process.cpuUsage(c0);
    if (i === 0) figures.resolve_under_path_cold_ms = +ms(t).toFixed(1); else { times.push(ms(t)); cpu.push((c1.user + c1.system) / 1000); }
    n = r.results.length;
    bound = r.results.filter((x) => x.bindings.length > 0).length;
  }
  figures.resolve_attributes = n;
  figures.resolve_bound = bound;
  figures.resolve_under_path_ms = +median(times).toFixed(1);
  // This process's CPU time per warm resolve: on a shared, loaded box it is steadier than wall time.
  figures.resolve_under_path_cpu_ms = +median(cpu).toFixed(1);

  const named: number[] = [];
  for (let i = 0; i <= runs; i++) {
    t = process.hrtime.bigint();
    await resolve(model, { select: { kind: 'attributes_named', content: { name: 'A3' } }, scope: { under: { kind: 'path', content: '/Enterprise/Site 0' } } }, async () => true);
    if (i === 0) figures.resolve_named_under_site_cold_ms = +ms(t).toFixed(1); else named.push(ms(t));
  }
  figures.resolve_named_under_site_ms = +median(named).toFixed(1);

  const asOf = nowNs();
  t = process.hrtime.bigint();
  await resolve(model, { ...req, as_of_ns: asOf }, async () => true);
  figures.as_of_resolve_cold_ms = +ms(t).toFixed(1);
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = process.hrtime.bigint();
    await resolve(model, { ...req, as_of_ns: asOf }, async () => true);
    warm.push(ms(t));
  }
  figures.as_of_resolve_warm_ms = +median(warm).toFixed(1);
  model.close();
} finally {
  await db.close();
  if (kept === null) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

if (asJson) console.log(JSON.stringify({ bench: 'model', assets: ASSETS, attributes: UNITS * ATTRS_PER_UNIT, runs, ...figures }));
else {
  console.log(`asset model: ${ASSETS} assets, ${UNITS * ATTRS_PER_UNIT} attributes, median of ${runs} runs`);
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(32)} ${v}`);
}
