// What the executable part of a calculation is made of, as plain data that crosses to a
// read-pool worker by structured clone: an expression's plan (its checked tree, inputs and
// history needs) and the grids and results of evaluating it. Parsing, checking and compiling
// stay in src/calc; this folder sits below src/workers so a worker can run a plan.
import type { PointColumns, ValueType } from '../storage/encoding/chunk-types.js';
import type { PlanNode } from './plan-tree.js';

export type { PointColumns };

/** The value types of stored series, as the model's attributes name them. */
export type InputValueType = 'float64' | 'int64' | 'bool' | 'string' | 'enum';

/** What an expression evaluates to. Strings and enums are compared, never produced. */
export type ResultType = 'number' | 'bool';

/** One input of a plan: the caller's key for it and its value type (slot = position). */
export interface PlanInput { key: string; valueType: InputValueType }

/** An expression's executable part: the checked tree and what evaluating it needs (plain data). */
export interface ExpressionPlan {
  text: string;
  tree: PlanNode;
  inputs: readonly PlanInput[];
  resultType: ResultType;
  lookbackNs: bigint;
  lookbackPoints: number;
}

/** The column type an input of this value type reads as when it has no series. */
export function columnTypeOf(v: InputValueType): ValueType {
  return v === 'bool' ? 'boolean' : v === 'enum' ? 'enum' : v === 'string' ? 'string' : v === 'int64' ? 'int64' : 'float64';
}

/**
 * Step-hold indices a union grid was built with: for each of `columns` (matched by identity),
 * index[k][i] is the position of its last point at or before instant i (−1: none yet).
 */
export interface GridSteps {
  columns: readonly PointColumns[];
  index: Int32Array[];
}

/** Instants at which an expression is evaluated: exact ns offsets from a base, ascending. */
export interface EvaluationGrid {
  tsBase: bigint;
  /** Exact integer ns offsets from tsBase, strictly increasing, spanning under 2^53 ns. */
  tsOffset: Float64Array;
  count: number;
  /** A union grid's step-hold indices: alignment gathers through them instead of searching. */
  steps?: GridSteps | null;
}

/** Why an evaluated instant has no value (reason codes of EvaluationResult.reason). */
export const EVALUATION_REASONS = [
  'none',
  'no-input-value',
  'division-by-zero',
  'domain-error',
  'non-finite',
  'condition-false',
  'lookback-exceeded',
] as const;
export type EvaluationReason = (typeof EVALUATION_REASONS)[number];

/** One value per grid instant. values are never NaN or ±Infinity: an undefined result is 0 with quality 0 and a reason. */
export interface EvaluationResult {
  count: number;
  /** Numbers, or 0/1 for a bool result. */
  values: Float64Array;
  /** OPC style: the worst (lowest) quality of the input points that contributed; 0 when undefined. */
  quality: Uint32Array;
  /** An index into EVALUATION_REASONS; 0 when the value is defined. */
  reason: Uint8Array;
}

/** A plan made runnable on this thread (its program and scratch built once, reused). */
export interface PlanEvaluation {
  readonly plan: ExpressionPlan;
  readonly inputs: readonly PlanInput[];
  readonly resultType: ResultType;
  readonly lookbackNs: bigint;
  readonly lookbackPoints: number;
  /** Evaluates at every grid instant; columns[i] holds input i's points (plan.inputs order). Fresh arrays. */
  evaluate(columns: readonly PointColumns[], grid: EvaluationGrid): EvaluationResult;
  /** The same into caller-owned arrays of at least grid.count; returns out. */
  evaluateInto(columns: readonly PointColumns[], grid: EvaluationGrid, out: EvaluationResult): EvaluationResult;
}
