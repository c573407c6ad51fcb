// Current attributes per asset, held in memory for resolve: each asset's Effective
// attributes with the full valid-time list of their current binding versions, so a
// current resolve over a warm subtree is a walk over memory (measured in bench/model.ts:
// ~10,000 attributes under a path went from ~180 ms through SQL to a few ms warm).
//
// Coherence: invalidated from the commit feed (AssetModel.applyCommit), synchronously
// before the writer answers. An attribute or binding event drops its asset's entry; a
// template event (definitions changed, so Effective attributes may change) drops
// everything. A fill that raced with an invalidating commit is not stored (the epoch
// moved), so a stale read can never be kept. Like the asset tree, this assumes one
// service process per model database.
//
// Size: bounded by attributes held (CAPACITY), least recently used assets go first.
import { sqlTextArray, type Queryable } from '../db.js';
import { ATTRIBUTE_COLUMNS, definitionsAt, effectiveAttribute, type AttributeRow, type EffectiveAttribute } from '../attributes/effective.js';
import type { Binding } from '../bindings/bindings.js';

/** Attributes held at most (about 150 MB at ~500 B each with their bindings). */
export const ATTRIBUTE_CACHE_CAPACITY = 300_000;

export interface CachedAttribute {
  effective: EffectiveAttribute;
  /** Current binding versions of the attribute (its whole valid-time history), by from_ns. */
  bindings: Binding[];
}

interface JoinedRow extends AttributeRow {
  b_binding_id: string | null; b_series_id: string | null; b_from_ns: bigint | null; b_to_ns: bigint | null; b_tx_from: bigint | null;
}

export class CurrentAttributeCache {
  private readonly byAsset = new Map<string, CachedAttribute[]>();
  private held = 0;
  private epoch = 0;

  constructor(private readonly q: Queryable, private readonly capacity = ATTRIBUTE_CACHE_CAPACITY) {}

  get size(): number { return this.held; }

  dropAsset(assetId: string): void {
    this.epoch++;
    const list = this.byAsset.get(assetId);
    if (!list) return;
    this.held -= list.length;
    this.byAsset.delete(assetId);
  }

  clear(): void {
    this.epoch++;
    this.byAsset.clear();
    this.held = 0;
  }

  /** The current attributes of each asset (an asset with none maps to an empty list). */
  async forAssets(assetIds: readonly string[]): Promise<Map<string, CachedAttribute[]>> {
    const out = new Map<string, CachedAttribute[]>();
    const missing: string[] = [];
    for (const id of assetIds) {
      const list = this.byAsset.get(id);
      if (list === undefined) { missing.push(id); continue; }
      this.byAsset.delete(id); // most recently used last
      this.byAsset.set(id, list);
      out.set(id, list);
    }
    if (missing.length === 0) return out;
    const epoch = this.epoch;
    const loaded = await loadCurrent(this.q, missing);
    const keep = this.epoch === epoch;
    for (const id of missing) {
      const list = loaded.get(id) ?? [];
      out.set(id, list);
      if (keep && !this.byAsset.has(id)) { this.byAsset.set(id, list); this.held += list.length; }
    }
    for (const [id, list] of this.byAsset) {
      if (this.held <= this.capacity) break;
      this.byAsset.delete(id);
      this.held -= list.length;
    }
    return out;
  }
}

/** One query for the attributes of the assets with all their current binding versions, one for their definitions. */
async function loadCurrent(q: Queryable, assetIds: string[]): Promise<Map<string, CachedAttribute[]>> {
  const { rows } = await q.query<JoinedRow>(
    `SELECT ${ATTRIBUTE_COLUMNS}, b.binding_id AS b_binding_id, b.series_id AS b_series_id, b.from_ns AS b_from_ns, b.to_ns AS b_to_ns, b.tx_from AS b_tx_from
       FROM attribute_version a
       LEFT JOIN binding_version b ON b.attribute_id = a.attribute_id AND b.tx_to IS NULL
      WHERE a.tx_to IS NULL AND a.asset_id = ANY($1::uuid[])`, [sqlTextArray(assetIds)]);
  const defIds = new Set<string>();
  for (const r of rows) if (r.attr_def_id) defIds.add(r.attr_def_id);
  const defs = await definitionsAt(q, null, defIds);
  // Grouped here rather than with ORDER BY: a row per binding version, usually one per attribute.
  const out = new Map<string, CachedAttribute[]>();
  const byId = new Map<string, CachedAttribute>();
  for (const r of rows) {
    let c = byId.get(r.attribute_id);
    if (c === undefined) {
      c = { effective: effectiveAttribute(r, defs), bindings: [] };
      byId.set(r.attribute_id, c);
      const list = out.get(r.asset_id);
      if (list) list.push(c); else out.set(r.asset_id, [c]);
    }
    if (r.b_binding_id !== null) {
      c.bindings.push({ binding_id: r.b_binding_id, attribute_id: r.attribute_id, series_id: r.b_series_id as string, from_ns: r.b_from_ns as bigint, to_ns: r.b_to_ns, tx_id: r.b_tx_from as bigint });
    }
  }
  for (const c of byId.values()) if (c.bindings.length > 1) c.bindings.sort((x, y) => (x.from_ns < y.from_ns ? -1 : x.from_ns > y.from_ns ? 1 : 0));
  return out;
}
