// The checker: types (number, bool, string, enum), references, units and quantity kinds,
// function signatures and look-back. It turns a syntax tree into a plan tree the compiler
// lowers, or throws the 400 that names what is wrong and where.
import { ServiceError } from '../../errors.js';
import { positionOf, type ExprNode } from './ast.js';
import { callFunction } from './functions.js';
import { parseExpression } from './parser.js';
import type { BinaryFn, PlanNode } from '../../calc-kernel/plan-tree.js';
import { BARE, DIMENSIONLESS, convertPlan, productKind, sameKind, unitMismatch, type Quantity } from './quantity.js';
import type { CheckOptions, CheckedExpression, ExpressionScope, InputDescriptor, UnitDescriptor } from './types.js';

export type ValueKind = 'number' | 'bool' | 'string' | 'enum';

/** A checked subtree: its plan, type, quantity and what it needs of the inputs' history. */
export interface Typed {
  node: ExprNode;
  plan: PlanNode;
  type: ValueKind;
  q: Quantity;
  enumSet: string | null;
  /** A string literal's text (enum members are named by one). */
  literal: string | null;
  lookbackNs: number;
  lookbackPoints: number;
}

export class CheckContext {
  readonly inputs: InputDescriptor[] = [];
  private readonly slotByKey = new Map<string, number>();
  constructor(readonly text: string, readonly field: string, readonly scope: ExpressionScope, readonly mode: CheckOptions['unitCheck']) {}

  slotOf(input: InputDescriptor): number {
    let slot = this.slotByKey.get(input.key);
    if (slot === undefined) {
      slot = this.inputs.length;
      this.inputs.push(input);
      this.slotByKey.set(input.key, slot);
    }
    return slot;
  }

  textOf(node: ExprNode): string { return this.text.slice(node.start, node.end); }

  typeError(at: ExprNode, expected: string, found: string): ServiceError {
    const position = positionOf(this.text, at.start);
    return new ServiceError('type-mismatch',
      `${this.field}: expected ${expected}, found ${found} in ${JSON.stringify(this.textOf(at))} at line ${position.line}, column ${position.column}`,
      { field: this.field, expected, found, position });
  }

  unknown(at: ExprNode, reference: string, what: string): ServiceError {
    const position = positionOf(this.text, at.start);
    return new ServiceError('unknown-reference', `${this.field}: unknown ${what} ${JSON.stringify(reference)} at line ${position.line}, column ${position.column}`,
      { field: this.field, reference, position });
  }

  requireType(t: Typed, ...types: ValueKind[]): Typed {
    if (!types.includes(t.type)) throw this.typeError(t.node, types.join(' or '), t.type);
    return t;
  }

  /** Looks a unit symbol up, also as written with plain digits for superscripts (m3/h → m³/h). */
  unit(at: ExprNode, symbol: string): UnitDescriptor {
    const u = this.scope.unit(symbol) ?? this.scope.unit(symbol.replace(/(\p{L})([23])/gu, (_m, l: string, d: string) => l + (d === '2' ? '²' : '³')));
    if (!u) throw this.unknown(at, symbol, 'unit');
    return u;
  }

  check(node: ExprNode): Typed {
    const base = { node, enumSet: null, literal: null, lookbackNs: 0, lookbackPoints: 0 };
    switch (node.kind) {
      case 'number': {
        if (node.unit === null) return { ...base, plan: { op: 'const', value: node.value }, type: 'number', q: BARE };
        const u = this.unit(node, node.unit);
        if (this.mode === 'off') return { ...base, plan: { op: 'const', value: node.value }, type: 'number', q: DIMENSIONLESS };
        return { ...base, plan: { op: 'const', value: node.value }, type: 'number', q: { kind: u.quantityKind, unit: u, derived: false, bare: false } };
      }
      case 'duration':
        throw this.typeError(node, 'a number (durations are only the window argument of a function)', 'a duration');
      case 'string':
        return { ...base, plan: { op: 'const', value: 0 }, type: 'string', q: DIMENSIONLESS, literal: node.value };
      case 'bool':
        return { ...base, plan: { op: 'const', value: node.value ? 1 : 0 }, type: 'bool', q: DIMENSIONLESS };
      case 'reference': return this.reference(node);
      case 'unary': {
        const arg = this.check(node.operand);
        if (node.op === 'not') {
          this.requireType(arg, 'bool');
          return { ...arg, node, plan: { op: 'unary', fn: 'not', arg: arg.plan } };
        }
        this.requireType(arg, 'number');
        return { ...arg, node, plan: { op: 'unary', fn: 'neg', arg: arg.plan } };
      }
      case 'binary': return this.binary(node);
      case 'if': return this.conditional(node);
      case 'call': return callFunction(this, node);
    }
  }

