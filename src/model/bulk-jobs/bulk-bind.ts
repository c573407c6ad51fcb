// Job kind bulk-bind: bind staging series (series with no current binding) to attributes
// by a source-name pattern such as "opc/{asset}.{attribute}": the {asset} part names an
// asset (within an optional subtree), the {attribute} part an attribute of it. Only
// unbound attributes are bound, from from_ns on, so no binding can overlap another;
// the commit binds through the asset model's bindIn, which checks that again.
import type { Queryable } from '../db.js';
import type { EventSink } from '../tx-log.js';
import { ServiceError } from '../../errors.js';
import { attributePath, type AssetNode, type AssetTree } from '../assets/asset-tree.js';
import { bindIn } from '../bindings/bindings.js';

export interface BulkBindParams { pattern: string; under?: string; from_ns?: number | bigint | string }
export interface PlannedBinding { series_id: string; source_name: string; attribute_id: string; asset_id: string; path: string }
export interface BulkBindPreview { from_ns: string; bindings: PlannedBinding[]; skipped: Array<{ series_id: string; source_name: string; reason: string }> }

const bad = (field: string, problem: string) => new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });

export function checkBulkBindParams(p: unknown): BulkBindParams {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw bad('params', 'must be an object {pattern, under?, from_ns?}');
  const { pattern, under, from_ns, ...rest } = p as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw bad(`params.${extra}`, 'unknown field (pattern, under, from_ns)');
  if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 512) throw bad('params.pattern', 'must be a non-empty string');
  if (pattern.split('{asset}').length !== 2 || pattern.split('{attribute}').length !== 2) throw bad('params.pattern', 'must contain {asset} and {attribute} exactly once each');
  if (under !== undefined && (typeof under !== 'string' || !under.startsWith('/'))) throw bad('params.under', 'must be an asset path such as /Plant/Area 1');
  let from = 0n;
  if (from_ns !== undefined) {
    // A JSON integer (kept in the stored params as sent, any size exact), or a digit
    // string: params stored before 2026-11-27 kept it so.
    const integral = (typeof from_ns === 'number' && Number.isSafeInteger(from_ns)) || typeof from_ns === 'bigint'
      || (typeof from_ns === 'string' && /^[0-9]{1,19}$/.test(from_ns));
    if (!integral) throw bad('params.from_ns', 'must be an integer (ns)');
    from = BigInt(from_ns as number | bigint | string);
    if (from < 0n) throw bad('params.from_ns', 'must not be negative');
  }
  return { pattern, ...(under !== undefined ? { under } : {}), ...(from_ns !== undefined ? { from_ns: from_ns as number | bigint | string } : {}) };
}

function patternRegex(pattern: string): { re: RegExp; assetFirst: boolean } {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const assetAt = pattern.indexOf('{asset}');
  const attrAt = pattern.indexOf('{attribute}');
  const parts = pattern.split(/\{asset\}|\{attribute\}/);
  return { re: new RegExp(`^${esc(parts[0])}(.+?)${esc(parts[1])}(.+)${esc(parts[2])}$`, 's'), assetFirst: assetAt < attrAt };
}

export async function previewBulkBind(q: Queryable, tree: AssetTree, p: BulkBindParams): Promise<BulkBindPreview> {
  let scope: AssetNode[] = [];
  if (p.under) {
    const root = tree.byPath(p.under);
    if (!root) throw bad('params.under', `no asset at ${p.under}`);
    tree.collectSubtree(root, false, scope);
  } else {
    for (const r of tree.roots) tree.collectSubtree(r, false, scope);
  }
  const byName = new Map<string, AssetNode[]>();
  for (const n of scope) { const l = byName.get(n.name) ?? []; l.push(n); byName.set(n.name, l); }
  const { rows: staging } = await q.query<{ series_id: string; source_name: string }>(
    `SELECT s.series_id, s.source_name FROM series s
      WHERE NOT EXISTS (SELECT 1 FROM binding_version b WHERE b.series_id = s.series_id AND b.tx_to IS NULL) ORDER BY s.source_name`);
  const { rows: attrs } = await q.query<{ attribute_id: string; asset_id: string; name: string; bound: boolean }>(
    `SELECT a.attribute_id, a.asset_id, a.name,
            EXISTS (SELECT 1 FROM binding_version b WHERE b.attribute_id = a.attribute_id AND b.tx_to IS NULL) AS bound
       FROM attribute_version a WHERE a.tx_to IS NULL AND NOT a.retired`);
  const attrByKey = new Map(attrs.map((a) => [`${a.asset_id}\u0000${a.name}`, a]));
  const { re, assetFirst } = patternRegex(p.pattern);
  const out: BulkBindPreview = { from_ns: String(p.from_ns ?? '0'), bindings: [], skipped: [] };
  const targeted = new Set<string>();
  for (const s of staging) {
    const m = re.exec(s.source_name);
    if (!m) continue;
    const [assetName, attrName] = assetFirst ? [m[1], m[2]] : [m[2], m[1]];
    const skip = (reason: string) => out.skipped.push({ series_id: s.series_id, source_name: s.source_name, reason });
    const assets = byName.get(assetName) ?? [];
    if (assets.length === 0) { skip('no-asset'); continue; }
    if (assets.length > 1) { skip('ambiguous-asset'); continue; }
    const a = attrByKey.get(`${assets[0].asset_id}\u0000${attrName}`);
    if (!a) { skip('no-attribute'); continue; }
    if (a.bound) { skip('attribute-bound'); continue; }
    if (targeted.has(a.attribute_id)) { skip('attribute-targeted-twice'); continue; }
    targeted.add(a.attribute_id);
    out.bindings.push({ series_id: s.series_id, source_name: s.source_name, attribute_id: a.attribute_id, asset_id: a.asset_id, path: attributePath(tree.path(assets[0]), a.name) });
  }
  return out;
}

/** Binds the planned series through the asset model's bind (the caller has checked the preview still holds). */
export async function applyBulkBind(q: Queryable, txId: bigint, events: EventSink, preview: BulkBindPreview): Promise<void> {
  const from = BigInt(preview.from_ns);
  for (const b of preview.bindings) await bindIn(q, txId, events, { attribute_id: b.attribute_id, series_id: b.series_id, from_ns: from });
}
