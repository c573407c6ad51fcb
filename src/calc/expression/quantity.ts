// Quantity kinds through an expression. The rules are deliberately small:
// - a bare number (no unit) takes the kind of whatever it meets ("Pressure > 5");
// - + - comparisons min max clamp and if-branches need one kind: the right operand is
//   converted exactly to the left's unit; different kinds are refused under `strict`;
// - × and ÷ by a dimensionless value keep the kind; a ratio of one kind is dimensionless;
//   any other product or quotient (and sqrt, ^, rate, integral, time_since) has a derived
//   kind that is not checked further ("unchecked" rather than a half-done dimension algebra).
import { ServiceError } from '../../errors.js';
import type { ExprNode } from './ast.js';
import { positionOf } from './ast.js';
import type { PlanNode } from '../../calc-kernel/plan-tree.js';
import type { QuantityKindRef, UnitCheck, UnitDescriptor } from './types.js';

export interface Quantity {
  kind: QuantityKindRef | null;
  unit: UnitDescriptor | null;
  /** A product, power or rate whose kind is not tracked: never refused, never converted. */
  derived: boolean;
  /** A bare number: adopts the other operand's kind. */
  bare: boolean;
}

export const DIMENSIONLESS: Quantity = { kind: null, unit: null, derived: false, bare: false };
export const BARE: Quantity = { kind: null, unit: null, derived: false, bare: true };
export const DERIVED: Quantity = { kind: null, unit: null, derived: true, bare: false };

export function kindName(q: Quantity): string {
  return q.derived ? 'derived (unchecked)' : q.kind ? q.kind.name : 'dimensionless';
}

/** The affine map taking a value in unit `from` to unit `to` (same kind): v·scale + shift. */
export function conversion(from: UnitDescriptor, to: UnitDescriptor): { scale: number; shift: number } | null {
  if (from.id === to.id || (from.factor === to.factor && from.offset === to.offset)) return null;
  return { scale: from.factor / to.factor, shift: (from.offset - to.offset) / to.factor };
}

export function convertPlan(plan: PlanNode, from: UnitDescriptor | null, to: UnitDescriptor | null): PlanNode {
  if (!from || !to) return plan;
  const c = conversion(from, to);
  if (!c) return plan;
  if (plan.op === 'const') return { op: 'const', value: plan.value * c.scale + c.shift };
  return { op: 'affine', arg: plan, scale: c.scale, shift: c.shift };
}

export function unitMismatch(text: string, field: string, at: ExprNode, left: { node: ExprNode; q: Quantity } | { text: string; q: Quantity },
  right: { node: ExprNode; q: Quantity } | { text: string; q: Quantity }, what: string): ServiceError {
  const side = (s: { node: ExprNode; q: Quantity } | { text: string; q: Quantity }) => ({
    text: 'node' in s ? text.slice(s.node.start, s.node.end) : s.text,
    quantity_kind: kindName(s.q),
  });
  const l = side(left);
  const r = side(right);
  const position = positionOf(text, at.start);
  return new ServiceError('unit-mismatch',
    `${field}: ${what} ${l.text} (${l.quantity_kind}) and ${r.text} (${r.quantity_kind}) at line ${position.line}, column ${position.column}`,
    { field, left: l, right: r, position });
}

/**
 * One kind for both operands (+ - comparisons min max clamp, if-branches): the result's
 * quantity and the right operand's plan converted to the left's unit.
 */
export function sameKind(mode: UnitCheck, text: string, field: string, at: ExprNode, what: string,
  left: { node: ExprNode; q: Quantity; plan: PlanNode }, right: { node: ExprNode; q: Quantity; plan: PlanNode }):
  { q: Quantity; left: PlanNode; right: PlanNode } {
  const a = left.q;
  const b = right.q;
  if (mode === 'off') return { q: a.bare ? b : a, left: left.plan, right: right.plan };
  if (a.derived || b.derived) return { q: DERIVED, left: left.plan, right: right.plan };
  if (b.bare) return { q: a, left: left.plan, right: right.plan };
  if (a.bare) return { q: b, left: left.plan, right: right.plan };
  if (a.kind === null && b.kind === null) return { q: DIMENSIONLESS, left: left.plan, right: right.plan };
  if (a.kind !== null && b.kind !== null && a.kind.id === b.kind.id) {
    return { q: a.unit ? a : b, left: left.plan, right: convertPlan(right.plan, b.unit, a.unit) };
  }
  if (mode === 'strict') throw unitMismatch(text, field, at, left, right, what);
  return { q: DERIVED, left: left.plan, right: right.plan };
}

/** × and ÷: dimensionless factors keep the kind, a same-kind ratio is dimensionless, the rest is derived. */
export function productKind(mode: UnitCheck, divide: boolean, left: { q: Quantity; plan: PlanNode }, right: { q: Quantity; plan: PlanNode }):
  { q: Quantity; left: PlanNode; right: PlanNode } {
  const a = left.q;
  const b = right.q;
  const plain = (q: Quantity) => q.kind === null && !q.derived;
  if (mode === 'off') return { q: plain(a) ? b : plain(b) ? a : DERIVED, left: left.plan, right: right.plan };
  if (plain(b)) return { q: { ...a, bare: a.bare && b.bare }, left: left.plan, right: right.plan };
  if (plain(a) && !divide) return { q: { ...b, bare: false }, left: left.plan, right: right.plan };
  if (divide && a.kind && b.kind && a.kind.id === b.kind.id && !a.derived && !b.derived) {
    return { q: DIMENSIONLESS, left: left.plan, right: convertPlan(right.plan, b.unit, a.unit) };
  }
  return { q: DERIVED, left: left.plan, right: right.plan };
}
