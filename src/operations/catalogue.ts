// Operation records: the durable account of long-running server work (lifecycle
// enforcement, backfills, change-set commits). Work reports through a small API
// (start, progress, complete, fail, cancel); readers list and inspect it through
// GET /v1/operations, filtered to what the caller may see.
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../model/db.js';
import { nowNs } from '../clock.js';
import { ServiceError } from '../errors.js';

export const OPERATION_STATES = ['queued', 'running', 'awaiting-commit', 'completed', 'cancelled', 'failed'] as const;
export type OperationState = (typeof OPERATION_STATES)[number];
const FINAL: ReadonlySet<OperationState> = new Set(['completed', 'cancelled', 'failed']);

export const OPERATION_ID_RE = /^[a-z][a-z0-9-]*:[A-Za-z0-9._-]{1,128}$/;
export const OPERATION_KIND_RE = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

export interface OperationDetail { adapter: string; [k: string]: unknown }

export interface OperationRecord {
  id: string;
  kind: string;
  principal: string;
  reason: string;
  source_change_set_id: string | null;
  state: OperationState;
  stage: string;
  progress: { completed: bigint; total: bigint | null; unit: string };
  rate: number | null;
  estimated_work_remaining: bigint | null;
  affected_resources: Array<{ kind: string; id: string }>;
  cancellable: boolean;
  created_ns: string;
  completed_ns: string | null;
  detail: OperationDetail;
  receipt: { adapter: string; value: unknown } | null;
  error: unknown;
}

export interface StartOperation {
  /** Namespace of the id, e.g. 'change' gives 'change:<uuid>'. */
  namespace: string;
  localId?: string;
  kind: string;
  principal: string;
  reason?: string;
  sourceChangeSetId?: string;
  detail: OperationDetail;
  total?: bigint | null;
  unit?: string;
  affected?: Array<{ kind: string; id: string }>;
  cancellable?: boolean;
  state?: 'queued' | 'running';
}

export interface ProgressReport { completed: bigint; total?: bigint | null; stage?: string; rate?: number | null; remaining?: bigint | null }

export interface ListFilter {
  kind?: string;
  state?: OperationState;
  /** Only records of this principal; undefined means every record (administrators). */
  principal?: string;
  limit: number;
  after?: { createdNs: bigint; id: string };
}

interface Row {
  id: string; kind: string; principal: string; reason: string; source_change_set_id: string | null; state: OperationState;
  stage: string; progress_completed: bigint; progress_total: bigint | null; progress_unit: string; rate: number | null;
  estimated_work_remaining: bigint | null; affected_resources: Array<{ kind: string; id: string }>; cancellable: boolean;
  created_ns: bigint; completed_ns: bigint | null; detail: OperationDetail; receipt: { adapter: string; value: unknown } | null; error: unknown;
}

const toRecord = (r: Row): OperationRecord => ({
  id: r.id,
  kind: r.kind,
  principal: r.principal,
  reason: r.reason,
  source_change_set_id: r.source_change_set_id,
  state: r.state,
  stage: r.stage,
  progress: { completed: BigInt(r.progress_completed), total: r.progress_total === null ? null : BigInt(r.progress_total), unit: r.progress_unit },
  rate: r.rate === null ? null : Number(r.rate),
  estimated_work_remaining: r.estimated_work_remaining === null ? null : BigInt(r.estimated_work_remaining),
  affected_resources: r.affected_resources,
  cancellable: r.cancellable,
  created_ns: String(r.created_ns),
  completed_ns: r.completed_ns === null ? null : String(r.completed_ns),
  detail: r.detail,
  receipt: r.receipt,
  error: r.error,
});

export class OperationsCatalogue {
  constructor(private readonly db: Db) {}

  async start(op: StartOperation): Promise<OperationRecord> {
    return this.startIn(this.db, op);
  }

