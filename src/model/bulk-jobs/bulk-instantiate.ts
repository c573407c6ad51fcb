// Job kind bulk-instantiate: create many assets of one template under existing parents,
// each with one attribute per current definition of the template. The preview fixes the
// ids of everything it creates and lists what it skips (parent missing, name taken,
// name twice in the job, child template not permitted by the parent's template).
// The commit goes through the asset model's own create and instantiate functions.
import type { Queryable } from '../db.js';
import type { EventSink } from '../tx-log.js';
import type { AssetNode, AssetTree } from '../assets/asset-tree.js';
import { checkName } from '../versions/names.js';
import { createAssetIn } from '../assets/assets.js';
import { instantiateTemplateIn } from '../attributes/attributes.js';
import { templatesAt, type Template } from '../templates/templates.js';
import { badParam, checkKnownFields, isUuid, plannedId } from './planned-ids.js';

/** Assets one job may create: each costs a handful of statements in the commit's transaction. */
export const MAX_INSTANTIATE = 5000;

export interface BulkInstantiateParams { template_id: string; assets: Array<{ parent: string | null; name: string }> }
export interface PlannedAsset {
  asset_id: string; parent_id: string | null; path: string; name: string;
  attributes: Array<{ attribute_id: string; attr_def_id: string; name: string }>;
}
export interface BulkInstantiatePreview {
  id_seed: string; template_id: string; template_version: number;
  assets: PlannedAsset[];
  skipped: Array<{ index: number; parent: string | null; name: string; reason: string }>;
}

export function checkBulkInstantiateParams(p: unknown): BulkInstantiateParams {
  const o = checkKnownFields(p, ['template_id', 'assets'], '{template_id, assets: [{parent, name}]}');
  if (!isUuid(o.template_id)) throw badParam('params.template_id', 'must be a template uuid');
  if (!Array.isArray(o.assets) || o.assets.length === 0 || o.assets.length > MAX_INSTANTIATE) throw badParam('params.assets', `must be an array of 1 to ${MAX_INSTANTIATE} {parent, name}`);
  const assets = o.assets.map((a: unknown, i: number) => {
    const f = `params.assets[${i}]`;
    if (typeof a !== 'object' || a === null || Array.isArray(a)) throw badParam(f, 'must be an object {parent, name}');
    const { parent, name, ...rest } = a as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw badParam(`${f}.${extra}`, 'unknown field (parent, name)');
    if (parent !== null && !isUuid(parent) && !(typeof parent === 'string' && parent.startsWith('/'))) throw badParam(`${f}.parent`, 'must be an asset path (/Plant/Area 1), an asset uuid, or null for the top level');
    if (typeof name !== 'string') throw badParam(`${f}.name`, 'must be a string');
    checkName(`${f}.name`, name, { pathSegment: true });
    return { parent: parent as string | null, name };
  });
  return { template_id: o.template_id.toLowerCase(), assets };
}

function parentNode(tree: AssetTree, parent: string | null): AssetNode | null | undefined {
  if (parent === null) return null;
  return parent.startsWith('/') ? tree.byPath(parent) : tree.get(parent.toLowerCase());
}

export async function previewBulkInstantiate(q: Queryable, tree: AssetTree, p: BulkInstantiateParams, seed: string): Promise<BulkInstantiatePreview> {
  const [tpl] = await templatesAt(q, null, [p.template_id]);
  if (!tpl) throw badParam('params.template_id', `no template ${p.template_id}`);
  const parentTemplates = new Set<string>();
  for (const a of p.assets) { const n = parentNode(tree, a.parent); if (n?.template_id) parentTemplates.add(n.template_id); }
  const permits = new Map<string, Template>((await templatesAt(q, null, [...parentTemplates])).map((t) => [t.template_id, t]));
  const out: BulkInstantiatePreview = { id_seed: seed, template_id: tpl.template_id, template_version: tpl.version, assets: [], skipped: [] };
  const planned = new Set<string>();
  p.assets.forEach((a, index) => {
    const skip = (reason: string) => out.skipped.push({ index, parent: a.parent, name: a.name, reason });
    const parent = parentNode(tree, a.parent);
    if (parent === undefined || (parent !== null && tree.effectivelyRetired(parent))) return skip('no-parent');
    const siblings = parent ? parent.children : tree.roots;
    if (siblings.some((s) => s.name === a.name)) return skip('name-taken');
    const key = `${parent?.asset_id ?? ''}/${a.name}`;
    if (planned.has(key)) return skip('duplicate-in-job');
    const permitted = parent?.template_id ? permits.get(parent.template_id)?.permitted_children ?? [] : [];
    if (permitted.length > 0 && !permitted.includes(tpl.template_id)) return skip('not-permitted');
    planned.add(key);
    const assetId = plannedId(seed, `asset:${key}`);
    out.assets.push({
      asset_id: assetId, parent_id: parent?.asset_id ?? null, path: `${parent ? tree.path(parent) : ''}/${a.name}`, name: a.name,
      attributes: tpl.attributes.map(([defId, d]) => ({ attribute_id: plannedId(seed, `attribute:${assetId}/${defId}`), attr_def_id: defId, name: d.name })),
    });
  });
  return out;
}

/** Creates the planned assets and their attributes (the caller has checked the preview still holds). */
export async function applyBulkInstantiate(q: Queryable, txId: bigint, events: EventSink, preview: BulkInstantiatePreview): Promise<void> {
  for (const a of preview.assets) {
    await createAssetIn(q, txId, events, { name: a.name, parent: a.parent_id, template_id: preview.template_id }, a.asset_id);
    const ids = new Map(a.attributes.map((x) => [x.attr_def_id, x.attribute_id]));
    await instantiateTemplateIn(q, txId, events, a.asset_id, (defId) => {
      const id = ids.get(defId);
      if (!id) throw new Error(`BUG: definition ${defId} was not in the re-derived preview of asset ${a.asset_id}`);
      return id;
    });
  }
}
