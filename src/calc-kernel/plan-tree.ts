// The checked tree: what the checker hands the compiler. Types and units are settled
// here (unit conversions are explicit `affine` nodes, enum members are ordinals, min/max
// chains are pairs), so the compiler only lowers it to instructions.

export type UnaryFn = 'neg' | 'not' | 'abs' | 'sqrt' | 'exp' | 'ln' | 'log10' | 'round' | 'floor' | 'ceil' | 'sin' | 'cos' | 'tan';
export type BinaryFn = 'add' | 'sub' | 'mul' | 'div' | 'mod' | 'pow' | 'lt' | 'le' | 'gt' | 'ge' | 'eq' | 'ne' | 'min' | 'max' | 'round';
export type TimeFn = 'prev' | 'delta' | 'rate' | 'integral' | 'avg' | 'min' | 'max' | 'time_since';

export type PlanNode =
  | { op: 'const'; value: number }
  /** A numeric input (float64, int64, bool 0/1, enum ordinal) at its slot, stepped alignment. */
  | { op: 'input'; slot: number }
  /** A string input compared with a constant string, or two string inputs compared. */
  | { op: 'str-eq'; slot: number; other: { slot: number } | { literal: string }; negate: boolean }
  | { op: 'affine'; arg: PlanNode; scale: number; shift: number }
  | { op: 'unary'; fn: UnaryFn; arg: PlanNode }
  | { op: 'binary'; fn: BinaryFn; left: PlanNode; right: PlanNode }
  | { op: 'and' | 'or'; left: PlanNode; right: PlanNode }
  | { op: 'if'; cond: PlanNode; then: PlanNode; else: PlanNode }
  /** A function over time of arg (evaluated as a stepped series on its inputs' own timestamps). */
  | { op: 'time'; fn: TimeFn; arg: PlanNode; windowNs: number };

/** The slots a node reads, ascending. */
export function slotsOf(node: PlanNode, into = new Set<number>()): Set<number> {
  switch (node.op) {
    case 'const': break;
    case 'input': into.add(node.slot); break;
    case 'str-eq':
      into.add(node.slot);
      if ('slot' in node.other) into.add(node.other.slot);
      break;
    case 'affine': case 'unary': case 'time': slotsOf(node.arg, into); break;
    case 'binary': case 'and': case 'or': slotsOf(node.left, into); slotsOf(node.right, into); break;
    case 'if': slotsOf(node.cond, into); slotsOf(node.then, into); slotsOf(node.else, into); break;
  }
  return into;
}
