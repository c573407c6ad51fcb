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
  await recordedSoFar(q);
  const { rows } = await q.query<Progress>('SELECT * FROM calc_progress WHERE rule_id = $1', [ruleId]);
  return new Map(rows.map((r) => [r.asset_id, { ...r, evaluated_through_ns: BigInt(r.evaluated_through_ns), evaluations: BigInt(r.evaluations), errors: BigInt(r.errors), rule_version: Number(r.rule_version) }]));
}

export async function allProgress(q: Queryable): Promise<Map<string, bigint>> {
  const { rows } = await q.query<{ rule_id: string; asset_id: string; evaluated_through_ns: bigint }>('SELECT rule_id, asset_id, evaluated_through_ns FROM calc_progress');
  return new Map(rows.map((r) => [`${r.rule_id}/${r.asset_id}`, BigInt(r.evaluated_through_ns)]));
}

/** The newest lineage window a writer (a target, a backfill) extends while its rule version continues it. */
export interface LineageCursor { seq: bigint | null; version: number; start: bigint; end: bigint }

export const newCursor = (): LineageCursor => ({ seq: null, version: 0, start: 0n, end: 0n });

export interface LineageSpan {
  ruleId: string;
  assetId: string;
  ruleVersion: number;
  outputSeries: string;
  /** The window [startNs, endNs) the version produced. */
  startNs: bigint;
  endNs: bigint;
  cursor: LineageCursor;
}

export interface WindowDone extends LineageSpan {
  /** The new evaluated-through instant (the engine's own; it moves back when `block` holds instants). */
  throughNs: bigint;
  evaluations: number;
  errors: number;
  lastError: string | null;
}

/**
 * Records evaluated windows (after their outputs are durable): progress is set, lineage
 * extends each writer's newest window or gains one. A few statements for the whole list,
 * however many targets a batch evaluated.
 */
export async function recordWindows(q: Queryable, done: readonly WindowDone[]): Promise<void> {
  if (done.length === 0) return;
  const now = nowNs();
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
    [sqlTextArray(done.map((d) => d.ruleId)), sqlTextArray(done.map((d) => d.assetId)), sqlTextArray(done.map((d) => d.throughNs)),
      sqlTextArray(done.map((d) => d.ruleVersion)), sqlTextArray(done.map((d) => d.evaluations)), sqlTextArray(done.map((d) => d.errors)),
      sqlTextArray(done.map((d) => d.lastError)), now]);
  await recordLineage(q, done.filter((d) => d.evaluations > 0));
}

/**
 * Batches' recorded windows merged per target, for one recording in place of one per batch
 * (at 10,000 inputs a second the engine runs ~150 small batches a second, three statements
 * each). In batch order, a target's later window folds into its earlier one while the rule
 * version and lineage cursor continue it, as the statements one by one would have left the
 * row: the later evaluated-through, the counts summed, the later error else the earlier; its
 * lineage span covers the windows that evaluated something. A target whose version or
 * cursor changed goes to the next round, so no statement updates a row twice.
 */
export function coalesceDone(lists: ReadonlyArray<readonly WindowDone[]>): WindowDone[][] {
  const rounds: WindowDone[][] = [];
  const last = new Map<string, { d: WindowDone; round: number }>();
  for (const list of lists) {
    for (const d of list) {
      const key = `${d.ruleId}/${d.assetId}`;
      const prev = last.get(key);
      if (prev && prev.d.ruleVersion === d.ruleVersion && prev.d.cursor === d.cursor && prev.d.outputSeries === d.outputSeries) {
        const m = prev.d;
        if (d.evaluations > 0) {
          if (m.evaluations > 0) { if (d.startNs < m.startNs) m.startNs = d.startNs; if (d.endNs > m.endNs) m.endNs = d.endNs; }
          else { m.startNs = d.startNs; m.endNs = d.endNs; }
        }
        m.throughNs = d.throughNs;
        m.evaluations += d.evaluations;
        m.errors += d.errors;
        m.lastError = d.lastError ?? m.lastError;
        continue;
      }
      const round = prev ? prev.round + 1 : 0;
      const copy = { ...d };
      (rounds[round] ??= []).push(copy);
      last.set(key, { d: copy, round });
    }
  }
  return rounds;
}

/**
 * Least time between the starts of two recordings. A recording's statements cost by the
 * targets it names, not by the batches merged into it: at 10,000 targets each recording
 * upserts ~10,000 progress rows and extends as many lineage windows, and recordings started
 * as soon as the previous one ended ran back to back. Progress lagging the durable outputs
 * by this much costs a restart at most this much re-evaluation (identical rewrites).
 */
export const RECORD_INTERVAL_MS = 1_000;

/** The recorder writing to each model database, so readers of progress and lineage can have it record what waits first. */
const recorderOf = new WeakMap<Queryable, ProgressRecorder>();

/**
 * Progress and lineage routes read the model database: whatever waits for the recorder's
 * next interval is recorded first, so they show every window whose outputs are durable
 * (a read of lineage right after an output was read back saw none of it).
 */
function recordedSoFar(q: Queryable): Promise<void> {
  return recorderOf.get(q)?.settled() ?? Promise.resolve();
}

