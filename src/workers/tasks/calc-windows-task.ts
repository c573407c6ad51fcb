// Calculation windows in a read-pool worker: the engine's live windows and a backfill's
// windows (evaluated, and diffed against what the output series holds). A task carries the
// rule versions' plans as plain data; the worker builds each version's evaluators once and
// keeps them (keyed by rule and version, least recently used dropped), with one set of grid
// and column buffers reused across windows (results are copied out of them). The
// results come back by structured clone: typed columns of a day of outputs are a few MB,
// copied in about a millisecond, so nothing large is rebuilt on the HTTP thread.
import { ServiceError, isServiceError, type WireError } from '../../errors.js';
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import { EvaluationScratch } from '../../calc-kernel/input-read.js';
import { OUTPUT_TYPES, compiledRuleOf, evaluateWindow, type CompiledRule, type RulePlanData, type Target, type WindowOutcome } from '../../calc-kernel/window-eval.js';
import { diffWindow, type WindowDiff } from '../../calc-kernel/window-diff.js';
import { withLatestView } from '../worker-state.js';
import type { ReadView } from '../../storage/series-store.js';

/** One window of one target: evaluated as the engine does, or diffed for a backfill. */
export interface CalcWindowRequest {
  /** Index into the task's plans. */
  plan: number;
  assetId: string;
  seriesByRef: Array<[string, string | null]>;
  outputSeries: string;
  outputType: ValueType;
  fromNs: bigint;
  toNs: bigint;
  /** evaluate: the engine's window (trace when asked); diff: a backfill's, compared with the stored outputs. */
  kind: 'evaluate' | 'diff';
  trace: boolean;
  triggerName: string;
  ignoreBlock: boolean;
  mode: 'fill-gaps' | 'recalculate';
  sampleRoom: number;
  /** diff: send the points to write back (a commit), or only the counts and sample (a preview: no columns cloned). */
  keepBatch: boolean;
}

/**
 * Windows to evaluate as the engine sends them, as columns (one per field, a row per window):
 * cloned as a few copies instead of an object per window.
 */
export interface EvaluateWindows {
  count: number;
  /** Index into the task's plans. */
  plan: Int32Array;
  /** 1: trace; 2: ignore `provisional: block`. */
  flags: Uint8Array;
  /** Index into OUTPUT_TYPES. */
  outputType: Uint8Array;
  fromNs: BigInt64Array;
  toNs: BigInt64Array;
  /** Per window, its output series and then its plan's inputRefs' series ('' unbound), every id newline-separated. */
  ids: string;
}

export interface CalcWindowsTask {
  plans: RulePlanData[];
  windows: CalcWindowRequest[];
  /** Evaluate windows as columns (then `windows` is empty). */
  live?: EvaluateWindows;
}

export type CalcWindowResult =
  | { ok: true; kind: 'evaluate'; outcome: WindowOutcome }
  | { ok: true; kind: 'diff'; diff: WindowDiff }
  | { ok: false; error: WireError };

/**
 * Rule versions kept per worker, least recently used dropped first. A version's program holds
 * its registers (13 KB each for a block of 1,024 instants; ~130 KB for ten), so 512 stay
 * under ~70 MB per worker.
 */
const MAX_RULES = 512;
const rules = new Map<string, CompiledRule>();
const scratch = new EvaluationScratch();

function ruleOf(data: RulePlanData): CompiledRule {
  const key = `${data.ruleId}@${data.version}`;
  let r = rules.get(key);
  if (r) {
    rules.delete(key); // re-inserted: a Map iterates in insertion order, so the first key is the least recent
  } else {
    if (rules.size >= MAX_RULES) rules.delete(rules.keys().next().value as string);
    r = compiledRuleOf(data);
  }
  rules.set(key, r);
  return r;
}

/**
 * Moves the evaluated windows' columns (outputs and trace) into one buffer per column type,
 * each window keeping views of it: the structured clone back then copies three buffers
 * instead of several per window, and the HTTP thread gets three allocations per task instead
 * of tens of thousands a second (live windows hold a point or two each).
 */
