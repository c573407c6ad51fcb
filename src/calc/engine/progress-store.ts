// Durable engine state in the model database: per (rule, asset) the instant through which
// outputs are durable (calc_progress) and which rule version produced which window of an
// output (calc_lineage). Both are written only after the storage write of the outputs is
// durable, so after a crash the engine re-evaluates at most what it had not recorded, and
// re-evaluation rewrites identical values (no-ops in storage): no gap, no duplicate.
import { sqlTextArray, type Queryable } from '../../model/db.js';
import { nowNs } from '../../clock.js';

export interface Progress {
  rule_id: string;
  asset_id: string;
  evaluated_through_ns: bigint;
  rule_version: number;
  evaluations: bigint;
  errors: bigint;
  last_error: string | null;
  last_error_ns: bigint | null;
  updated_ns: bigint;
}

export async function progressOf(q: Queryable, ruleId: string): Promise<Map<string, Progress>> {
  const { rows } = await q.query<Progress>('SELECT * FROM calc_progress WHERE rule_id = $1', [ruleId]);
  return new Map(rows.map((r) => [r.asset_id, { ...r, evaluated_through_ns: BigInt(r.evaluated_through_ns), evaluations: BigInt(r.evaluations), errors: BigInt(r.errors), rule_version: Number(r.rule_version) }]));
}

export async function allProgress(q: Queryable): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ rule_id: string; asset_id: string; evaluated_through_ns: bigint }>('SELECT rule_id, asset_id, evaluated_through_ns FROM calc_progress');
  return new Map(rows.map((r) => [`${r.rule_id}/${r.asset_id}`, BigInt(r.evaluated_through_ns)]));
}

export interface WindowDone {
  ruleId: string;
  assetId: string;
  ruleVersion: number;
  outputSeries: string;
  startNs: bigint;
  endNs: bigint;
  /** The new evaluated-through instant (the engine's own; it moves back when `block` holds instants). */
  throughNs: bigint;
  evaluations: number;
  errors: number;
  lastError: string | null;
}

/**
 * Records evaluated windows (after their outputs are durable): progress moves forward,
 * lineage gains a window or extends the newest one when the same version continues it.
 * One statement each for the whole list, so a busy engine writes a few rows per flush.
 */
export async function recordWindows(q: Queryable, done: readonly WindowDone[]): Promise<void> {
  if (done.length === 0) return;
  const now = nowNs();
  const rule = done.map((d) => d.ruleId), asset = done.map((d) => d.assetId), version = done.map((d) => d.ruleVersion);
  const through = done.map((d) => String(d.throughNs)), evals = done.map((d) => d.evaluations), errs = done.map((d) => d.errors), lastErr = done.map((d) => d.lastError);
  await q.query(
    `INSERT INTO calc_progress (rule_id, asset_id, evaluated_through_ns, rule_version, evaluations, errors, last_error, last_error_ns, updated_ns)
     SELECT u.r, u.a, u.t, u.v, u.e, u.x, u.l, CASE WHEN u.l IS NULL THEN NULL ELSE $8::bigint END, $8::bigint
       FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::int[], $5::bigint[], $6::bigint[], $7::text[]) AS u(r, a, t, v, e, x, l)
     ON CONFLICT (rule_id, asset_id) DO UPDATE SET
       evaluated_through_ns = EXCLUDED.evaluated_through_ns,
       rule_version = EXCLUDED.rule_version,
       evaluations = calc_progress.evaluations + EXCLUDED.evaluations,
       errors = calc_progress.errors + EXCLUDED.errors,
       last_error = COALESCE(EXCLUDED.last_error, calc_progress.last_error),
       last_error_ns = COALESCE(EXCLUDED.last_error_ns, calc_progress.last_error_ns),
       updated_ns = EXCLUDED.updated_ns`,
    [sqlTextArray(rule), sqlTextArray(asset), sqlTextArray(through), sqlTextArray(version), sqlTextArray(evals), sqlTextArray(errs), sqlTextArray(lastErr), now]);
  await recordLineage(q, done);
}

export interface LineageSpan { ruleId: string; assetId: string; ruleVersion: number; outputSeries: string; startNs: bigint; endNs: bigint }

/** Lineage windows [startNs, endNs) produced by a rule version; the newest window grows when the same version continues it. */
export async function recordLineage(q: Queryable, spans: readonly LineageSpan[]): Promise<void> {
  const now = nowNs();
  for (const d of spans) {
    const ext = await q.query(
      `UPDATE calc_lineage SET end_ns = GREATEST(end_ns, $4), start_ns = LEAST(start_ns, $3), evaluated_at_ns = $5
        WHERE seq = (SELECT max(seq) FROM calc_lineage WHERE rule_id = $1 AND asset_id = $2) AND rule_version = $6 AND $3 <= end_ns AND $4 >= start_ns`,
      [d.ruleId, d.assetId, d.startNs, d.endNs, now, d.ruleVersion]);
    if ((ext.rowCount ?? 0) === 0) {
      await q.query('INSERT INTO calc_lineage (rule_id, asset_id, output_series, rule_version, start_ns, end_ns, evaluated_at_ns) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [d.ruleId, d.assetId, d.outputSeries, d.ruleVersion, d.startNs, d.endNs, now]);
    }
  }
}

/** Records an evaluation failure (the window stays due; progress does not move). */
export async function recordFailure(q: Queryable, ruleId: string, assetId: string, ruleVersion: number, message: string): Promise<void> {
  const now = nowNs();
  await q.query(
    `INSERT INTO calc_progress (rule_id, asset_id, evaluated_through_ns, rule_version, errors, last_error, last_error_ns, updated_ns)
     VALUES ($1, $2, -9223372036854775808, $3, 1, $4, $5, $5)
     ON CONFLICT (rule_id, asset_id) DO UPDATE SET errors = calc_progress.errors + 1, last_error = $4, last_error_ns = $5, updated_ns = $5`,
    [ruleId, assetId, ruleVersion, message, now]);
}

/** Resets a rule's progress (PUT with recompute=history): everything is evaluated again with the new version. */
export async function resetProgress(q: Queryable, ruleId: string): Promise<void> {
  await q.query('UPDATE calc_progress SET evaluated_through_ns = -9223372036854775808 WHERE rule_id = $1', [ruleId]);
}

export interface LineageWindow { rule_id: string; asset_id: string; output_series: string; rule_version: number; start_ns: bigint; end_ns: bigint; evaluated_at_ns: bigint }

export async function lineageOf(q: Queryable, outputSeries: string, startNs: bigint | null, endNs: bigint | null): Promise<LineageWindow[]> {
  const { rows } = await q.query<LineageWindow>(
    `SELECT rule_id, asset_id, output_series, rule_version, start_ns, end_ns, evaluated_at_ns FROM calc_lineage
      WHERE output_series = $1 AND ($2::bigint IS NULL OR end_ns >= $2) AND ($3::bigint IS NULL OR start_ns < $3) ORDER BY start_ns, seq`,
    [outputSeries, startNs, endNs]);
  return rows.map((r) => ({ ...r, rule_version: Number(r.rule_version), start_ns: BigInt(r.start_ns), end_ns: BigInt(r.end_ns), evaluated_at_ns: BigInt(r.evaluated_at_ns) }));
}
