// The expression language's public types: what the checker needs from the model (an
// ExpressionScope, answered by calc-rules or episodes from the database) and what the
// checker and the compiler hand back. The language never reaches the database itself, so
// it can be checked and evaluated in a worker, a test or a benchmark alike.
import type { InputValueType, PlanEvaluation, ResultType } from '../../calc-kernel/evaluation.js';

export type { PointColumns, InputValueType, ResultType, GridSteps, EvaluationGrid, EvaluationReason, EvaluationResult, ExpressionPlan, PlanEvaluation } from '../../calc-kernel/evaluation.js';
export { EVALUATION_REASONS } from '../../calc-kernel/evaluation.js';

/** A quantity kind as the registries name it. */
export interface QuantityKindRef { id: string; name: string }

/**
 * A unit as the registries define it: canonical = value·factor + offset, canonical being
 * the quantity kind's canonical unit (the registry's to_canonical_factor / _offset).
 */
export interface UnitDescriptor {
  id: string;
  symbol: string;
  quantityKind: QuantityKindRef;
  factor: number;
  offset: number;
}


/** One attribute an expression reads (or the attribute a rule writes). */
export interface InputDescriptor {
  /** The caller's key for it (an attribute id, say); rules and the cycle helper compare keys. */
  key: string;
  valueType: InputValueType;
  quantityKind: QuantityKindRef | null;
  unitId: string | null;
  /** The descriptor of unitId, so values can be converted exactly; null when unitless. */
  unit: UnitDescriptor | null;
  /** The enum set (its id or name, whatever enumMember understands) for enum attributes. */
  enumSet: string | null;
}

export interface ExpressionScope {
  /** A reference as written (name or relative path) → the input it means, or null when unknown. */
  reference(text: string): InputDescriptor | null;
  /** A unit symbol for constants (`bar`) → unit id, quantity kind and exact conversion to the kind's base unit. */
  unit(symbol: string): UnitDescriptor | null;
  /** An enum member name → ordinal in that enum set, or null. */
  enumMember(enumSet: string, member: string): number | null;
}

/**
 * How units are checked (a rule's `unit_check`):
 * - `strict`: adding, subtracting, comparing, min/max/clamp across different quantity kinds is
 *   refused (unit-mismatch), and so is a result whose kind differs from the output's; values
 *   of the same kind in different units are converted exactly, and the result is converted
 *   to the output's unit.
 * - `convert`: the same conversions, no refusals (different kinds combine as plain numbers).
 * - `off`: values are taken as stored, constants' units are ignored; nothing is converted.
 */
export type UnitCheck = 'strict' | 'convert' | 'off';
export const UNIT_CHECK_VALUES: readonly UnitCheck[] = ['strict', 'convert', 'off'];


export interface CheckOptions {
  unitCheck: UnitCheck;
  /** The field the expression came from, named in every error (default 'expression'). */
  field?: string;
  /** The attribute the result is written to: its type and quantity kind are checked. */
  output?: InputDescriptor | null;
  /** Require this result type (a `when`, an edge trigger or an episode's open_when: 'bool'). */
  expect?: ResultType;
}

/** A checked expression: its inputs (the compiled plan's slots, in this order) and needs. */
export interface CheckedExpression {
  readonly text: string;
  readonly unitCheck: UnitCheck;
  readonly resultType: ResultType;
  /** The result's quantity kind; null when dimensionless, bool or of a derived (unchecked) kind. */
  readonly quantityKind: QuantityKindRef | null;
  /** Distinct inputs in order of first appearance; evaluation takes one PointColumns per input, in this order. */
  readonly inputs: readonly InputDescriptor[];
  /** How much history before the first evaluation instant the windows need (ns). */
  readonly lookbackNs: bigint;
  /**
   * How many points of each input before (first instant − lookbackNs) to hand in as well:
   * 1 for the value in force (stepped alignment), more for prev/delta/rate.
   */
  readonly lookbackPoints: number;
  /** The checked tree; the compiler's input. */
  readonly tree: unknown;
}

/** A checked expression compiled for this thread; its plan (plain data) can be evaluated in a worker as well. */
export interface CompiledExpression extends PlanEvaluation {
  readonly checked: CheckedExpression;
  readonly inputs: readonly InputDescriptor[];
}

/** A rule as the cycle helper sees it: it writes outputKey and reads inputKeys. */
export interface RuleEdges { ruleId: string; outputKey: string; inputKeys: readonly string[] }
/** One step of a cycle: rule ruleId reads inputKey, which the next step's rule writes (the last step's is the first's). */
export interface CycleStep { ruleId: string; outputKey: string; inputKey: string }