function packOutcomes(results: CalcWindowResult[]): void {
  let nt = 0, nf = 0, nq = 0;
  for (const r of results) {
    if (!r.ok || r.kind !== 'evaluate') continue;
    const o = r.outcome;
    nf += o.offsets.length;
    if (o.batch) { nt += o.batch.times.length; nq += o.batch.quality.length; if (o.batch.values instanceof Float64Array) nf += o.batch.values.length; }
    const tr = o.trace;
    if (tr) { nt += tr.inputTs.length; nf += tr.values.length + tr.reasons.length + tr.inputValues.length + tr.inputQuality.length; }
  }
  const times = new BigInt64Array(nt), f64 = new Float64Array(nf), quality = new Uint32Array(nq);
  let at = 0, af = 0, aq = 0;
  const f64View = (a: Float64Array): Float64Array => { const v = f64.subarray(af, af + a.length); v.set(a); af += a.length; return v; };
  const timesView = (a: BigInt64Array | readonly bigint[]): BigInt64Array => { const v = times.subarray(at, at + a.length); v.set(a); at += a.length; return v; };
  for (const r of results) {
    if (!r.ok || r.kind !== 'evaluate') continue;
    const o = r.outcome;
    o.offsets = f64View(o.offsets);
    const tr = o.trace;
    if (tr) {
      tr.values = f64View(tr.values); tr.reasons = f64View(tr.reasons);
      tr.inputTs = timesView(tr.inputTs); tr.inputValues = f64View(tr.inputValues); tr.inputQuality = f64View(tr.inputQuality);
    }
    const b = o.batch;
    if (!b) continue;
    b.times = timesView(b.times);
    const qv = quality.subarray(aq, aq + b.quality.length); qv.set(b.quality); aq += b.quality.length; b.quality = qv;
    if (b.values instanceof Float64Array) b.values = f64View(b.values);
  }
}

function failure(e: unknown): CalcWindowResult {
  const err = isServiceError(e) ? e : new ServiceError('internal', `calculation window: ${(e as Error)?.message ?? String(e)}`);
  return { ok: false, error: err.toWire() };
}

/**
 * The columnar windows, one Target and reference map reused for all (evaluateWindow keeps
 * neither: what it returns holds copies).
 */
function evaluateLive(view: ReadView, compiled: CompiledRule[], live: EvaluateWindows): CalcWindowResult[] {
  const ids = live.ids.split('\n');
  const byRef = new Map<string, string | null>();
  const t: Target = { rule: compiled[0], assetId: '', seriesByRef: byRef, outputSeries: '', outputType: 'float64' };
  const results = new Array<CalcWindowResult>(live.count);
  let at = 0;
  for (let i = 0; i < live.count; i++) {
    const rule = compiled[live.plan[i]], refs = rule.inputRefs;
    t.rule = rule;
    t.outputSeries = ids[at++];
    t.outputType = OUTPUT_TYPES[live.outputType[i]];
    byRef.clear();
    for (let r = 0; r < refs.length; r++) { const id = ids[at++]; byRef.set(refs[r], id === '' ? null : id); }
    try {
      const f = live.flags[i];
      results[i] = { ok: true, kind: 'evaluate', outcome: evaluateWindow(view, t, live.fromNs[i], live.toNs[i], { trace: (f & 1) !== 0, triggerName: 'event', ignoreBlock: (f & 2) !== 0, scratch }) };
    } catch (e) {
      results[i] = failure(e);
    }
  }
  if (at !== ids.length) throw new Error(`BUG: a task's ids hold ${ids.length} series, its windows read ${at}`);
  return results;
}

export function calcWindowsTask(task: CalcWindowsTask): CalcWindowResult[] {
  const compiled = task.plans.map(ruleOf);
  const live = task.live;
  if (live !== undefined) {
    const results = withLatestView((view) => evaluateLive(view, compiled, live));
    packOutcomes(results);
    return results;
  }
  const results = withLatestView((view) => task.windows.map((w): CalcWindowResult => {
    try {
      const t: Target = { rule: compiled[w.plan], assetId: w.assetId, seriesByRef: new Map(w.seriesByRef), outputSeries: w.outputSeries, outputType: w.outputType };
      if (w.kind === 'diff') {
        const diff = diffWindow(view, t, w.fromNs, w.toNs, w.mode, w.sampleRoom, scratch);
        if (!w.keepBatch) diff.batch = null;
        return { ok: true, kind: 'diff', diff };
      }
      return { ok: true, kind: 'evaluate', outcome: evaluateWindow(view, t, w.fromNs, w.toNs, { trace: w.trace, triggerName: w.triggerName, ignoreBlock: w.ignoreBlock, scratch }) };
    } catch (e) {
      return failure(e);
    }
  }));
  packOutcomes(results);
  return results;
}
