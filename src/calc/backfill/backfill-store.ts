// Backfill jobs in the model database (calc_backfill): created with a preview, then
// committed (written window by window, the position saved after each durable window so a
// restart resumes after it) or cancelled.
import type { Queryable } from '../../model/db.js';
import { sqlTextArray } from '../../model/db.js';

export type BackfillState = 'previewing' | 'preview' | 'committing' | 'committed' | 'cancelled' | 'failed';

export interface BackfillPreview {
  points_added: bigint;
  points_changed: bigint;
  points_unchanged: bigint;
  sample: Array<{ asset_id: string; ts_ns: bigint; old: number | boolean | null; new: number | boolean }>;
}

export interface BackfillJob {
  job_id: string;
  rule_id: string;
  rule_version: number;
  mode: 'fill-gaps' | 'recalculate';
  asset_ids: string[];
  start_ns: bigint;
  end_ns: bigint;
  state: BackfillState;
  windows_total: bigint;
  windows_done: bigint;
  points_written: bigint;
  rate_limited_ms: bigint;
  assets_done: number;
  resume_after_ns: bigint | null;
  preview: BackfillPreview | null;
  operation_id: string;
  principal: string;
  error: string | null;
  created_ns: bigint;
}

function fromRow(r: BackfillJob): BackfillJob {
  return {
    ...r, rule_version: Number(r.rule_version), start_ns: BigInt(r.start_ns), end_ns: BigInt(r.end_ns), windows_total: BigInt(r.windows_total),
    windows_done: BigInt(r.windows_done), points_written: BigInt(r.points_written), rate_limited_ms: BigInt(r.rate_limited_ms),
    assets_done: Number(r.assets_done), resume_after_ns: r.resume_after_ns === null ? null : BigInt(r.resume_after_ns), created_ns: BigInt(r.created_ns),
  };
}

export async function insertJob(q: Queryable, j: Omit<BackfillJob, 'windows_done' | 'points_written' | 'rate_limited_ms' | 'assets_done' | 'resume_after_ns' | 'preview' | 'error'>): Promise<void> {
  await q.query(
    `INSERT INTO calc_backfill (job_id, rule_id, rule_version, mode, asset_ids, start_ns, end_ns, state, windows_total, operation_id, principal, created_ns)
     VALUES ($1, $2, $3, $4, $5::uuid[], $6, $7, $8, $9, $10, $11, $12)`,
    [j.job_id, j.rule_id, j.rule_version, j.mode, sqlTextArray(j.asset_ids), j.start_ns, j.end_ns, j.state, j.windows_total, j.operation_id, j.principal, j.created_ns]);
}

export async function jobById(q: Queryable, id: string): Promise<BackfillJob | null> {
  const { rows } = await q.query<BackfillJob>('SELECT * FROM calc_backfill WHERE job_id = $1', [id]);
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function jobsInState(q: Queryable, state: BackfillState): Promise<BackfillJob[]> {
  const { rows } = await q.query<BackfillJob>('SELECT * FROM calc_backfill WHERE state = $1 ORDER BY created_ns', [state]);
  return rows.map(fromRow);
}

/** Moves a job from one state to another; false when it was not in `from` (a race lost). */
export async function moveJob(q: Queryable, id: string, from: readonly BackfillState[], to: BackfillState, extra: { preview?: BackfillPreview; error?: string } = {}): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE calc_backfill SET state = $3, preview = COALESCE($4, preview), error = COALESCE($5, error) WHERE job_id = $1 AND state = ANY($2::text[])`,
    [id, sqlTextArray(from), to, extra.preview ? (extra.preview as unknown as Record<string, unknown>) : null, extra.error ?? null]);
  return (rowCount ?? 0) > 0;
}

/** Saves commit progress after a durable window. */
export async function saveProgress(q: Queryable, id: string, p: { windowsDone: bigint; pointsWritten: bigint; rateLimitedMs: bigint; assetsDone: number; resumeAfterNs: bigint | null }): Promise<void> {
  await q.query('UPDATE calc_backfill SET windows_done = $2, points_written = $3, rate_limited_ms = $4, assets_done = $5, resume_after_ns = $6 WHERE job_id = $1',
    [id, p.windowsDone, p.pointsWritten, p.rateLimitedMs, p.assetsDone, p.resumeAfterNs]);
}
