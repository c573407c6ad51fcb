// Shapes of the Calculations area: the spec's Calculation rule (stored with its version
// fields), the trace Evaluation, the Backfill view and Lineage, plus the bodies and
// queries the spec leaves unshown (decisions in docs/decisions.md, Calculations).
import { Type } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson } from '../../schemas/common.js';
import { EDGE_KINDS, PROVISIONAL_MODES, RECOMPUTE_MODES, ROLLUP_FUNCTIONS, RULE_TIERS, UNIT_CHECKS } from '../../../calc/rules/rule-definition.js';

const closed = { additionalProperties: false } as const;
const Expr = (description: string) => Type.String({ minLength: 1, maxLength: 8_000, description });
const literals = (values: readonly string[], description: string) => Type.String({ minLength: 1, maxLength: 64, description: `${description} One of: ${values.join(', ')}.` });

export const RuleScope = Type.Union([
  Type.Object({ template_id: Uuid(), output_attr_def_id: Uuid({ description: 'The template attribute definition the rule writes, on every asset of the template' }) }, closed),
  Type.Object({ asset_id: Uuid(), output_attribute_id: Uuid({ description: 'The attribute of the asset the rule writes' }) }, closed),
], { description: 'A template (one rule, every asset of it) or one asset' });

export const RuleTrigger = Type.Union([
  Type.Object({
    kind: Type.Literal('event'),
    debounce_ms: Type.Optional(Nullable(Int64({ minimum: 0, description: 'Quiet time after an input commit before evaluating (0 or null: at once)' }))),
  }, closed),
  Type.Object({
    kind: Type.Literal('periodic'),
    interval_ns: Int64({ minimum: 1, description: 'Grid step, at least 100 ms' }),
    align: AnyJson({ description: 'null or "epoch": instants on multiples of interval_ns since the epoch; an integer: that offset in ns (0 <= align < interval_ns)' }),
  }, closed),
  Type.Object({
    kind: Type.Literal('edge'),
    edge: literals(EDGE_KINDS, 'Which truth changes of expr fire.'),
    expr: Expr('A boolean expression; the rule evaluates where it changes truth'),
  }, closed),
]);

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  scope: RuleScope,
  tier: literals(RULE_TIERS, 'Evaluation tier: expression (the formula at each trigger instant) or rollup (an aggregate of the formula over each interval of a periodic trigger).'),
  trigger: RuleTrigger,
  unit_check: literals(UNIT_CHECKS, 'How quantity kinds are checked.'),
  provisional: literals(PROVISIONAL_MODES, 'Outputs whose inputs are still open to late data: emit them (listed as provisional) or block them until final.'),
  expression: Type.Optional(Nullable(Expr('The formula (see README, Expression language)'))),
  when: Type.Optional(Nullable(Expr('A condition; outputs are written only at instants where it is true'))),
  rollup: Type.Optional(Nullable(literals(ROLLUP_FUNCTIONS, 'tier rollup only: the aggregate over [t - interval_ns, t] at each periodic instant t; avg is time-weighted, integral is value·seconds.'))),
  declared_inferred: Type.Optional(Type.Boolean()),
  reason: Type.Optional(Type.String({ maxLength: 2000 })),
};

export const RuleBody = Type.Object(ruleFields, { ...closed, $id: 'CalculationRule' });

export const StoredRule = Type.Object({
  ...ruleFields,
  rule_id: Uuid(), version: Int64(), retired: Type.Boolean(), tx_id: Int64(), valid_from_ns: Int64(),
}, { ...closed, $id: 'StoredCalculationRule' });

export const RuleList = Type.Array(StoredRule);
export const RuleRef = Type.Object({ rule_id: Uuid(), version: Int64() }, closed);

export const IdParams = Type.Object({ id: Uuid() }, closed);
export const RuleIdParams = Type.Object({ rule_id: Uuid() }, closed);
export const JobIdParams = Type.Object({ job_id: Uuid() }, closed);

