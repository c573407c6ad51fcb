// Lint of 1,000 display documents (issue 30's figure: under 1 s), on the real service.
//
//   node --import tsx bench/displays.ts [--json] [--runs 5] [--displays 1000]
//
// Before timing, from a fixed seed: a template of 4 attributes with quantity kinds, 50
// assets made from it, and N displays of 8 trends x 4 traces each (half the selectors by
// attribute id, half template-relative, a few unknown ids and names), a value tile, an
// anchored window on an episode, the document time and one time override, so every check
// has work. The displays go in through the model (createDisplay), not HTTP. Timed, median
// of --runs:
//   lint_ms            lintDocuments over all N: the batch facts (a few queries) and the checks
//   lint_checks_ms     the in-memory checks alone (facts read once beforehand)
//   list_http_ms       GET /v1/displays: N records with their lint, as a client gets them
// Uses DATABASE_URL when set (a fresh database the service migrates), else embedded PGlite.
import { pino } from 'pino';
import pg from 'pg';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config/config.js';
import { startService } from '../src/service.js';
import { nowNs } from '../src/clock.js';
import { createDisplay } from '../src/displays/displays.js';
import { createFolder } from '../src/displays/folders.js';
import { lintDocuments, lintFacts, lintDocument } from '../src/displays/lint.js';
import type { DisplayDocument } from '../src/displays/display-document.js';
import { systemEntryId } from '../src/model/registries/system-seed.js';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const arg = (name: string, d: number) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : d; };
const runs = arg('--runs', 5);
const N = arg('--displays', 1000);

// xorshift32 from a fixed seed: the same documents every run.
let seed = 0x30_2026;
const rnd = () => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed / 0x1_0000_0000; };
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];

let dropDb: (() => Promise<void>) | null = null;
let databaseUrl = process.env.DATABASE_URL;
if (databaseUrl) {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const name = `bench_displays_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(databaseUrl); u.pathname = `/${name}`; databaseUrl = u.toString();
  dropDb = async () => { await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await admin.end(); };
}
const dir = await mkdtemp(join(tmpdir(), 'bench-displays-'));
const config = loadConfig({
  SERVICE_HOST: '127.0.0.1', SERVICE_HTTP_PORT: '0', SERVICE_GRPC_PORT: '0', SERVICE_DATA_DIR: dir, SERVICE_AUTH_MODE: 'disabled',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const service = await startService(config, pino({ level: 'warn' }), { printBootstrapSecret: () => undefined });
const url = `http://127.0.0.1:${service.http.port}`;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figures: Record<string, number> = {};

async function post<T>(path: string, body: unknown): Promise<T> {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<T>;
}

try {
  const kinds = [systemEntryId('quantity-kinds', 'Volume flow rate'), systemEntryId('quantity-kinds', 'Temperature'), systemEntryId('quantity-kinds', 'Pressure'), null];
  const names = ['Flow', 'Temp', 'Pressure', 'Speed'];
  const tpl = await post<{ template_id: string }>('/v1/model/templates', {
    name: 'Pump', attributes: names.map((name, i) => ({
      name, quantity_kind_id: kinds[i], default_unit_id: null, continuity_class: 'continuous', writer_class: 'collector',
      enum_set_id: null, limit_traits: null, lifecycle_policy: null, entry_cadence: null, overridable: [],
    })),
  });
  const site = await post<{ asset_id: string }>('/v1/model/assets', { name: 'Site' });
  for (let i = 0; i < 50; i++) await post('/v1/model/assets', { name: `P${i}`, parent: site.asset_id, template_id: tpl.template_id });
  const attrIds = (await post<{ results: Array<{ attribute_id: string }> }>('/v1/model/resolve', { select: { kind: 'all' }, scope: { under: { kind: 'path', content: '/Site' } } })).results.map((a) => a.attribute_id);

  const db = service.context.db;
  const who = { principal: 'bench' };
  const folder = await createFolder(db, who, { name: 'Bench' });
  const docs: DisplayDocument[] = [];
  for (let d = 0; d < N; d++) {
    const widgets: DisplayDocument['widgets'] = [];
    for (let w = 0; w < 8; w++) {
      const traces = Array.from({ length: 4 }, (_, k) => ({
        attribute: rnd() < 0.5
          ? { kind: 'attribute-id' as const, attribute_id: rnd() < 0.02 ? '00000000-0000-4000-8000-000000000000' : pick(attrIds) }
          : { kind: 'template-relative' as const, name: rnd() < 0.02 ? 'Vibration' : pick(names) },
        continuity: 'continuous', label: `trace ${k}`, pen: { glyph: 'circle', token: `c${k}` }, scale_group: `g${k % 2}`,
      }));
      widgets.push({ type: 'trend', id: `t${w}`, bindings: { kind: 'trend', traces }, ...(w === 0 ? { time_override: { start: 't', end: '*' } } : {}) });
    }
    widgets.push({ type: 'value-tile', id: 'tile', bindings: { attribute: { kind: 'template-relative', name: 'Flow' } } });
    widgets.push({ type: 'episode-gantt', id: 'batches', range: { type: 'anchored', anchor: { kind: 'episode', episode_id: '00000000-0000-4000-8000-00000000000e', before: '1h' } } });
    docs.push({
      kind: 'display', meta: { layout: 'structured', name: `Display ${d}`, template: 'Pump' }, service_display: '1.0',
      scale_groups: [{ id: 'g0', min: null, max: null, mode: 'autofit' }, { id: 'g1', min: 0, max: 100, mode: 'explicit' }],
      time: { start: '*-8h', end: '*', navigator: { visible: true }, timezone: { mode: 'automatic' } },
      widgets, x: { bench: d },
    });
  }
  for (const doc of docs) await createDisplay(db, who, { folderId: folder.folder_id, document: doc });

  let findings = 0;
  const lint: number[] = [];
  const checks: number[] = [];
  const list: number[] = [];
  for (let r = 0; r < runs; r++) {
    let t0 = process.hrtime.bigint();
    const out = await lintDocuments(db, docs, nowNs());
    lint.push(ms(t0));
    findings = out.reduce((s, f) => s + f.length, 0);
    const facts = await lintFacts(db, docs, nowNs());
    t0 = process.hrtime.bigint();
    for (const doc of docs) lintDocument(doc, facts);
    checks.push(ms(t0));
    t0 = process.hrtime.bigint();
    const res = await fetch(`${url}/v1/displays?folder=${folder.folder_id}`);
    const body = await res.arrayBuffer();
    list.push(ms(t0));
    figures.list_http_bytes = body.byteLength;
  }
  figures.lint_ms = Math.round(median(lint) * 10) / 10;
  figures.lint_checks_ms = Math.round(median(checks) * 10) / 10;
  figures.lint_per_display_us = Math.round((median(lint) * 1000) / N);
  figures.list_http_ms = Math.round(median(list) * 10) / 10;
  figures.findings = findings;
} finally {
  await service.stop(2_000);
  await rm(dir, { recursive: true, force: true });
  if (dropDb) await dropDb();
}

if (asJson) console.log(JSON.stringify({ bench: 'displays', displays: N, trends_per_display: 8, traces_per_trend: 4, runs, database: databaseUrl ? 'postgres' : 'pglite', ...figures }));
else {
  console.log(`display lint: ${N} displays x 8 trends x 4 traces, median of ${runs} runs (${databaseUrl ? 'PostgreSQL' : 'embedded PGlite'}); goal: lint of 1,000 under 1,000 ms`);
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(24)} ${v}`);
}
