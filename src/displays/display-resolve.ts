// Resolve of a display in a context asset (PI Vision's "swap asset"): every attribute
// selector of its widgets becomes an attribute id, or says why it cannot.
//
//   template-relative "Flow"                     the context asset's attribute Flow
//   template-relative "Motor/Bearing|Temp"       attribute Temp of the asset Motor/Bearing under it
//   template-relative "..|Flow"                  the parent's (".." climbs one level)
//   attribute-id                                 that attribute, wherever it is (not swapped)
//   unresolved                                   stays unresolved, with its saved reason
//
// Attributes come from the model's current-attribute cache (src/model/resolve), in one
// fill for every asset the display touches; attributes by id through the model's resolve.
// Assets the caller may not read resolve as if they had no such attribute.
import type { AssetModel } from '../model/assets/asset-model.js';
import type { AssetNode, AssetTree } from '../model/assets/asset-tree.js';
import { attributePath } from '../model/assets/asset-tree.js';
import { resolve } from '../model/resolve/resolve.js';
import { type DisplayDocument, type AttributeSelector, selectorSites } from './display-document.js';

export type ResolvedSelector =
  | { kind: 'attribute-id'; attribute_id: string }
  | { kind: 'unresolved'; name: string; reason: string };

export interface SelectorResolution {
  widget_id: string;
  /** JSON pointer of the selector in the document. */
  pointer: string;
  selector: AttributeSelector;
  resolved: ResolvedSelector;
  /** The attribute's path ("/Plant/Pump 3|Flow") when resolved. */
  path: string | null;
}

interface RelativeName { climbs: number; assetPath: string[]; attribute: string }

/** Splits "Motor/Bearing|Temp" (or "..|Flow", or "Flow") into its asset steps and attribute name. */
export function parseRelativeName(name: string): RelativeName | null {
  const bar = name.lastIndexOf('|');
  const attribute = bar < 0 ? name : name.slice(bar + 1);
  if (attribute === '') return null;
  const steps = bar < 0 ? [] : name.slice(0, bar).split('/');
  let climbs = 0;
  const assetPath: string[] = [];
  for (const s of steps) {
    if (s === '..') {
      if (assetPath.length > 0) return null;
      climbs++;
    } else if (s === '' || s === '.') {
      continue;
    } else assetPath.push(s);
  }
  return { climbs, assetPath, attribute };
}

function stepTo(tree: AssetTree, from: AssetNode, rel: RelativeName): AssetNode | string {
  let at: AssetNode = from;
  for (let i = 0; i < rel.climbs; i++) {
    if (!at.parent) return `"${'..'}" climbs above the top of the asset tree`;
    at = at.parent;
  }
  for (const step of rel.assetPath) {
    const next = at.children.find((c) => c.name === step);
    if (!next) return `no asset "${step}" under ${tree.path(at)}`;
    at = next;
  }
  return at;
}

/**
 * Resolves every selector of the document in the context asset (null: no context, so
 * template-relative selectors cannot resolve). `visible` says whether the caller may read an asset.
 */
export async function resolveDisplay(
  model: AssetModel, doc: DisplayDocument, context: AssetNode | null, visible: (assetId: string) => Promise<boolean>,
): Promise<SelectorResolution[]> {
  const tree = await model.tree();
  const sites = selectorSites(doc);
  const targets = new Map<number, AssetNode | string>();
  const byIdWanted = new Set<string>();
  sites.forEach((s, i) => {
    if (s.selector.kind === 'template-relative') {
      const rel = parseRelativeName(s.selector.name);
      if (!context) targets.set(i, 'no context asset was given');
      else if (!rel) targets.set(i, `"${s.selector.name}" is not a relative attribute name ("Flow", "Motor|Current", "..|Flow")`);
      else targets.set(i, stepTo(tree, context, rel));
    } else if (s.selector.kind === 'attribute-id') byIdWanted.add(s.selector.attribute_id.toLowerCase());
  });

  const assetIds = new Set<string>();
  for (const t of targets.values()) if (typeof t !== 'string' && await visible(t.asset_id)) assetIds.add(t.asset_id);
  const cached = await model.attributes.forAssets([...assetIds]);
  const byId = new Map<string, string>();
  if (byIdWanted.size > 0) {
    const r = await resolve(model, { select: { kind: 'attribute_ids', content: [...byIdWanted] }, scope: {} }, visible);
    for (const a of r.results) byId.set(a.attribute_id, a.path);
  }

  return sites.map((s, i): SelectorResolution => {
    const base = { widget_id: s.widgetId, pointer: s.pointer, selector: s.selector };
    const sel = s.selector;
    const no = (name: string, reason: string): SelectorResolution => ({ ...base, resolved: { kind: 'unresolved', name, reason }, path: null });
    if (sel.kind === 'unresolved') return no(sel.name, sel.reason);
    if (sel.kind === 'attribute-id') {
      const path = byId.get(sel.attribute_id.toLowerCase());
      return path === undefined ? no(sel.attribute_id, `attribute ${sel.attribute_id} not found`) : { ...base, resolved: { kind: 'attribute-id', attribute_id: sel.attribute_id.toLowerCase() }, path };
    }
    const target = targets.get(i) as AssetNode | string;
    if (typeof target === 'string') return no(sel.name, target);
    const rel = parseRelativeName(sel.name) as RelativeName;
    const assetPath = tree.path(target);
    const found = assetIds.has(target.asset_id) ? cached.get(target.asset_id)?.find((c) => c.effective.name === rel.attribute) : undefined;
    if (!found) return no(sel.name, `${assetPath} has no attribute "${rel.attribute}"`);
    if (found.effective.retired) return no(sel.name, `attribute "${rel.attribute}" of ${assetPath} is retired`);
    return { ...base, resolved: { kind: 'attribute-id', attribute_id: found.effective.attribute_id }, path: attributePath(assetPath, rel.attribute) };
  });
}
