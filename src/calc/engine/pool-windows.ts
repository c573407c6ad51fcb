// Where the engine's windows are evaluated. The evaluation itself (reading inputs, the
// grid, the compiled plan, the output batch) is src/calc-kernel/window-eval.ts, below the
// read pool, so a worker runs it; this module is the engine's view of it, and sends windows
// to the workers.
import { ServiceError } from '../../errors.js';
import type { ReadPool } from '../../workers/read-pool.js';
import type { CalcWindowRequest, CalcWindowResult, CalcWindowsTask, EvaluateWindows } from '../../workers/tasks/calc-windows-task.js';
import { OUTPUT_TYPES, type RulePlanData, type Target, type WindowOutcome } from '../../calc-kernel/window-eval.js';
import type { WindowDiff } from '../../calc-kernel/window-diff.js';
export {
  evaluateWindow, finalisedThrough, compiledRuleOf, traceContextOf,
  type CompiledRule, type TraceContext, type RulePlanData, type Target, type WindowOutcome, type WindowTrigger,
} from '../../calc-kernel/window-eval.js';

/** One window to evaluate: the engine's (trace as asked) or a backfill's diff. */
export interface WindowWork {
  target: Target;
  from: bigint;
  to: bigint;
  kind: 'evaluate' | 'diff';
  trace?: boolean;
  triggerName?: string;
  ignoreBlock?: boolean;
  mode?: 'fill-gaps' | 'recalculate';
  sampleRoom?: number;
  /** diff: bring the points to write back (a commit); a preview needs only the counts and sample. */
  keepBatch?: boolean;
}

/** Each target's references as the task carries them, made once per target (plans are swapped, not changed). */
const refsOf = new WeakMap<Target, Array<[string, string | null]>>();
function refsFor(t: Target): Array<[string, string | null]> {
  let r = refsOf.get(t);
  if (!r) { r = [...t.seriesByRef]; refsOf.set(t, r); }
  return r;
}

/**
 * Each target's series as an evaluate task carries them (its output series, then the series of
 * each of its rule's inputRefs, '' when unbound, joined by newlines), made once per target.
 */
const idsOf = new WeakMap<Target, string>();
function idsFor(t: Target): string {
  let s = idsOf.get(t);
  if (s === undefined) {
    s = [t.outputSeries, ...t.rule.inputRefs.map((ref) => t.seriesByRef.get(ref) ?? '')].join('\n');
    idsOf.set(t, s);
  }
  return s;
}

/**
 * The engine's windows (all 'evaluate') as columns: a structured clone of one object per
 * window (fifteen fields, strings and bigints) was a fifth of a worker's live window, and as
 * much again on this thread (profile, 2026-11-28); typed arrays and one string clone as copies.
 */
function evaluateTaskOf(work: readonly WindowWork[]): CalcWindowsTask {
  const plans: RulePlanData[] = [];
  const index = new Map<RulePlanData, number>();
  const n = work.length;
  const live: EvaluateWindows = {
    count: n, plan: new Int32Array(n), flags: new Uint8Array(n), outputType: new Uint8Array(n),
    fromNs: new BigInt64Array(n), toNs: new BigInt64Array(n), ids: '',
  };
  const ids: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const w = work[i];
    const data = w.target.rule.data;
    let p = index.get(data);
    if (p === undefined) { p = plans.length; plans.push(data); index.set(data, p); }
    live.plan[i] = p;
    live.flags[i] = (w.trace ? 1 : 0) | (w.ignoreBlock ? 2 : 0);
    live.outputType[i] = OUTPUT_TYPES.indexOf(w.target.outputType);
    live.fromNs[i] = w.from;
    live.toNs[i] = w.to;
    ids[i] = idsFor(w.target);
  }
  live.ids = ids.join('\n');
  return { plans, windows: [], live };
}

/** One task's worth of windows, the rule versions' plans sent once per task. */
function taskOf(work: readonly WindowWork[]): CalcWindowsTask {
  if (work.every((w) => w.kind === 'evaluate')) return evaluateTaskOf(work);
  const plans: RulePlanData[] = [];
  const index = new Map<RulePlanData, number>();
  const windows = work.map((w): CalcWindowRequest => {
    const data = w.target.rule.data;
    let p = index.get(data);
    if (p === undefined) { p = plans.length; plans.push(data); index.set(data, p); }
    return {
      plan: p, assetId: w.target.assetId, seriesByRef: refsFor(w.target), outputSeries: w.target.outputSeries, outputType: w.target.outputType,
      fromNs: w.from, toNs: w.to, kind: w.kind, trace: w.trace ?? false, triggerName: w.triggerName ?? w.kind, ignoreBlock: w.ignoreBlock ?? false,
      mode: w.mode ?? 'recalculate', sampleRoom: w.sampleRoom ?? 0, keepBatch: w.keepBatch ?? true,
    };
  });
  return { plans, windows };
}

function unwrap(r: CalcWindowResult): WindowOutcome | WindowDiff | Error {
  if (!r.ok) return ServiceError.fromWire(r.error);
  return r.kind === 'diff' ? r.diff : r.outcome;
}

/**
 * Evaluates windows in the read pool's workers, split into one task per worker so both run
 * at once; per window (in order) its outcome, or the Error it raised.
 */
export async function evaluateWindowsInPool(pool: ReadPool, work: readonly WindowWork[]): Promise<Array<WindowOutcome | Error>> {
  if (work.length === 0) return [];
  const parts = Math.min(pool.threads, work.length);
  const size = Math.ceil(work.length / parts);
  const tasks: Array<Promise<CalcWindowResult[]>> = [];
  for (let i = 0; i < work.length; i += size) tasks.push(pool.runCalcWindows(taskOf(work.slice(i, i + size))));
  const out: Array<WindowOutcome | Error> = [];
  for (const results of await Promise.all(tasks)) for (const r of results) out.push(unwrap(r) as WindowOutcome | Error);
  return out;
}

/** A backfill's window diffed in a worker (one task: the caller keeps several in flight). */
export async function diffWindowInPool(pool: ReadPool, w: WindowWork): Promise<WindowDiff> {
  const [r] = await pool.runCalcWindows(taskOf([{ ...w, kind: 'diff' }]));
  const d = unwrap(r);
  if (d instanceof Error) throw d;
  return d as WindowDiff;
}
