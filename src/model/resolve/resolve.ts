// Resolve: the spec's `resolve` object (select, scope, as_of_ns, include_retired, range)
// turned into attributes with their paths and the bindings that cover the range. The
// resolved reads (/v1/read/...) call exactly this. Scope is narrowed on the in-memory
// tree (subtree, template, retired, link walks). Over the current model with a bounded
// scope the attributes come from the in-memory cache of current attributes per asset
// (attribute-cache.ts); otherwise (as-of reads, attribute ids, unscoped names) one query
// fetches the attributes with their covering bindings and one their definitions. Either
// way cost follows the size of the answer, not of the model.
import { type Queryable, sqlTextArray } from '../db.js';
import { ServiceError } from '../../errors.js';
import { nowNs } from '../../clock.js';
import { readTxFor, SqlArgs, validAt, type ReadTx } from '../versions/history.js';
import type { AssetModel } from '../assets/asset-model.js';
import { attributePath, type AssetNode, type AssetTree } from '../assets/asset-tree.js';
import { ATTRIBUTE_COLUMNS, effectiveAttributes, type AttributeRow, type EffectiveAttribute } from '../attributes/effective.js';
import type { Binding } from '../bindings/bindings.js';
import { walkLinks } from '../links/links.js';
import type { CachedAttribute } from './attribute-cache.js';

/** Largest answer one resolve gives; a broader scope must be narrowed. */
export const MAX_RESOLVED = 200_000;
/** Above this many candidate assets the attribute query filters by name only and the tree filters the rest. */
const MAX_ASSET_PARAM = 20_000;
/**
 * A name selected over a wider scope goes to SQL (the name index): filling the cache for
 * every asset of a site to return one attribute each cost ~2.5 s cold in bench/model.ts
 * (10,000 assets, 100,000 attributes) against ~0.2 s for the indexed query.
 */
const MAX_CACHED_NAMED_SCOPE = 2_000;

export type Select =
  | { kind: 'attributes_named'; content: { name: string } }
  | { kind: 'attribute_ids'; content: string[] }
  | { kind: 'all' };

export interface LinkWalk { asset: string; depth?: number; via: string[] }

export interface ResolveRequest {
  select: Select;
  scope: {
    under?: { kind: 'path'; content: string } | { kind: 'asset_id'; content: string } | null;
    template?: { kind: 'template_id'; content: string } | { kind: 'template_name'; content: string } | null;
    downstream_of?: LinkWalk | null;
    upstream_of?: LinkWalk | null;
  };
  as_of_ns?: number | bigint | null;
  include_retired?: boolean;
  range?: Array<number | bigint> | null;
}

export interface ResolvedAttribute extends EffectiveAttribute {
  path: string;
  asset_path: string;
  bindings: Binding[];
}

export interface Resolution {
  /** The model version answered: the as-of transaction, or the newest one. */
  model_tx: bigint;
  results: ResolvedAttribute[];
}

const bad = (field: string, problem: string) => new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });

async function templateIdFor(q: Queryable, tx: ReadTx, t: NonNullable<ResolveRequest['scope']['template']>): Promise<string | null> {
  if (t.kind === 'template_id') return t.content;
  const args = new SqlArgs();
  const { rows } = await q.query<{ template_id: string }>(`SELECT template_id FROM template_version t WHERE ${validAt('t', tx, args)} AND t.name = ${args.add(t.content)}`, args.values);
  return rows[0]?.template_id ?? null;
}

/** The assets the scope admits, or null for "every asset" (no narrowing beyond retired). */
async function scopedAssets(model: AssetModel, tree: AssetTree, tx: ReadTx, req: ResolveRequest): Promise<Set<string> | null> {
  const s = req.scope;
  const includeRetired = req.include_retired ?? false;
  let set: Set<string> | null = null;
  const intersect = (next: Set<string>) => { set = set === null ? next : new Set([...set].filter((id) => next.has(id))); };
  if (s.under) {
    const root = s.under.kind === 'path' ? tree.byPath(s.under.content) : tree.get(s.under.content);
    const out: AssetNode[] = [];
    if (root) tree.collectSubtree(root, includeRetired, out);
    intersect(new Set(out.map((n) => n.asset_id)));
  }
  for (const [key, direction] of [['downstream_of', 'downstream'], ['upstream_of', 'upstream']] as const) {
    const w = s[key];
    if (!w) continue;
    if (w.depth !== undefined && (!Number.isInteger(w.depth) || w.depth < 0)) throw bad(`scope.${key}.depth`, 'must be an integer >= 0');
    intersect(await walkLinks(model.db, tx, w.asset, direction, w.via, w.depth));
  }
  if (s.template) {
    const id = await templateIdFor(model.db, tx, s.template);
    const out = new Set<string>();
    if (id !== null) {
      const pool: Iterable<string> = set ?? tree.nodes.keys();
      for (const a of pool) if (tree.get(a)?.template_id === id) out.add(a);
    }
    set = out;
  }
  return set;
}

