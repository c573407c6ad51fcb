// Administration change sets: create (server-derived preview and its hash), read,
// commit (state, hash and drift checks, then the change through the asset model's own
// code path, the receipt and an Operation record, all in one model transaction), cancel.
//
// Commits of one change set are serialised in this process (the deployment is one
// service process per model database, as the asset model's caches already assume), so
// a commit and a cancel of the same change set cannot interleave.
import { randomUUID } from 'node:crypto';
import { jsonbParam, type Db, type Queryable } from '../model/db.js';
import type { AssetModel } from '../model/assets/asset-model.js';
import type { OperationsCatalogue } from '../operations/catalogue.js';
import { ServiceError } from '../errors.js';
import { nowNs } from '../clock.js';
import { previewHash } from '../json/canonical-json.js';
import { previewRename, renameDrift, renameDriftIn, applyRenameIn, type Drift, type Preview, type RenameOperation } from './asset-rename.js';
import { modelTransaction, type EventSink } from '../model/tx-log.js';

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
    [id, reason, jsonbParam([clean]), jsonbParam(preview), previewHash(preview), nowNs(), principal]);
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
    const op = cs.operations[0];
    try {
      // The rename, the change set's new state with its receipt and the Operation record
      // commit together in one model transaction, or none of them does.
      const c = await modelTransaction(deps.db, { principal, reason: cs.reason }, async (q, txId, events) => {
        const { rows: locked } = await q.query<{ state: ChangeSetState }>('SELECT state FROM change_set WHERE change_set_id = $1 FOR UPDATE', [id]);
        if (locked[0].state !== 'preview') throw stateConflict(id, locked[0].state);
        const drift = await renameDriftIn(q, cs.preview, txId);
        if (drift) throw driftConflict(id, drift);
        // The receipt lists the transaction's events, so the sink records what it forwards.
        const audit: Receipt['audit_events'] = [];
        const recording: EventSink = {
          emit(entityKind, entityId, action, details) { audit.push({ entity_kind: entityKind, entity_id: entityId, action }); events.emit(entityKind, entityId, action, details); },
        };
        await applyRenameIn(q, txId, recording, op, cs.preview.changes[0].base_tx);
        const { rows: tx } = await q.query<{ committed_ns: bigint }>('SELECT committed_ns FROM model_tx WHERE tx_id = $1', [txId]);
        const receipt: Receipt = {
          operation_id: `change:${id}`,
          model_tx: String(txId),
          committed_operations: [{ kind: op.kind, resource_kind: 'asset', resource_id: op.asset_id, resulting_tx: String(txId) }],
          audit_events: audit,
        };
        const { rows } = await q.query<Row>(
          `UPDATE change_set SET state = 'committed', committed_ns = $2, receipt = $3::jsonb WHERE change_set_id = $1 AND state = 'preview' RETURNING *`,
          [id, tx[0].committed_ns, jsonbParam(receipt)]);
        await recordOperationIn(q, deps.operations, cs, receipt, principal);
        return rows[0];
      });
      return toChangeSet(c.result);
    } catch (e) {
      // A change that committed between the drift read and the write: report it as drift.
      if (e instanceof ServiceError && e.code === 'conflict' && e.details?.expected_tx !== undefined) {
        const late = await renameDrift(deps.model, cs.preview);
        if (late) throw driftConflict(id, late);
      }
      throw e;
    }
  });
}

function driftConflict(id: string, drift: Drift): ServiceError {
  return new ServiceError('conflict', `change set ${id}: asset ${drift.current.resource_id} changed since its preview (revision ${drift.current.revision})`, { ...drift });
}

/** The Operation record of a committed change set (adapter change-set), written in the commit's transaction. */
async function recordOperationIn(q: Queryable, ops: OperationsCatalogue, cs: ChangeSet, receipt: Receipt, principal: string): Promise<void> {
  const opId = receipt.operation_id;
  await ops.startIn(q, {
    namespace: 'change', localId: cs.change_set_id, kind: 'change-set.commit', principal, reason: cs.reason,
    sourceChangeSetId: cs.change_set_id, detail: { adapter: 'change-set', change_set_id: cs.change_set_id, change_set_state: 'preview' },
    total: BigInt(cs.operations.length), unit: 'operations', affected: cs.operations.map((o) => ({ kind: 'asset', id: o.asset_id })), state: 'running',
  });
  await ops.progressIn(q, opId, { completed: BigInt(cs.operations.length), stage: 'committed' });
  await ops.completeIn(q, opId, { adapter: 'change-set', value: receipt }, { adapter: 'change-set', change_set_id: cs.change_set_id, change_set_state: 'committed' });
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
