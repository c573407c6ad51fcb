// The spec's Calculation rule as the engine understands it: the allowed values of tier,
// trigger kinds, unit_check and provisional (the spec shows one value of each; the rest
// are our choices, recorded in docs/decisions.md under Calculations), and the checks of
// a rule's fields that need no model lookups. Expression, reference and cycle checks need
// the model and live in rule-check.ts.
import { invalid } from '../../errors.js';

/**
 * `expression`: a formula over attributes evaluated at trigger instants. `rollup`: a
 * periodic aggregate: at each instant t of its periodic grid, `rollup` (below) of the
 * expression over the interval [t − interval, t] (the expression stepped at its inputs'
 * timestamps, as the language's functions over time take it).
 */
export const RULE_TIERS = ['expression', 'rollup'] as const;
/**
 * A rollup's aggregate, each the language's function over time of the same name with the
 * interval as window: `avg` time-weighted (each value weighted by how long it held), `min`
 * and `max` of the values in force during the interval, `integral` the time integral in
 * value·seconds (a total: a flow in m³/s gives m³).
 */
export const ROLLUP_FUNCTIONS = ['avg', 'min', 'max', 'integral'] as const;
/** `event`: on input commits (debounced); `periodic`: on an aligned grid; `edge`: when a condition changes truth. */
export const TRIGGER_KINDS = ['event', 'periodic', 'edge'] as const;
/** Which truth changes an edge trigger fires on. */
export const EDGE_KINDS = ['rising', 'falling', 'both'] as const;
/** As the expression checker defines them: strict refuses mixed quantity kinds; convert converts units of one kind; off checks nothing. */
export const UNIT_CHECKS = ['strict', 'convert', 'off'] as const;
/**
 * `emit`: outputs whose inputs are still open to late data (after an input's finalised
 * watermark) are written at once and listed as provisional; `block`: they are held back
 * until every input is final there.
 */
export const PROVISIONAL_MODES = ['emit', 'block'] as const;
export const RECOMPUTE_MODES = ['history', 'from-now'] as const;

/** Shortest periodic interval and longest debounce accepted (a guard against a rule that floods storage). */
export const MIN_INTERVAL_NS = 100_000_000n;
export const MAX_DEBOUNCE_MS = 3_600_000;

export type RuleScope =
  | { template_id: string; output_attr_def_id: string }
  | { asset_id: string; output_attribute_id: string };

export type RuleTrigger =
  | { kind: 'event'; debounce_ms?: number | bigint | null }
  | { kind: 'periodic'; interval_ns: number | bigint; align: unknown }
  | { kind: 'edge'; edge: string; expr: string };

export interface RuleDefinition {
  name: string;
  scope: RuleScope;
  tier: string;
  trigger: RuleTrigger;
  unit_check: string;
  provisional: string;
  expression?: string | null;
  when?: string | null;
  /** tier rollup: the aggregate over each interval (ROLLUP_FUNCTIONS). */
  rollup?: string | null;
  declared_inferred?: boolean;
  reason?: string;
}

export interface StoredRule extends RuleDefinition {
  rule_id: string;
  version: number;
  retired: boolean;
  tx_id: bigint;
  valid_from_ns: bigint;
}

/** The trigger in the engine's terms, after the checks. */
export type EngineTrigger =
  | { kind: 'event'; debounceMs: number }
  | { kind: 'periodic'; intervalNs: bigint; alignNs: bigint }
  | { kind: 'edge'; edge: 'rising' | 'falling' | 'both'; expr: string };

export function isTemplateScope(s: RuleScope): s is { template_id: string; output_attr_def_id: string } {
  return 'template_id' in s;
}

function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw invalid(field, `"${value}" is not one of ${allowed.join(', ')}`);
  return value as T;
}

/**
 * A periodic trigger's `align`: null, absent or "epoch" put instants on multiples of the
 * interval since the Unix epoch; an integer shifts them by that many ns (0 <= align <
 * interval), e.g. interval 1 h and align 15 min gives hh:15.
 */
function alignOf(align: unknown, intervalNs: bigint): bigint {
  if (align === null || align === undefined || align === 'epoch') return 0n;
  if ((typeof align === 'number' && Number.isInteger(align)) || typeof align === 'bigint') {
    const a = BigInt(align);
    if (a < 0n || a >= intervalNs) throw invalid('trigger.align', `must be at least 0 and less than interval_ns (${intervalNs})`);
    return a;
  }
  throw invalid('trigger.align', 'must be null, "epoch" or an integer offset in ns from the epoch grid');
}

/** Checks the fields of a rule that need no model; returns the trigger in engine terms. */
export function checkRuleFields(d: RuleDefinition): EngineTrigger {
  const tier = oneOf('tier', d.tier, RULE_TIERS);
  if (tier === 'rollup') {
    if (d.trigger.kind !== 'periodic') throw invalid('trigger.kind', 'a rollup runs on a periodic trigger (its interval is the rollup interval)');
    if (typeof d.rollup !== 'string') throw invalid('rollup', `a rollup needs its aggregate, one of ${ROLLUP_FUNCTIONS.join(', ')}`);
    oneOf('rollup', d.rollup, ROLLUP_FUNCTIONS);
  } else if (d.rollup !== undefined && d.rollup !== null) throw invalid('rollup', 'only tier rollup takes an aggregate');
  oneOf('unit_check', d.unit_check, UNIT_CHECKS);
  oneOf('provisional', d.provisional, PROVISIONAL_MODES);
  if (typeof d.expression !== 'string' || d.expression.trim() === '') throw invalid('expression', 'an expression rule needs a non-empty expression');
  if (d.when !== undefined && d.when !== null && d.when.trim() === '') throw invalid('when', 'must be a condition or null');
  const t = d.trigger;
  switch (t.kind) {
    case 'event': {
      const ms = t.debounce_ms === undefined || t.debounce_ms === null ? 0 : Number(t.debounce_ms);
      if (!Number.isInteger(ms) || ms < 0 || ms > MAX_DEBOUNCE_MS) throw invalid('trigger.debounce_ms', `must be 0..${MAX_DEBOUNCE_MS} ms or null`);
      return { kind: 'event', debounceMs: ms };
    }
    case 'periodic': {
      const interval = BigInt(t.interval_ns);
      if (interval < MIN_INTERVAL_NS) throw invalid('trigger.interval_ns', `must be at least ${MIN_INTERVAL_NS} ns (100 ms)`);
      return { kind: 'periodic', intervalNs: interval, alignNs: alignOf(t.align, interval) };
    }
    case 'edge': {
      const edge = oneOf('trigger.edge', t.edge, EDGE_KINDS);
      if (t.expr.trim() === '') throw invalid('trigger.expr', 'an edge trigger needs a condition');
      return { kind: 'edge', edge, expr: t.expr };
    }
    default:
      throw invalid('trigger.kind', `"${(t as { kind: string }).kind}" is not one of ${TRIGGER_KINDS.join(', ')}`);
  }
}

export function engineTriggerOf(d: RuleDefinition): EngineTrigger {
  return checkRuleFields(d);
}

/**
 * The expression the engine evaluates: the rule's own, or for a rollup its aggregate over
 * the interval, written in the language (`max((X * 2), 60000ms)`), so it is checked and
 * compiled like any other and backfills and late data handle rollups unchanged.
 */
export function evaluatedExpression(d: RuleDefinition, trigger: EngineTrigger): string {
  const text = d.expression as string;
  if (d.tier !== 'rollup' || trigger.kind !== 'periodic') return text;
  return `${d.rollup}((${text}), ${Number(trigger.intervalNs) / 1e6}ms)`;
}