  private reference(node: ExprNode & { kind: 'reference' }): Typed {
    const input = this.scope.reference(node.name);
    if (!input) throw this.unknown(node, node.name, 'attribute');
    const slot = this.slotOf(input);
    const history = { lookbackNs: 0, lookbackPoints: 1 };
    switch (input.valueType) {
      case 'float64': case 'int64': {
        const q: Quantity = this.mode === 'off' ? DIMENSIONLESS : { kind: input.quantityKind, unit: input.unit, derived: false, bare: false };
        return { node, plan: { op: 'input', slot }, type: 'number', q, enumSet: null, literal: null, ...history };
      }
      case 'bool': return { node, plan: { op: 'input', slot }, type: 'bool', q: DIMENSIONLESS, enumSet: null, literal: null, ...history };
      case 'enum': return { node, plan: { op: 'input', slot }, type: 'enum', q: DIMENSIONLESS, enumSet: input.enumSet, literal: null, ...history };
      case 'string': return { node, plan: { op: 'str-eq', slot, other: { literal: '' }, negate: false }, type: 'string', q: DIMENSIONLESS, enumSet: null, literal: null, ...history };
    }
  }

  private binary(node: ExprNode & { kind: 'binary' }): Typed {
    const left = this.check(node.left);
    const right = this.check(node.right);
    const history = join(left, right);
    switch (node.op) {
      case 'and': case 'or':
        this.requireType(left, 'bool');
        this.requireType(right, 'bool');
        return { node, plan: { op: node.op, left: left.plan, right: right.plan }, type: 'bool', q: DIMENSIONLESS, enumSet: null, literal: null, ...history };
      case '==': case '!=':
        if (left.type !== 'number' || right.type !== 'number') return this.equality(node, left, right);
        return this.comparison(node, left, right);
      case '<': case '<=': case '>': case '>=':
        return this.comparison(node, left, right);
      case '+': case '-': case '%': {
        this.requireType(left, 'number');
        this.requireType(right, 'number');
        const k = node.op === '%' && right.q.kind === null && !right.q.derived
          ? { q: left.q, left: left.plan, right: right.plan }
          : sameKind(this.mode, this.text, this.field, node, node.op === '+' ? 'cannot add' : node.op === '-' ? 'cannot subtract' : 'cannot take the remainder of', left, right);
        const fn: BinaryFn = node.op === '+' ? 'add' : node.op === '-' ? 'sub' : 'mod';
        return { node, plan: { op: 'binary', fn, left: k.left, right: k.right }, type: 'number', q: k.q, enumSet: null, literal: null, ...history };
      }
      case '*': case '/': {
        this.requireType(left, 'number');
        this.requireType(right, 'number');
        const k = productKind(this.mode, node.op === '/', left, right);
        return { node, plan: { op: 'binary', fn: node.op === '*' ? 'mul' : 'div', left: k.left, right: k.right }, type: 'number', q: k.q, enumSet: null, literal: null, ...history };
      }
      case '^': {
        this.requireType(left, 'number');
        this.requireType(right, 'number');
        const plain = left.q.kind === null && !left.q.derived;
        return { node, plan: { op: 'binary', fn: 'pow', left: left.plan, right: right.plan }, type: 'number', q: plain ? { ...left.q, bare: left.q.bare && right.q.bare } : { kind: null, unit: null, derived: true, bare: false }, enumSet: null, literal: null, ...history };
      }
    }
  }

  /** Numbers compared: one kind (converted to the left's unit), a bool result. */
  private comparison(node: ExprNode & { kind: 'binary' }, left: Typed, right: Typed): Typed {
    this.requireType(left, 'number');
    this.requireType(right, 'number');
    const k = sameKind(this.mode, this.text, this.field, node, 'cannot compare', left, right);
    const fn = ({ '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge', '==': 'eq', '!=': 'ne' } as const)[node.op as '<'];
    return { node, plan: { op: 'binary', fn, left: k.left, right: k.right }, type: 'bool', q: DIMENSIONLESS, enumSet: null, literal: null, ...join(left, right) };
  }