interface JoinedRow extends AttributeRow {
  b_binding_id: string | null; b_series_id: string | null; b_from_ns: bigint | null; b_to_ns: bigint | null; b_tx_from: bigint | null;
}

/** Attributes valid at the read matching cond, each joined with its bindings covering [start, end] (or the instant start). */
async function attributesWithBindings(q: Queryable, tx: ReadTx, start: bigint, end: bigint | null, cond: (args: SqlArgs) => string): Promise<JoinedRow[]> {
  const args = new SqlArgs();
  const validA = validAt('a', tx, args);
  const validB = validAt('b', tx, args);
  const s = args.add(start);
  const e = end === null ? s : args.add(end);
  const where = cond(args);
  const { rows } = await q.query<JoinedRow>(
    `SELECT ${ATTRIBUTE_COLUMNS}, b.binding_id AS b_binding_id, b.series_id AS b_series_id, b.from_ns AS b_from_ns, b.to_ns AS b_to_ns, b.tx_from AS b_tx_from
       FROM attribute_version a
       LEFT JOIN LATERAL (SELECT * FROM binding_version b WHERE b.attribute_id = a.attribute_id AND ${validB} AND b.from_ns <= ${e} AND (b.to_ns IS NULL OR b.to_ns > ${s})) b ON true
      WHERE ${validA} AND ${where}`, args.values);
  return rows;
}

export async function resolve(model: AssetModel, req: ResolveRequest, visible: (assetId: string) => Promise<boolean>): Promise<Resolution> {
  const q = model.db;
  const tx = await readTxFor(q, req.as_of_ns);
  let start: bigint;
  let end: bigint | null = null;
  if (req.range) {
    if (req.range.length !== 2) throw bad('range', 'must hold exactly two instants [start_ns, end_ns]');
    start = BigInt(req.range[0]);
    end = BigInt(req.range[1]);
    if (end < start) throw bad('range', 'end is before start');
  } else {
    start = req.as_of_ns == null ? nowNs() : BigInt(req.as_of_ns);
  }
  const includeRetired = req.include_retired ?? false;
  const tree = await model.tree(tx);
  const assets = await scopedAssets(model, tree, tx, req);

  const sel = req.select;
  // Current model over a bounded set of assets: served from the attribute cache.
  if (tx === null && assets !== null && (sel.kind === 'all' || (sel.kind === 'attributes_named' && assets.size <= MAX_CACHED_NAMED_SCOPE)) && assets.size <= MAX_ASSET_PARAM) {
    const name = sel.kind === 'attributes_named' ? sel.content.name : null;
    return { model_tx: await newestTx(q), results: await resolveCached(model, tree, assets, name, includeRetired, start, end, visible) };
  }

  // One round trip: the attributes with the bindings covering the range joined on
  // (usually one per attribute); a row per binding, grouped below.
  const assetParam = assets !== null && assets.size <= MAX_ASSET_PARAM ? [...assets] : null;
  let joined: JoinedRow[];
  if (assets !== null && assets.size === 0) joined = [];
  else if (sel.kind === 'attribute_ids') {
    joined = sel.content.length === 0 ? [] : await attributesWithBindings(q, tx, start, end, (a) => `a.attribute_id = ANY(${a.add(sqlTextArray(sel.content))}::uuid[])`);
  } else if (sel.kind === 'attributes_named') {
    joined = await attributesWithBindings(q, tx, start, end, (a) => `a.name = ${a.add(sel.content.name)}${assetParam ? ` AND a.asset_id = ANY(${a.add(sqlTextArray(assetParam))}::uuid[])` : ''}`);
  } else {
    if (!assetParam) throw bad('scope', `selecting every attribute needs a scope of at most ${MAX_ASSET_PARAM} assets (under, template or a link walk)`);
    joined = await attributesWithBindings(q, tx, start, end, (a) => `a.asset_id = ANY(${a.add(sqlTextArray(assetParam))}::uuid[])`);
  }
  const rows: AttributeRow[] = [];
  const bindings = new Map<string, Binding[]>();
  for (const r of joined) {
    let list = bindings.get(r.attribute_id);
    if (!list) { list = []; bindings.set(r.attribute_id, list); rows.push(r); }
    if (r.b_binding_id !== null) list.push({ binding_id: r.b_binding_id, attribute_id: r.attribute_id, series_id: r.b_series_id as string, from_ns: r.b_from_ns as bigint, to_ns: r.b_to_ns, tx_id: r.b_tx_from as bigint });
  }
  for (const list of bindings.values()) if (list.length > 1) list.sort((x, y) => (x.from_ns < y.from_ns ? -1 : x.from_ns > y.from_ns ? 1 : 0));

  // Keep attributes whose asset is in scope, present, not retired (unless asked) and readable.
  const verdict = new Map<string, boolean>();
  const kept: AttributeRow[] = [];
  for (const r of rows) {
    if (!includeRetired && r.retired) continue;
    let ok = verdict.get(r.asset_id);
    if (ok === undefined) {
      const node = tree.get(r.asset_id);
      ok = !!node && (assets === null || assets.has(r.asset_id)) && (includeRetired || !tree.effectivelyRetired(node)) && await visible(r.asset_id);
      verdict.set(r.asset_id, ok);
    }
    if (ok) kept.push(r);
  }
  if (kept.length > MAX_RESOLVED) throw bad('scope', `the resolve matches ${kept.length} attributes, more than ${MAX_RESOLVED}; narrow the scope`);

  const effective = await effectiveAttributes(q, tx, kept);
  const pathOf = new Map<string, string>();
  const results: ResolvedAttribute[] = new Array(effective.length);
  for (let i = 0; i < effective.length; i++) {
    const e = effective[i];
    let ap = pathOf.get(e.asset_id);
    if (ap === undefined) { ap = tree.path(tree.get(e.asset_id) as AssetNode); pathOf.set(e.asset_id, ap); }
    results[i] = resolvedAttribute(e, ap, bindings.get(e.attribute_id) ?? []);
  }
  results.sort(byPath);
  return { model_tx: tx ?? await newestTx(q), results };
}

