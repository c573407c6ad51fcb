// Job kind template-propagate: bring the assets of a template in line with its current
// version. An asset gets an attribute for each current definition it has none for (a
// retired one counts as having it: someone retired it on purpose), and attributes whose
// definition the template no longer has are retired. Overrides are never written: an
// attribute keeps its overrides, and the preview lists them (overrides_kept) so the
// modeller sees which fields stay pinned. A new definition whose name an asset already
// uses for another attribute is skipped (name-taken).
import type { Queryable } from '../db.js';
import type { EventSink } from '../tx-log.js';
import { attributePath, type AssetNode, type AssetTree } from '../assets/asset-tree.js';
import { sqlTextArray } from '../db.js';
import { createAttributeIn, patchAttributeIn } from '../attributes/attributes.js';
import { templatesAt } from '../templates/templates.js';
import { badParam, checkKnownFields, isUuid, plannedId } from './planned-ids.js';

export interface TemplatePropagateParams { template_id: string; under?: string }
export interface PropagatedAsset {
  asset_id: string; path: string;
  add: Array<{ attribute_id: string; attr_def_id: string; name: string }>;
  retire: Array<{ attribute_id: string; attr_def_id: string; name: string }>;
}
export interface TemplatePropagatePreview {
  id_seed: string; template_id: string; template_version: number;
  assets: PropagatedAsset[];
  unchanged_assets: number;
  overrides_kept: Array<{ attribute_id: string; path: string; fields: string[] }>;
  skipped: Array<{ asset_id: string; path: string; attr_def_id: string; name: string; reason: string }>;
}

export function checkTemplatePropagateParams(p: unknown): TemplatePropagateParams {
  const o = checkKnownFields(p, ['template_id', 'under'], '{template_id, under?}');
  if (!isUuid(o.template_id)) throw badParam('params.template_id', 'must be a template uuid');
  if (o.under !== undefined && (typeof o.under !== 'string' || !o.under.startsWith('/'))) throw badParam('params.under', 'must be an asset path such as /Plant/Area 1');
  return { template_id: o.template_id.toLowerCase(), ...(o.under !== undefined ? { under: o.under as string } : {}) };
}

interface AttrRow { attribute_id: string; asset_id: string; name: string; attr_def_id: string | null; overrides: Record<string, unknown>; retired: boolean }

export async function previewTemplatePropagate(q: Queryable, tree: AssetTree, p: TemplatePropagateParams, seed: string): Promise<TemplatePropagatePreview> {
  const [tpl] = await templatesAt(q, null, [p.template_id]);
  if (!tpl) throw badParam('params.template_id', `no template ${p.template_id}`);
  const scope: AssetNode[] = [];
  if (p.under) {
    const root = tree.byPath(p.under);
    if (!root) throw badParam('params.under', `no asset at ${p.under}`);
    tree.collectSubtree(root, false, scope);
  } else {
    for (const r of tree.roots) tree.collectSubtree(r, false, scope);
  }
  const assets = scope.filter((n) => n.template_id === tpl.template_id).sort((a, b) => (a.asset_id < b.asset_id ? -1 : a.asset_id > b.asset_id ? 1 : 0));
  const out: TemplatePropagatePreview = { id_seed: seed, template_id: tpl.template_id, template_version: tpl.version, assets: [], unchanged_assets: 0, overrides_kept: [], skipped: [] };
  if (assets.length === 0) return out;
  const { rows } = await q.query<AttrRow>(
    `SELECT attribute_id, asset_id, name, attr_def_id, overrides, retired FROM attribute_version
      WHERE tx_to IS NULL AND asset_id = ANY($1::uuid[]) ORDER BY asset_id, name`, [sqlTextArray(assets.map((a) => a.asset_id))]);
  const byAsset = new Map<string, AttrRow[]>();
  for (const r of rows) { const l = byAsset.get(r.asset_id); if (l) l.push(r); else byAsset.set(r.asset_id, [r]); }
  const current = new Set(tpl.attributes.map(([id]) => id));
  for (const n of assets) {
    const attrs = byAsset.get(n.asset_id) ?? [];
    const path = tree.path(n);
    const haveDefs = new Set(attrs.map((a) => a.attr_def_id));
    const names = new Set(attrs.map((a) => a.name));
    const change: PropagatedAsset = { asset_id: n.asset_id, path, add: [], retire: [] };
    for (const [defId, d] of tpl.attributes) {
      if (haveDefs.has(defId)) continue;
      if (names.has(d.name)) { out.skipped.push({ asset_id: n.asset_id, path, attr_def_id: defId, name: d.name, reason: 'name-taken' }); continue; }
      change.add.push({ attribute_id: plannedId(seed, `attribute:${n.asset_id}/${defId}`), attr_def_id: defId, name: d.name });
    }
    for (const a of attrs) {
      const removed = a.attr_def_id !== null && !current.has(a.attr_def_id);
      if (removed && !a.retired) change.retire.push({ attribute_id: a.attribute_id, attr_def_id: a.attr_def_id as string, name: a.name });
      else if (!removed && !a.retired && a.attr_def_id !== null && Object.keys(a.overrides).length > 0) {
        out.overrides_kept.push({ attribute_id: a.attribute_id, path: attributePath(path, a.name), fields: Object.keys(a.overrides).sort() });
      }
    }
    if (change.add.length === 0 && change.retire.length === 0) out.unchanged_assets++;
    else out.assets.push(change);
  }
  return out;
}

/** Adds and retires the planned attributes through the asset model (the caller has checked the preview still holds). */
export async function applyTemplatePropagate(q: Queryable, txId: bigint, events: EventSink, preview: TemplatePropagatePreview): Promise<void> {
  for (const a of preview.assets) {
    for (const x of a.add) await createAttributeIn(q, txId, events, { asset_id: a.asset_id, attr_def_id: x.attr_def_id }, x.attribute_id);
    for (const x of a.retire) await patchAttributeIn(q, txId, events, x.attribute_id, { retire: true });
  }
}
