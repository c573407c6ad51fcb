// Administration change sets: create (server-derived preview and its hash), read,
// commit (state, hash and drift checks, then the change through the asset model's own
// code path, the receipt and an Operation record), cancel.
//
// Commits of one change set are serialised in this process (the deployment is one
// service process per model database, as the asset model's caches already assume), so
// a commit and a cancel of the same change set cannot interleave.
import { randomUUID } from 'node:crypto';
import type { Db } from '../model/db.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import type { OperationsCatalogue } from '../operations/catalogue.js';
import { ServiceError } from '../http/errors.js';
import { nowNs } from '../clock.js';
import { previewHash } from './canonical-json.js';
import { previewRename, renameDrift, applyRename, type Preview, type RenameOperation } from './asset-rename.js';

export const CHANGE_SET_STATES = ['preview', 'committed', 'cancelled', 'failed'] as const;
export type ChangeSetState = (typeof CHANGE_SET_STATES)[number];

export interface Receipt {
  operation_id: string;
  model_tx: string;
  committed_operations: Array<{ kind: string; resource_kind: string; resource_id: string; resulting_tx: string }>;
  audit_events: Array<{ entity_kind: string; entity_id: string; action: string }>;
}

export interface ChangeSet {
  change_set_id: string;
  state: ChangeSetState;
  reason: string;
  operations: RenameOperation[];
  preview: Preview;
  preview_hash: string;
  created_ns: string;
  committed_ns: string | null;
  principal: string;
  receipt: Receipt | null;
}

interface Row {
  change_set_id: string; state: ChangeSetState; reason: string; operations: RenameOperation[]; preview: Preview; preview_hash: string;
  created_ns: bigint; committed_ns: bigint | null; principal: string; receipt: Receipt | null;
}

const toChangeSet = (r: Row): ChangeSet => ({
  change_set_id: r.change_set_id, state: r.state, reason: r.reason, operations: r.operations, preview: r.preview,
  preview_hash: r.preview_hash, created_ns: String(r.created_ns), committed_ns: r.committed_ns === null ? null : String(r.committed_ns),
  principal: r.principal, receipt: r.receipt,
});

export interface ChangeSetDeps { db: Db; model: AssetModel; operations: OperationsCatalogue }

const FINAL: ReadonlySet<ChangeSetState> = new Set(['committed', 'cancelled', 'failed']);
const inFlight = new Map<string, Promise<unknown>>();

/** Runs fn after any earlier work on the same change set has finished. */
function serialised<T>(id: string, fn: () => Promise<T>): Promise<T> {
  const prev = inFlight.get(id) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  inFlight.set(id, next);
  void next.finally(() => { if (inFlight.get(id) === next) inFlight.delete(id); }).catch(() => undefined);
  return next;
}

function stateConflict(id: string, state: ChangeSetState): ServiceError {
  return new ServiceError('conflict', `change set ${id} is ${state}`, { state });
}

export async function getChangeSet(db: Db, id: string): Promise<ChangeSet | null> {
  const { rows } = await db.query<Row>('SELECT * FROM change_set WHERE change_set_id = $1', [id]);
  return rows[0] ? toChangeSet(rows[0]) : null;
}

export async function createChangeSet(deps: ChangeSetDeps, principal: string, reason: string, operations: RenameOperation[]): Promise<ChangeSet> {
  if (operations.length !== 1) throw new ServiceError('invalid-request', 'operations: exactly one operation is required', { errors: [{ field: 'operations', problem: 'exactly 1 item' }] });
  const op = operations[0];
  if (op.kind !== 'asset.rename') {
    throw new ServiceError('invalid-request', `operations[0].kind: unsupported operation "${op.kind}" (supported: asset.rename)`, { errors: [{ field: 'operations[0].kind', problem: 'unsupported operation' }] });
  }
  const preview = await previewRename(deps.model, op);
  const id = randomUUID();
  const clean: RenameOperation = { kind: 'asset.rename', asset_id: op.asset_id, name: op.name };
  const { rows } = await deps.db.query<Row>(
    `INSERT INTO change_set (change_set_id, state, reason, operations, preview, preview_hash, created_ns, principal)
     VALUES ($1, 'preview', $2, $3::jsonb, $4::jsonb, $5, $6, $7) RETURNING *`,
    [id, reason, JSON.stringify([clean]), JSON.stringify(preview), previewHash(preview), nowNs(), principal]);
  return toChangeSet(rows[0]);
}

