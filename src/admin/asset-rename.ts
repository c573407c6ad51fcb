// The asset.rename operation of a change set: derive its preview from the current model
// (before and after {name, path}, the asset's revision as base_tx, warnings), tell
// whether the model drifted from that preview, and apply it through the asset model's
// own patch path with expected_tx = base_tx, so a change that slips in between the drift
// check and the write is still refused.
import { ServiceError } from '../http/errors.js';
import { checkName } from '../model/versions/names.js';
import { patchAsset } from '../model/assets/assets.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import type { AssetNode, AssetTree } from '../model/assets/asset-tree.js';
import { nameKey } from '../model/registries/dedupe.js';
import type { Who } from '../model/tx-log.js';

export interface RenameOperation { kind: 'asset.rename'; asset_id: string; name: string }
export interface NamePath { name: string; path: string }
export interface PreviewChange { resource_kind: string; resource_id: string; base_tx: string; before: NamePath; after: NamePath }
export interface Warning { code: string; message: string }
export interface Preview { summary: string; changes: PreviewChange[]; warnings: Warning[] }

export interface Drift {
  current_tx: string;
  current: { resource_id: string; revision: string; name: string; path: string };
}

function childPath(tree: AssetTree, n: AssetNode, name: string): string {
  return n.parent ? `${tree.path(n.parent)}/${name}` : `/${name}`;
}

function countDescendants(n: AssetNode): number {
  let count = 0;
  const stack = [...n.children];
  while (stack.length > 0) { const c = stack.pop() as AssetNode; count++; stack.push(...c.children); }
  return count;
}

export async function previewRename(model: AssetModel, op: RenameOperation): Promise<Preview> {
  checkName('operations[0].name', op.name, { pathSegment: true });
  const tree = await model.tree();
  const n = tree.get(op.asset_id);
  if (!n) throw new ServiceError('not-found', `asset ${op.asset_id} not found`, { field: 'operations[0].asset_id' });
  const siblings = n.parent ? n.parent.children : tree.roots;
  const taken = siblings.find((s) => s !== n && s.name === op.name);
  if (taken) {
    throw new ServiceError('name-conflict', `an asset named "${op.name}" already exists beside ${op.asset_id}`, { name: op.name, parent_id: n.parent_id, asset_id: taken.asset_id });
  }
  const before = { name: n.name, path: tree.path(n) };
  const after = { name: op.name, path: childPath(tree, n, op.name) };
  const warnings: Warning[] = [];
  if (op.name === n.name) warnings.push({ code: 'name-unchanged', message: `the asset is already named "${n.name}"; the commit records an empty change` });
  const variant = siblings.find((s) => s !== n && nameKey(s.name) === nameKey(op.name));
  if (variant) warnings.push({ code: 'sibling-name-variant', message: `sibling "${variant.name}" differs from "${op.name}" only in case, spacing or punctuation` });
  const descendants = countDescendants(n);
  if (descendants > 0 && op.name !== n.name) warnings.push({ code: 'descendant-paths-change', message: `${descendants} descendant asset${descendants === 1 ? '' : 's'} change path under ${after.path}` });
  if (tree.effectivelyRetired(n)) warnings.push({ code: 'asset-retired', message: 'the asset or one of its ancestors is retired' });
  return {
    summary: `Rename asset ${before.path} to "${op.name}"`,
    changes: [{ resource_kind: 'asset', resource_id: n.asset_id, base_tx: String(n.tx_id), before, after }],
    warnings,
  };
}

/** The drift of the model from a stored preview, or null when the asset is as previewed. */
export async function renameDrift(model: AssetModel, preview: Preview): Promise<Drift | null> {
  const change = preview.changes[0];
  const tree = await model.tree();
  const n = tree.get(change.resource_id);
  const { rows } = await model.db.query<{ tx_id: bigint | null }>('SELECT max(tx_id) AS tx_id FROM model_tx');
  const currentTx = String(rows[0]?.tx_id ?? 0n);
  if (!n) return { current_tx: currentTx, current: { resource_id: change.resource_id, revision: '0', name: '', path: '' } };
  const path = tree.path(n);
  if (String(n.tx_id) === change.base_tx && path === change.before.path && n.name === change.before.name) return null;
  return { current_tx: currentTx, current: { resource_id: n.asset_id, revision: String(n.tx_id), name: n.name, path } };
}

/** Applies the rename; returns the model transaction it committed in. */
export async function applyRename(model: AssetModel, who: Who, op: RenameOperation, baseTx: string): Promise<bigint> {
  const { txId } = await patchAsset(model, who, op.asset_id, { rename: op.name, expected_tx: BigInt(baseTx) });
  return txId;
}