async function newestTx(q: Queryable): Promise<bigint> {
  return (await q.query<{ tx: bigint | null }>('SELECT max(tx_id) AS tx FROM model_tx')).rows[0].tx ?? 0n;
}

/**
 * One result, every field assigned in one literal: measured in bench/model.ts, an object
 * spread of the Effective attribute cost several times more per result (10,000 results).
 */
function resolvedAttribute(a: EffectiveAttribute, assetPath: string, bindings: Binding[]): ResolvedAttribute {
  return {
    attribute_id: a.attribute_id, asset_id: a.asset_id, name: a.name, attr_def_id: a.attr_def_id, quantity_kind_id: a.quantity_kind_id,
    display_unit_id: a.display_unit_id, continuity_class: a.continuity_class, writer_class: a.writer_class, enum_set_id: a.enum_set_id,
    limit_traits: a.limit_traits, lifecycle_policy: a.lifecycle_policy, entry_cadence: a.entry_cadence, retired: a.retired,
    overridden_fields: a.overridden_fields, tx_id: a.tx_id, path: attributePath(assetPath, a.name), asset_path: assetPath, bindings,
  };
}

/** By asset path, then name: /Plant/P-1|Flow before /Plant/P-10|Flow (plain byte order of the paths would not, "|" sorts after digits). */
const byPath = (a: ResolvedAttribute, b: ResolvedAttribute) => (a.asset_path < b.asset_path ? -1 : a.asset_path > b.asset_path ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Resolve over the current model from the attribute cache: the scope's assets (already
 * narrowed on the tree), their cached attributes filtered by name and retirement, and
 * the cached binding versions that cover [start, end] (or the instant start).
 */
async function resolveCached(
  model: AssetModel, tree: AssetTree, assets: Set<string>, name: string | null, includeRetired: boolean,
  start: bigint, end: bigint | null, visible: (assetId: string) => Promise<boolean>,
): Promise<ResolvedAttribute[]> {
  const e = end ?? start;
  const ids: string[] = [];
  for (const id of assets) {
    const node = tree.get(id);
    if (node && (includeRetired || !tree.effectivelyRetired(node))) ids.push(id);
  }
  const cached = await model.attributes.forAssets(ids);
  const results: ResolvedAttribute[] = [];
  for (const id of ids) {
    const list = cached.get(id) as CachedAttribute[];
    let assetPath: string | null = null;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      const a = c.effective;
      if ((name !== null && a.name !== name) || (!includeRetired && a.retired)) continue;
      if (assetPath === null) {
        if (!(await visible(id))) break;
        assetPath = tree.path(tree.get(id) as AssetNode);
      }
      const bindings: Binding[] = [];
      for (let j = 0; j < c.bindings.length; j++) {
        const b = c.bindings[j];
        if (b.from_ns <= e && (b.to_ns === null || b.to_ns > start)) bindings.push(b);
      }
      results.push(resolvedAttribute(a, assetPath, bindings));
    }
    if (results.length > MAX_RESOLVED) throw bad('scope', `the resolve matches more than ${MAX_RESOLVED} attributes; narrow the scope`);
  }
  results.sort(byPath);
  return results;
}
