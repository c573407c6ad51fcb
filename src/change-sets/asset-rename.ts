// The asset.rename operation of a change set: derive its preview from the current model
// (before and after {name, path}, the asset's revision as base_tx, warnings), tell
// whether the model drifted from that preview, and apply it through the asset model's
// own patch path (inside the change set's model transaction) with expected_tx = base_tx,
// so a change that slips in between the drift check and the write is still refused.
import { ServiceError } from '../errors.js';
import { checkName } from '../model/versions/names.js';
import { patchAssetIn } from '../model/assets/assets.js';
import type { Queryable } from '../model/db.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import type { AssetNode, AssetTree } from '../model/assets/asset-tree.js';
import { nameKey } from '../model/registries/dedupe.js';
import type { EventSink } from '../model/tx-log.js';

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

/**
 * The drift read inside the committing transaction, from the database rather than the
 * in-memory tree (which shows only committed changes): the asset's revision, name and
 * path as this transaction sees them. current_tx is the newest transaction before txId.
 */
export async function renameDriftIn(q: Queryable, preview: Preview, txId: bigint): Promise<Drift | null> {
  const change = preview.changes[0];
  const { rows: tx } = await q.query<{ tx_id: bigint | null }>('SELECT max(tx_id) AS tx_id FROM model_tx WHERE tx_id < $1', [txId]);
  const currentTx = String(tx[0]?.tx_id ?? 0n);
  const { rows } = await q.query<{ name: string; tx_from: bigint; depth: number }>(
    `WITH RECURSIVE up(asset_id, parent_id, name, tx_from, depth) AS (
       SELECT asset_id, parent_id, name, tx_from, 0 FROM asset_version WHERE asset_id = $1 AND tx_to IS NULL
       UNION ALL
       SELECT a.asset_id, a.parent_id, a.name, a.tx_from, up.depth + 1 FROM asset_version a JOIN up ON a.asset_id = up.parent_id AND a.tx_to IS NULL
        WHERE up.depth < 10000)
     SELECT name, tx_from, depth FROM up ORDER BY depth DESC`, [change.resource_id]);
  if (rows.length === 0) return { current_tx: currentTx, current: { resource_id: change.resource_id, revision: '0', name: '', path: '' } };
  const self = rows[rows.length - 1];
  const path = rows.map((r) => `/${r.name}`).join('');
  if (String(self.tx_from) === change.base_tx && path === change.before.path && self.name === change.before.name) return null;
  return { current_tx: currentTx, current: { resource_id: change.resource_id, revision: String(self.tx_from), name: self.name, path } };
}

/**
 * Applies the rename inside the caller's model transaction, with expected_tx = base_tx:
 * a change that slipped in after the drift read is refused (409 conflict) under the
 * asset's row lock.
 */
export async function applyRenameIn(q: Queryable, txId: bigint, events: EventSink, op: RenameOperation, baseTx: string): Promise<void> {
  await patchAssetIn(q, txId, events, op.asset_id, { rename: op.name, expected_tx: BigInt(baseTx) });
}
