// Re-planning: the plans of the rules a model commit can change are made beside the pump
// (which keeps evaluating with the plans they replace), then swapped in at once. Planning a
// 10,000-asset template rule takes seconds; batches waiting behind it held every output back.
// What the old plan evaluated meanwhile is evaluated again with the new one when a target's
// inputs or version changed (the swap-in says which windows; the engine marks them).
import type { ServiceContext } from '../../service-context.js';
import { pointAtOrAfter, seriesKey, readMeta, INT64_MIN } from '../../storage/series-store.js';
import { nowNs } from '../../clock.js';
import { rulesWithInputs } from '../rules/rule-store.js';
import { planRule, type RulePlan } from './rule-plan.js';
import type { Target } from './pool-windows.js';
import { newCursor } from './progress-store.js';
import type { ReplanScope } from './replan-scope.js';
import type { TargetState } from './target-state.js';

/** The plans made for one reload, before they are swapped in. */
export interface NewPlans {
  /** Every current rule's plan: the re-planned ones new, the others carried over. */
  readonly plans: Map<string, RulePlan>;
  readonly replanned: ReadonlySet<string>;
  /** Where each re-planned target stood when planning began. */
  readonly before: ReadonlyMap<string, bigint>;
  /** Versions saved with recompute=history (`rule@version`). */
  readonly history: ReadonlySet<string>;
}

/** A window the engine marks dirty (no delay) once the plans are in. */
export interface SwapMark { readonly state: TargetState; readonly from: bigint; readonly to: bigint }

export interface Swap {
  /** The targets reading each input series. */
  readonly bySeries: Map<string, TargetState[]>;
  readonly marks: SwapMark[];
  /** Targets no plan covers any more (already removed from the states). */
  readonly dropped: TargetState[];
}

/**
 * Plans the rules in scope; the others keep their current plan. `states` is read once the
 * rules are loaded, so `before` is where each target stood when planning began.
 */
export async function makePlans(service: ServiceContext, scope: ReplanScope, current: ReadonlyMap<string, RulePlan>, states: ReadonlyMap<string, TargetState>): Promise<NewPlans> {
  const rules = await rulesWithInputs(service.db);
  const plans = new Map<string, RulePlan>();
  const replanned = new Set<string>();
  // Versions saved with recompute=history: evaluated again from the inputs' start (the PUT
  // reset their progress, but a batch of the old plan may have recorded progress since).
  const history = new Set(rules.filter((r) => r.recompute === 'history').map((r) => `${r.rule.rule_id}@${r.rule.version}`));
  for (const { rule } of rules) {
    const old = current.get(rule.rule_id);
    if (scope !== 'all' && !scope.has(rule.rule_id) && old && old.rule.version === rule.version) { plans.set(rule.rule_id, old); continue; }
    replanned.add(rule.rule_id);
  }
  // Where each re-planned target stood when planning began: what the old plan evaluates
  // meanwhile is evaluated again with the new one if its inputs or version changed.
  const before = new Map<string, bigint>();
  for (const s of states.values()) if (replanned.has(s.target.rule.ruleId)) before.set(s.key, s.through);
  for (const { rule } of rules) {
    if (!replanned.has(rule.rule_id)) continue;
    try {
      plans.set(rule.rule_id, await planRule(service, rule));
    } catch (e) {
      service.log.child({ area: 'calc' }).warn({ err: e, rule_id: rule.rule_id }, 'calculation rule could not be planned');
    }
  }
  return { plans, replanned, before, history };
}

/**
 * Swaps the new plans' targets into `states` (synchronously: no batch sees half of them) with
 * the durable `progress` of each; returns the windows to evaluate and the targets dropped.
 */
export function swapIn(service: ServiceContext, states: Map<string, TargetState>, next: NewPlans, progress: ReadonlyMap<string, bigint>): Swap {
  const { plans, replanned, before, history } = next;
  const seen = new Set<string>();
  const bySeries = new Map<string, TargetState[]>();
  const marks: SwapMark[] = [];
  const now = nowNs();
  for (const plan of plans.values()) {
    const fresh = replanned.has(plan.rule.rule_id);
    for (const t of plan.targets) {
      const key = `${plan.rule.rule_id}/${t.assetId}`;
      seen.add(key);
      let s = states.get(key);
      const durable = progress.get(key);
      if (!s) {
        s = {
          key, target: t, through: durable ?? plan.rule.valid_from_ns - 1n, dirtyFrom: null, dirtyTo: 0n, dueMs: 0, wheelSlot: 0, dirtySinceMs: 0,
          inputDurableMs: 0, provisionalFromNs: null, lastError: null, lineage: newCursor(),
        };
        states.set(key, s);
      } else if (fresh) {
        const old = s.target;
        s.target = t;
        const versionChanged = old.rule.version !== t.rule.version;
        if (versionChanged && history.has(`${plan.rule.rule_id}@${plan.rule.version}`)) s.through = INT64_MIN; // a reset (recompute history)
        else if (versionChanged && durable !== undefined && durable < s.through) s.through = durable;
        const was = before.get(key);
        if (was !== undefined && was < s.through && (versionChanged || old.outputSeries !== t.outputSeries || !sameInputs(old, t))) {
          // Evaluated with the old plan while this one was made: again with this one (from the new version's start).
          const from = versionChanged && plan.rule.valid_from_ns > was + 1n ? plan.rule.valid_from_ns : was + 1n;
          if (from <= s.through) marks.push({ state: s, from, to: t.rule.trigger.kind === 'periodic' ? s.through + 1n : now + 1n });
        }
      }
      if (fresh) {
        if (s.through === INT64_MIN) s.through = earliestInput(service, t) - 1n;
        // Resume: whatever arrived after the durable progress (a restart, a new rule, a reset) is evaluated.
        if (t.rule.trigger.kind !== 'periodic' && s.through < now) marks.push({ state: s, from: s.through + 1n, to: now + 1n });
      }
      for (const series of new Set(s.target.seriesByRef.values())) {
        if (series === null) continue;
        const list = bySeries.get(series);
        if (list) list.push(s); else bySeries.set(series, [s]);
      }
    }
  }
  const dropped: TargetState[] = [];
  for (const [key, s] of [...states]) if (!seen.has(key)) { states.delete(key); dropped.push(s); }
  return { bySeries, marks, dropped };
}

/** The earliest point of the target's inputs (for a recompute of all history). */
function earliestInput(service: ServiceContext, t: Target): bigint {
  let min: bigint | null = null;
  service.parts.storage.read((view) => {
    for (const s of t.seriesByRef.values()) {
      if (s === null || !readMeta(view, s)) continue;
      const p = pointAtOrAfter(view, seriesKey(s), INT64_MIN + 1n);
      if (p && (min === null || p.ts < min)) min = p.ts;
    }
  });
  return min ?? nowNs();
}

/** Whether two targets of one asset read the same series for every reference. */
function sameInputs(a: Target, b: Target): boolean {
  if (a.seriesByRef.size !== b.seriesByRef.size) return false;
  for (const [ref, series] of a.seriesByRef) if (b.seriesByRef.get(ref) !== series) return false;
  return true;
}