/**
 * Records batches' windows in batch order, at most one recording per RECORD_INTERVAL_MS:
 * batches that finish meanwhile wait together and are recorded at once, merged per target
 * (coalesceDone): one set of statements for all of them, not one per batch. settled()
 * records what waits at once (close, re-plan, tests). A failed recording is reported and not
 * retried (the outputs are durable; progress lagging them only means a restart re-evaluates
 * a little).
 */
export class ProgressRecorder {
  private chain: Promise<void> = Promise.resolve();
  private waiting: WindowDone[][] = [];
  /** A recording is queued on the chain or timed, and will take what waits. */
  private pending = false;
  private timer: NodeJS.Timeout | null = null;
  private lastStartMs = -Infinity;
  /** Recordings made, rows they upserted, and milliseconds they took (diagnostics, bench). */
  recordings = 0;
  rows = 0;
  ms = 0;
  constructor(private readonly db: Queryable, private readonly onError: (e: unknown) => void, public intervalMs = RECORD_INTERVAL_MS) {
    recorderOf.set(db, this);
  }

  queue(record: WindowDone[]): void {
    if (record.length === 0) return;
    this.waiting.push(record);
    if (this.pending) return; // the queued recording takes this list too
    this.pending = true;
    const wait = this.lastStartMs + this.intervalMs - performance.now();
    if (wait <= 0) { this.record(); return; }
    this.timer = setTimeout(() => { this.timer = null; this.record(); }, wait);
    this.timer.unref();
  }

  private record(): void {
    this.chain = this.chain.then(async () => {
      this.pending = false;
      const lists = this.waiting;
      this.waiting = [];
      if (lists.length === 0) return;
      const t0 = performance.now();
      this.lastStartMs = t0;
      for (const round of coalesceDone(lists)) { await recordWindows(this.db, round); this.rows += round.length; }
      this.recordings++;
      this.ms += performance.now() - t0;
    }).catch(this.onError);
  }

  /** Records what waits now, and resolves when every list queued so far is recorded (or its recording failed). */
  settled(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; this.record(); }
    return this.chain;
  }
}

/** Lineage of spans, after their outputs are durable: one UPDATE for the windows extended, one INSERT for the new ones. */
export async function recordLineage(q: Queryable, spans: readonly LineageSpan[]): Promise<void> {
  if (spans.length === 0) return;
  const now = nowNs();
  const extend: LineageSpan[] = [], fresh: LineageSpan[] = [];
  for (const d of spans) {
    const c = d.cursor;
    if (c.seq !== null && c.version === d.ruleVersion && d.startNs <= c.end && d.endNs >= c.start) {
      if (d.startNs < c.start) c.start = d.startNs;
      if (d.endNs > c.end) c.end = d.endNs;
      extend.push(d);
    } else fresh.push(d);
  }
  if (extend.length > 0) {
    await q.query(
      `UPDATE calc_lineage l SET start_ns = u.s, end_ns = u.e, evaluated_at_ns = $4
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(q, s, e) WHERE l.seq = u.q`,
      [sqlTextArray(extend.map((d) => d.cursor.seq as bigint)), sqlTextArray(extend.map((d) => d.cursor.start)), sqlTextArray(extend.map((d) => d.cursor.end)), now]);
  }
  if (fresh.length > 0) {
    const { rows } = await q.query<{ seq: bigint; ord: number }>(
      `INSERT INTO calc_lineage (rule_id, asset_id, output_series, rule_version, start_ns, end_ns, evaluated_at_ns)
       SELECT u.r, u.a, u.o, u.v, u.s, u.e, $7::bigint FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[], $5::bigint[], $6::bigint[]) WITH ORDINALITY AS u(r, a, o, v, s, e, ord)
        ORDER BY u.ord RETURNING seq`,
      [sqlTextArray(fresh.map((d) => d.ruleId)), sqlTextArray(fresh.map((d) => d.assetId)), sqlTextArray(fresh.map((d) => d.outputSeries)),
        sqlTextArray(fresh.map((d) => d.ruleVersion)), sqlTextArray(fresh.map((d) => d.startNs)), sqlTextArray(fresh.map((d) => d.endNs)), now]);
    // seq is a bigserial taken in insertion order, which follows the ORDER BY: the k-th smallest is the k-th span's.
    const seqs = rows.map((r) => BigInt(r.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    fresh.forEach((d, k) => { Object.assign(d.cursor, { seq: seqs[k], version: d.ruleVersion, start: d.startNs, end: d.endNs }); });
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
  await recordedSoFar(q);
  const { rows } = await q.query<LineageWindow>(
    `SELECT rule_id, asset_id, output_series, rule_version, start_ns, end_ns, evaluated_at_ns FROM calc_lineage
      WHERE output_series = $1 AND ($2::bigint IS NULL OR end_ns >= $2) AND ($3::bigint IS NULL OR start_ns < $3) ORDER BY start_ns, seq`,
    [outputSeries, startNs, endNs]);
  return rows.map((r) => ({ ...r, rule_version: Number(r.rule_version), start_ns: BigInt(r.start_ns), end_ns: BigInt(r.end_ns), evaluated_at_ns: BigInt(r.evaluated_at_ns) }));
}
