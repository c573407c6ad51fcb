// The calculation expression language: lexer → parser → checker (types, units, references)
// → compiler to a plan over typed arrays. Callers (calc rules, episode triggers) use only
// what this file exports; /tmp/briefs/calc-api.md and README "Expression language" describe it.
export * from './types.js';
export type { ExprNode, TextPosition } from './ast.js';
export { parseExpression } from './parser.js';
export { printExpression } from './print.js';
export { unionGrid, periodicGrid, GridScratch, MAX_GRID_SPAN_NS } from '../../calc-kernel/grid.js';
export { PlanEvaluator } from '../../calc-kernel/plan-evaluator.js';
export { findRuleCycle, cycleError } from './rule-cycle.js';
export { checkExpression } from './checker.js';
export { compileExpression, planOf } from './compiler.js';
export { FUNCTION_SIGNATURES, TIME_SINCE_DEFAULT_LOOKBACK_NS } from './functions.js';
