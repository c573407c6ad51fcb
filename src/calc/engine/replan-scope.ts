// Which rules a model commit makes the engine plan again. Planning a template rule over
// 10,000 assets takes seconds, so a commit re-plans only the rules it can change:
//
// - a rule's own versions (calc-rule events): that rule;
// - a binding or attribute of asset X: the rules that run on X or report a problem for X,
//   and every rule reading a path reference (parent, sibling: X may be what it reaches);
// - anything else (an asset created, moved or retired; a template changed): every rule, as
//   the set of assets a template rule covers may have changed.
// Other kinds of events change no plan.
import type { ModelEvent } from '../../model/tx-log.js';
import { isPathReference } from '../rules/reference-path.js';
import type { RulePlan } from './rule-plan.js';

export type ReplanScope = 'all' | Set<string>;

/** Asset ids a plan depends on directly: the assets it runs on and those it could not. */
export function assetsOfPlan(plan: RulePlan): Set<string> {
  const out = new Set<string>(plan.problems.keys());
  for (const t of plan.targets) out.add(t.assetId);
  return out;
}

/** The rules to plan again after `events`, given the current plans (and their assets, by rule). */
export function replanScope(events: readonly ModelEvent[], plans: ReadonlyMap<string, RulePlan>, assetsByRule: ReadonlyMap<string, Set<string>>): ReplanScope {
  const rules = new Set<string>();
  for (const e of events) {
    switch (e.entity_kind) {
      case 'calc-rule': rules.add(e.entity_id); break;
      case 'binding':
      case 'attribute': {
        const asset = typeof e.details.asset_id === 'string' ? e.details.asset_id : null;
        if (asset === null) return 'all';
        for (const [id, plan] of plans) {
          if (assetsByRule.get(id)?.has(asset) || plan.compiled.inputRefs.some(isPathReference)) rules.add(id);
        }
        break;
      }
      case 'asset':
      case 'template': return 'all';
      default: break; // other kinds (a series' own record, ...) do not change a plan
    }
  }
  return rules;
}

/** Two scopes as one. */
export function mergeScopes(a: ReplanScope | null, b: ReplanScope): ReplanScope {
  if (a === null) return b;
  if (a === 'all' || b === 'all') return 'all';
  for (const id of b) a.add(id);
  return a;
}
