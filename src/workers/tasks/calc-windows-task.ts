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
import { compiledRuleOf, evaluateWindow, type CompiledRule, type RulePlanData, type Target, type WindowOutcome } from '../../calc-kernel/window-eval.js';
import { diffWindow, type WindowDiff } from '../../calc-kernel/window-diff.js';
import { withLatestView } from '../worker-state.js';

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

export interface CalcWindowsTask {
  plans: RulePlanData[];
  windows: CalcWindowRequest[];
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

export function calcWindowsTask(task: CalcWindowsTask): CalcWindowResult[] {
  const compiled = task.plans.map(ruleOf);
  return withLatestView((view) => task.windows.map((w): CalcWindowResult => {
    try {
      const t: Target = { rule: compiled[w.plan], assetId: w.assetId, seriesByRef: new Map(w.seriesByRef), outputSeries: w.outputSeries, outputType: w.outputType };
      if (w.kind === 'diff') {
        const diff = diffWindow(view, t, w.fromNs, w.toNs, w.mode, w.sampleRoom, scratch);
        if (!w.keepBatch) diff.batch = null;
        return { ok: true, kind: 'diff', diff };
      }
      return { ok: true, kind: 'evaluate', outcome: evaluateWindow(view, t, w.fromNs, w.toNs, { trace: w.trace, triggerName: w.triggerName, ignoreBlock: w.ignoreBlock, scratch }) };
    } catch (e) {
      const err = isServiceError(e) ? e : new ServiceError('internal', `calculation window: ${(e as Error)?.message ?? String(e)}`);
      return { ok: false, error: err.toWire() };
    }
  }));
}