export const RuleListQuery = Type.Object({
  template_id: Type.Optional(Uuid()), asset_id: Type.Optional(Uuid()),
  as_of_ns: Type.Optional(Int64({ minimum: 0, description: 'Read the rules as they were at this instant' })),
}, closed);
export const RuleReadQuery = Type.Object({ as_of_ns: Type.Optional(Int64({ minimum: 0 })) }, closed);
export const RecomputeQuery = Type.Object({
  recompute: Type.Union(RECOMPUTE_MODES.map((m) => Type.Literal(m)), { description: 'history: recompute every output with the new version; from-now: the new version applies from now on' }),
}, closed);
export const RetireBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 2000 })) }, closed);

const Window = Type.Object({ start_ns: Int64(), end_ns: Int64() }, closed);

export const Evaluation = Type.Object({
  asset_id: Uuid(), output_series: Uuid(), window: Window, eval_instant_ns: Int64(), rule_version: Int64(),
  trigger: Type.String(), outcome: Type.String({ description: 'written, unchanged, held (provisional: block), skipped (when false), bad (undefined result), failed' }),
  value: AnyJson(), quality: Nullable(Int64()), reason: Nullable(Type.String()), provisional: Type.Boolean(),
  computed_at_ns: Int64(), inputs: AnyJson({ description: 'Per input reference: {series, ts_ns, value, quality} used at the instant' }),
}, closed);
export const TraceQuery = Type.Object({ asset_id: Uuid(), start_ns: Int64(), end_ns: Int64() }, closed);
export const TraceResponse = Type.Object({ evaluations: Type.Array(Evaluation) }, closed);

export const RuleStatusQuery = Type.Object({ asset_id: Type.Optional(Uuid()) }, closed);
export const RuleStatus = Type.Object({
  rule_id: Uuid(), version: Int64(), retired: Type.Boolean(),
  assets: Type.Array(Type.Object({
    asset_id: Uuid(), output_series: Nullable(Uuid()), last_evaluated_ns: Nullable(Int64()), lag_ms: Nullable(Type.Number()),
    backlog: Type.Integer({ minimum: 0, description: 'Windows waiting to be evaluated' }), evaluations: Int64(), errors: Int64(),
    last_error: Nullable(Type.String()), last_error_ns: Nullable(Int64()), provisional_from_ns: Nullable(Int64()),
  }, closed)),
}, closed);

export const LineageQuery = Type.Object({
  series: Type.Optional(Uuid({ description: 'The output series' })),
  attribute_id: Type.Optional(Uuid({ description: 'The output attribute (instead of series)' })),
  start_ns: Type.Optional(Int64()), end_ns: Type.Optional(Int64()),
}, closed);
export const Lineage = Type.Object({
  rule_id: Uuid(), rule_version_range: Type.Tuple([Int64(), Int64()]),
  windows: Type.Array(Type.Object({ start_ns: Int64(), end_ns: Int64(), evaluated_at_ns: Int64(), rule_version: Int64() }, closed)),
}, { ...closed, $id: 'Lineage' });
export const LineageResponse = Type.Array(Lineage);

export const BackfillBody = Type.Object({
  rule_id: Uuid(),
  assets: Type.Union([Type.Literal('all'), Type.Array(Uuid(), { minItems: 1, maxItems: 100_000 })], { description: '"all": every asset of the rule; or some of them' }),
  start_ns: Int64(), end_ns: Int64(),
  mode: Type.Union([Type.Literal('fill-gaps'), Type.Literal('recalculate')], { description: 'fill-gaps: write only instants with no output yet; recalculate: rewrite every instant (changed values superseded, with audit)' }),
  reason: Type.Optional(Type.String({ maxLength: 2000 })),
}, closed);
export const BackfillView = Type.Object({
  job_id: Uuid(), state: Type.String({ description: 'previewing, preview, committing, committed, cancelled, failed' }),
  progress: Type.Object({ windows_total: Int64(), windows_done: Int64(), points_written: Int64(), rate_limited_ms: Int64() }, closed),
  preview: Nullable(Type.Object({
    points_added: Int64(), points_changed: Int64(), points_unchanged: Int64(),
    sample: Type.Array(Type.Object({ asset_id: Uuid(), ts_ns: Int64(), old: AnyJson(), new: AnyJson() }, closed)),
  }, closed)),
  operation_id: Type.String(), rule_id: Uuid(), rule_version: Int64(), mode: Type.String(), error: Nullable(Type.String()),
}, { ...closed, $id: 'BackfillView' });