  /** == and != on bools, strings and enums (an enum against a member name, or two enums of one set). */
  private equality(node: ExprNode & { kind: 'binary' }, left: Typed, right: Typed): Typed {
    const negate = node.op === '!=';
    const history = join(left, right);
    const result = (plan: PlanNode): Typed => ({ node, plan, type: 'bool', q: DIMENSIONLESS, enumSet: null, literal: null, ...history });
    const fn: BinaryFn = negate ? 'ne' : 'eq';
    if (left.type === 'bool' && right.type === 'bool') return result({ op: 'binary', fn, left: left.plan, right: right.plan });
    if (left.type === 'enum' || right.type === 'enum') {
      const [e, other] = left.type === 'enum' ? [left, right] : [right, left];
      if (other.type === 'enum') {
        if (e.enumSet !== other.enumSet) throw this.typeError(other.node, `a member of enum set ${e.enumSet}`, `a member of enum set ${other.enumSet}`);
        return result({ op: 'binary', fn, left: left.plan, right: right.plan });
      }
      if (other.type !== 'string' || other.literal === null) throw this.typeError(other.node, 'an enum member name in double quotes', other.type);
      const ordinal = e.enumSet === null ? null : this.scope.enumMember(e.enumSet, other.literal);
      if (ordinal === null) throw this.unknown(other.node, other.literal, `member of enum set ${e.enumSet ?? '(none)'}:`);
      return result({ op: 'binary', fn, left: e.plan, right: { op: 'const', value: ordinal } });
    }
    if (left.type === 'string' && right.type === 'string') {
      const strEq = (s: Typed, o: Typed): PlanNode | null => {
        if (s.plan.op !== 'str-eq') return null;
        if (o.plan.op === 'str-eq') return { op: 'str-eq', slot: s.plan.slot, other: { slot: o.plan.slot }, negate };
        return { op: 'str-eq', slot: s.plan.slot, other: { literal: o.literal ?? '' }, negate };
      }
      const plan = strEq(left, right) ?? strEq(right, left);
      // Two string constants: settled now.
      return result(plan ?? { op: 'const', value: (left.literal === right.literal) !== negate ? 1 : 0 });
    }
    throw this.typeError(right.node, `a ${left.type} like the left side`, right.type);
  }

  private conditional(node: ExprNode & { kind: 'if' }): Typed {
    const cond = this.requireType(this.check(node.cond), 'bool');
    const then = this.requireType(this.check(node.then), 'number', 'bool');
    const otherwise = this.requireType(this.check(node.else), 'number', 'bool');
    if (then.type !== otherwise.type) throw this.typeError(otherwise.node, `a ${then.type} like the then branch`, otherwise.type);
    const history = join(cond, join(then, otherwise));
    if (then.type === 'bool') {
      return { node, plan: { op: 'if', cond: cond.plan, then: then.plan, else: otherwise.plan }, type: 'bool', q: DIMENSIONLESS, enumSet: null, literal: null, ...history };
    }
    const k = sameKind(this.mode, this.text, this.field, node, 'the branches of if give', then, otherwise);
    return { node, plan: { op: 'if', cond: cond.plan, then: k.left, else: k.right }, type: 'number', q: k.q, enumSet: null, literal: null, ...history };
  }
}

export function join(a: { lookbackNs: number; lookbackPoints: number }, b: { lookbackNs: number; lookbackPoints: number }) {
  return { lookbackNs: Math.max(a.lookbackNs, b.lookbackNs), lookbackPoints: Math.max(a.lookbackPoints, b.lookbackPoints) };
}

/**
 * Parses and checks an expression against a scope. Throws ServiceError invalid-expression,
 * unknown-reference, unit-mismatch or type-mismatch (all 400), each naming options.field.
 */
export function checkExpression(text: string, scope: ExpressionScope, options: CheckOptions): CheckedExpression {
  const field = options.field ?? 'expression';
  const tree = parseExpression(text, field);
  const ctx = new CheckContext(text, field, scope, options.unitCheck);
  const top = ctx.check(tree);
  if (top.type !== 'number' && top.type !== 'bool') {
    throw ctx.typeError(tree, 'a number or a bool result (compare a string or enum with ==)', top.type);
  }
  if (options.expect && top.type !== options.expect) throw ctx.typeError(tree, `a ${options.expect} result`, top.type);
  let plan = top.plan;
  const output = options.output ?? null;
  if (output) {
    if (output.valueType === 'string') throw ctx.typeError(tree, 'an output attribute of a number, bool or enum type', 'a string output attribute');
    if (output.valueType === 'bool' && top.type !== 'bool') throw ctx.typeError(tree, 'a bool result (the output attribute is bool)', top.type);
    const q = top.q;
    if (top.type === 'number' && ctx.mode !== 'off' && !q.derived && !q.bare && q.kind && output.quantityKind) {
      if (q.kind.id !== output.quantityKind.id) {
        if (ctx.mode === 'strict') {
          throw unitMismatch(text, field, tree, { node: tree, q }, { text: `output ${output.key}`, q: { kind: output.quantityKind, unit: output.unit, derived: false, bare: false } },
            'the result does not fit the output attribute:');
        }
      } else {
        plan = convertPlan(plan, q.unit, output.unit);
      }
    }
  }
  const quantityKind = top.type === 'number' && !top.q.derived ? top.q.kind : null;
  return {
    text,
    unitCheck: options.unitCheck,
    resultType: top.type,
    quantityKind,
    inputs: ctx.inputs,
    lookbackNs: BigInt(Math.ceil(top.lookbackNs)),
    lookbackPoints: Math.max(1, top.lookbackPoints),
    tree: plan,
  };
}
