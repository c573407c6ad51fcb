// Where an attribute reference of an expression points, from the asset a rule runs on.
// The notation is the model's attribute path (asset path, "|", attribute name), made
// relative to the rule's asset:
//   Flow                  the asset's own attribute
//   ..|Flow               the parent's attribute
//   ../Pump 2|Flow        a sibling's attribute (parent, then its child "Pump 2")
//   Motor|Current         a child's attribute
//   /Site/Area/P-1|Flow   an absolute path
// ".." climbs, any other segment descends to the child of that name.
import type { AssetNode, AssetTree } from '../../model/assets/asset-tree.js';

export interface ReferenceTarget {
  asset: AssetNode;
  attributeName: string;
}

/** Whether a reference names another asset's attribute (a path) rather than one of the rule's asset. */
export function isPathReference(text: string): boolean {
  return text.includes('|');
}

/** The asset and attribute name a reference means from `from`; null when the path leads nowhere. */
export function followReference(tree: AssetTree, from: AssetNode, text: string): ReferenceTarget | null {
  const bar = text.lastIndexOf('|');
  if (bar < 0) return { asset: from, attributeName: text };
  const assetPart = text.slice(0, bar);
  const attributeName = text.slice(bar + 1);
  if (attributeName === '') return null;
  let at: AssetNode | null | undefined;
  let segments: string[];
  if (assetPart.startsWith('/')) {
    at = tree.byPath(assetPart);
    segments = [];
  } else {
    at = from;
    segments = assetPart === '' ? [] : assetPart.split('/');
  }
  for (const s of segments) {
    if (!at) return null;
    if (s === '..') at = at.parent;
    else if (s === '.' || s === '') continue;
    else at = at.children.find((c) => c.name === s && !c.retired);
  }
  return at ? { asset: at, attributeName } : null;
}