  /**
   * start inside the caller's transaction (q), so the record commits or rolls back with
   * the work it describes (a change-set commit writes it in its model transaction).
   */
  async startIn(q: Queryable, op: StartOperation): Promise<OperationRecord> {
    const id = `${op.namespace}:${op.localId ?? randomUUID()}`;
    if (!OPERATION_ID_RE.test(id)) throw new Error(`BUG: operation id ${id} is not namespaced`);
    if (!OPERATION_KIND_RE.test(op.kind)) throw new Error(`BUG: operation kind ${op.kind} is not a dotted lowercase name`);
    const { rows } = await q.query<Row>(
      `INSERT INTO operation (id, kind, principal, reason, source_change_set_id, state, progress_total, progress_unit,
         affected_resources, cancellable, created_ns, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
      [id, op.kind, op.principal, op.reason ?? '', op.sourceChangeSetId ?? null, op.state ?? 'running', op.total ?? null,
        op.unit ?? 'items', op.affected ?? [], op.cancellable ?? false, nowNs(), op.detail],
    );
    return toRecord(rows[0]);
  }

  /** Records progress; returns false when a cancel was requested, so the work can stop. */
  async progress(id: string, p: ProgressReport): Promise<boolean> {
    return this.progressIn(this.db, id, p);
  }

  /** progress inside the caller's transaction. */
  async progressIn(q: Queryable, id: string, p: ProgressReport): Promise<boolean> {
    const { rows } = await q.query<{ cancel_requested: boolean }>(
      `UPDATE operation SET progress_completed = $2, progress_total = COALESCE($3, progress_total), stage = COALESCE($4, stage),
         rate = $5, estimated_work_remaining = $6, state = CASE WHEN state = 'queued' THEN 'running' ELSE state END
       WHERE id = $1 AND state IN ('queued', 'running') RETURNING cancel_requested`,
      [id, p.completed, p.total ?? null, p.stage ?? null, p.rate ?? null, p.remaining ?? null],
    );
    return rows.length === 1 && !rows[0].cancel_requested;
  }

  async awaitCommit(id: string, detail?: OperationDetail): Promise<void> {
    await this.finishOrMove(id, 'awaiting-commit', { detail });
  }

  async complete(id: string, receipt: { adapter: string; value: unknown } | null, detail?: OperationDetail): Promise<OperationRecord> {
    return this.finishOrMove(id, 'completed', { receipt, detail });
  }

  /** complete inside the caller's transaction. */
  async completeIn(q: Queryable, id: string, receipt: { adapter: string; value: unknown } | null, detail?: OperationDetail): Promise<OperationRecord> {
    return this.finishOrMove(id, 'completed', { receipt, detail }, q);
  }

  async fail(id: string, error: unknown, detail?: OperationDetail): Promise<OperationRecord> {
    return this.finishOrMove(id, 'failed', { error, detail });
  }

  /** Cancels queued work at once; running work gets a request it sees at its next progress report. */
  async cancel(id: string): Promise<OperationRecord> {
    const current = await this.get(id);
    if (!current) throw new ServiceError('not-found', `operation ${id} not found`);
    if (FINAL.has(current.state)) throw new ServiceError('conflict', `operation ${id} is already ${current.state}`, { state: current.state });
    if (!current.cancellable) throw new ServiceError('conflict', `operation ${id} cannot be cancelled`);
    if (current.state === 'running') {
      await this.db.query('UPDATE operation SET cancel_requested = true WHERE id = $1', [id]);
      return current;
    }
    return this.finishOrMove(id, 'cancelled', {});
  }

  private async finishOrMove(id: string, state: OperationState, f: { receipt?: unknown; error?: unknown; detail?: OperationDetail }, q: Queryable = this.db): Promise<OperationRecord> {
    const { rows } = await q.query<Row>(
      `UPDATE operation SET state = $2, completed_ns = CASE WHEN $3 THEN $4::bigint ELSE NULL END,
         receipt = COALESCE($5, receipt), error = COALESCE($6, error), detail = COALESCE($7, detail),
         estimated_work_remaining = CASE WHEN $3 THEN 0 ELSE estimated_work_remaining END
       WHERE id = $1 AND state NOT IN ('completed', 'cancelled', 'failed') RETURNING *`,
      [id, state, FINAL.has(state), nowNs(), f.receipt === undefined ? null : (f.receipt as Record<string, unknown> | null),
        f.error === undefined ? null : { value: f.error } as Record<string, unknown>, f.detail ?? null],
    );
    if (rows.length === 0) throw new ServiceError('conflict', `operation ${id} is not open`);
    return toRecord(fixError(rows[0]));
  }

  async get(id: string): Promise<OperationRecord | null> {
    const { rows } = await this.db.query<Row>('SELECT * FROM operation WHERE id = $1', [id]);
    return rows[0] ? toRecord(fixError(rows[0])) : null;
  }

  /** Keyset page over (created_ns, id) ascending; fetches one extra row to know whether more follow. */
  async list(f: ListFilter): Promise<{ items: OperationRecord[]; more: boolean }> {
    const where: string[] = [];
    const params: unknown[] = [];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    if (f.kind) where.push(`kind = ${p(f.kind)}`);
    if (f.state) where.push(`state = ${p(f.state)}`);
    if (f.principal !== undefined) where.push(`principal = ${p(f.principal)}`);
    if (f.after) where.push(`(created_ns, id) > (${p(f.after.createdNs)}::bigint, ${p(f.after.id)}::text)`);
    const sql = `SELECT * FROM operation ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_ns, id LIMIT ${p(f.limit + 1)}`;
    const { rows } = await this.db.query<Row>(sql, params as never[]);
    const more = rows.length > f.limit;
    return { items: rows.slice(0, f.limit).map((r) => toRecord(fixError(r))), more };
  }
}

// error is stored wrapped ({value}) so that a JSON null error and "no error" stay distinct.
function fixError(r: Row): Row {
  const e = r.error as { value: unknown } | null;
  return { ...r, error: e === null ? null : e.value };
}