export function commitChangeSet(deps: ChangeSetDeps, id: string, hash: string, principal: string): Promise<ChangeSet> {
  return serialised(id, async () => {
    const cs = await getChangeSet(deps.db, id);
    if (!cs) throw new ServiceError('not-found', `change set ${id} not found`);
    if (FINAL.has(cs.state)) throw stateConflict(id, cs.state);
    if (hash !== cs.preview_hash) {
      throw new ServiceError('hash-mismatch', `preview_hash does not match the preview of change set ${id}`, { expected: cs.preview_hash, received: hash });
    }
    const drift = await renameDrift(deps.model, cs.preview);
    if (drift) throw driftConflict(id, drift);
    const op = cs.operations[0];
    let txId: bigint;
    try {
      txId = await applyRename(deps.model, { principal, reason: cs.reason }, op, cs.preview.changes[0].base_tx);
    } catch (e) {
      // A change that committed between the drift check and the write: report it as drift.
      if (e instanceof ServiceError && e.code === 'conflict') {
        const late = await renameDrift(deps.model, cs.preview);
        if (late) throw driftConflict(id, late);
      }
      throw e;
    }
    const { rows: ev } = await deps.db.query<{ entity_kind: string; entity_id: string; action: string; committed_ns: bigint }>(
      `SELECT e.entity_kind, e.entity_id, e.action, t.committed_ns FROM model_tx t LEFT JOIN model_event e ON e.tx_id = t.tx_id
        WHERE t.tx_id = $1 ORDER BY e.seq`, [txId]);
    const committedNs = ev[0]?.committed_ns ?? nowNs();
    const receipt: Receipt = {
      operation_id: `change:${id}`,
      model_tx: String(txId),
      committed_operations: [{ kind: op.kind, resource_kind: 'asset', resource_id: op.asset_id, resulting_tx: String(txId) }],
      audit_events: ev.filter((e) => e.entity_kind !== null).map((e) => ({ entity_kind: e.entity_kind, entity_id: e.entity_id, action: e.action })),
    };
    const { rows } = await deps.db.query<Row>(
      `UPDATE change_set SET state = 'committed', committed_ns = $2, receipt = $3::jsonb WHERE change_set_id = $1 AND state = 'preview' RETURNING *`,
      [id, committedNs, JSON.stringify(receipt)]);
    if (rows.length === 0) throw new Error(`BUG: change set ${id} left preview while its commit was serialised`);
    await recordOperation(deps.operations, cs, receipt, principal);
    return toChangeSet(rows[0]);
  });
}

function driftConflict(id: string, drift: NonNullable<Awaited<ReturnType<typeof renameDrift>>>): ServiceError {
  return new ServiceError('conflict', `change set ${id}: asset ${drift.current.resource_id} changed since its preview (revision ${drift.current.revision})`, { ...drift });
}

/** The Operation record of a committed change set (adapter change-set), completed with the receipt. */
async function recordOperation(ops: OperationsCatalogue, cs: ChangeSet, receipt: Receipt, principal: string): Promise<void> {
  const opId = receipt.operation_id;
  await ops.start({
    namespace: 'change', localId: cs.change_set_id, kind: 'change-set.commit', principal, reason: cs.reason,
    sourceChangeSetId: cs.change_set_id, detail: { adapter: 'change-set', change_set_id: cs.change_set_id, change_set_state: 'preview' },
    total: BigInt(cs.operations.length), unit: 'operations', affected: cs.operations.map((o) => ({ kind: 'asset', id: o.asset_id })), state: 'running',
  });
  await ops.progress(opId, { completed: BigInt(cs.operations.length), stage: 'committed' });
  await ops.complete(opId, { adapter: 'change-set', value: receipt }, { adapter: 'change-set', change_set_id: cs.change_set_id, change_set_state: 'committed' });
}

export function cancelChangeSet(deps: ChangeSetDeps, id: string): Promise<ChangeSet> {
  return serialised(id, async () => {
    const { rows } = await deps.db.query<Row>(`UPDATE change_set SET state = 'cancelled' WHERE change_set_id = $1 AND state = 'preview' RETURNING *`, [id]);
    if (rows[0]) return toChangeSet(rows[0]);
    const cs = await getChangeSet(deps.db, id);
    if (!cs) throw new ServiceError('not-found', `change set ${id} not found`);
    throw stateConflict(id, cs.state);
  });
}
