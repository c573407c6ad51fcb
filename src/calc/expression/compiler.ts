// Compiles a checked expression once per rule version: its plan (the checked tree, inputs
// and history needs, plain data) and an evaluator for this thread. The executable part
// lives in src/calc-kernel, below the read pool, so a worker builds the same evaluator from
// the same plan; nothing here ever evaluates user text with eval.
import { PlanEvaluator } from '../../calc-kernel/plan-evaluator.js';
import type { ExpressionPlan } from '../../calc-kernel/evaluation.js';
import type { PlanNode } from '../../calc-kernel/plan-tree.js';
import type { CheckedExpression, CompiledExpression, InputDescriptor } from './types.js';

/** The plan of a checked expression, as it crosses to a worker. */
export function planOf(checked: CheckedExpression): ExpressionPlan {
  return {
    text: checked.text, tree: checked.tree as PlanNode, inputs: checked.inputs.map((i) => ({ key: i.key, valueType: i.valueType })),
    resultType: checked.resultType, lookbackNs: checked.lookbackNs, lookbackPoints: checked.lookbackPoints,
  };
}

class Compiled extends PlanEvaluator implements CompiledExpression {
  declare readonly inputs: readonly InputDescriptor[];
  constructor(readonly checked: CheckedExpression) {
    super(planOf(checked));
    this.inputs = checked.inputs;
  }
}

/** Compiles a checked expression once (per rule version); the result is reusable and evaluates on this thread. */
export function compileExpression(checked: CheckedExpression): CompiledExpression {
  return new Compiled(checked);
}
