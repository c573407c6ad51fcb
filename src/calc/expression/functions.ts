// The functions of the language and their signatures. Each call is checked here: the
// number and types of its arguments, units (through the same same-kind rule as +), and
// for functions over time the window argument, which must be a duration literal (5m).
import type { ExprNode } from './ast.js';
import type { CheckContext, Typed } from './checker.js';
import { join } from './checker.js';
import { slotsOf, type PlanNode, type TimeFn, type UnaryFn } from '../../calc-kernel/plan-tree.js';
import { DERIVED, DIMENSIONLESS, sameKind, type Quantity } from './quantity.js';

type Call = ExprNode & { kind: 'call' };

/** Names and signatures, as users read them in errors and in the README. */
export const FUNCTION_SIGNATURES: Readonly<Record<string, string>> = {
  abs: 'abs(x)', sqrt: 'sqrt(x)', exp: 'exp(x)', ln: 'ln(x)', log10: 'log10(x)', pow: 'pow(x, y)',
  round: 'round(x) or round(x, digits)', floor: 'floor(x)', ceil: 'ceil(x)', clamp: 'clamp(x, low, high)',
  sin: 'sin(x) (radians)', cos: 'cos(x) (radians)', tan: 'tan(x) (radians)',
  min: 'min(a, b, ...) or min(x, window)', max: 'max(a, b, ...) or max(x, window)', avg: 'avg(x, window)',
  prev: 'prev(x)', delta: 'delta(x)', rate: 'rate(x) (per second)', integral: 'integral(x, window) (value·seconds)',
  time_since: 'time_since(condition) or time_since(condition, lookback) (seconds; lookback 1d unless given)',
};

/** time_since looks this far back unless told otherwise. */
export const TIME_SINCE_DEFAULT_LOOKBACK_NS = 86_400e9;

const SAME_KIND_UNARY: Partial<Record<string, UnaryFn>> = { abs: 'abs', round: 'round', floor: 'floor', ceil: 'ceil' };
const DIMENSIONLESS_UNARY: Partial<Record<string, UnaryFn>> = { exp: 'exp', ln: 'ln', log10: 'log10', sin: 'sin', cos: 'cos', tan: 'tan' };

function arity(ctx: CheckContext, node: Call, counts: number[]): void {
  if (!counts.includes(node.args.length)) {
    throw ctx.typeError(node, `${counts.join(' or ')} argument${counts.length === 1 && counts[0] === 1 ? '' : 's'} (${FUNCTION_SIGNATURES[node.name]})`, `${node.args.length}`);
  }
}

function durationArg(ctx: CheckContext, node: Call, arg: ExprNode): number {
  if (arg.kind !== 'duration') throw ctx.typeError(arg, `a duration written like 10s, 5m, 1h or 1d (${FUNCTION_SIGNATURES[node.name]})`, arg.kind === 'number' ? 'a number' : arg.kind);
  if (!(arg.ns > 0)) throw ctx.typeError(arg, 'a positive duration', arg.text);
  return arg.ns;
}

function numberResult(node: Call, plan: PlanNode, q: Quantity, history: { lookbackNs: number; lookbackPoints: number }): Typed {
  return { node, plan, type: 'number', q, enumSet: null, literal: null, lookbackNs: history.lookbackNs, lookbackPoints: history.lookbackPoints };
}

function overTime(ctx: CheckContext, node: Call, fn: TimeFn, arg: Typed, windowNs: number, q: Quantity): Typed {
  if (slotsOf(arg.plan).size === 0) throw ctx.typeError(arg.node, `an argument that reads an attribute (${FUNCTION_SIGNATURES[node.name]})`, 'a constant');
  const extraPoint = fn === 'prev' || fn === 'delta' || fn === 'rate' ? 1 : 0;
  const type = fn === 'prev' && arg.type === 'bool' ? 'bool' : 'number';
  return {
    node, plan: { op: 'time', fn, arg: arg.plan, windowNs }, type, q, enumSet: null, literal: null,
    lookbackNs: arg.lookbackNs + windowNs, lookbackPoints: arg.lookbackPoints + extraPoint,
  };
}

/** Folds min/max over two or more arguments of one kind. */
function extremum(ctx: CheckContext, node: Call, fn: 'min' | 'max', args: Typed[]): Typed {
  let acc = args[0];
  for (let i = 1; i < args.length; i++) {
    const next = args[i];
    const k = sameKind(ctx.mode, ctx.text, ctx.field, node, `${fn}() cannot mix`, acc, next);
    acc = numberResult(node, { op: 'binary', fn, left: k.left, right: k.right }, k.q, join(acc, next));
  }
  return acc;
}

export function callFunction(ctx: CheckContext, node: Call): Typed {
  const name = node.name;
  if (!(name in FUNCTION_SIGNATURES)) throw ctx.unknown(node, name, 'function');
  const numbers = () => node.args.map((a) => ctx.requireType(ctx.check(a), 'number'));
  const sameUnary = SAME_KIND_UNARY[name];
  if (sameUnary && !(name === 'round' && node.args.length === 2)) {
    arity(ctx, node, name === 'round' ? [1, 2] : [1]);
    const [x] = numbers();
    return numberResult(node, { op: 'unary', fn: sameUnary, arg: x.plan }, x.q, x);
  }
  const plainUnary = DIMENSIONLESS_UNARY[name];
  if (plainUnary) {
    arity(ctx, node, [1]);
    const [x] = numbers();
    return numberResult(node, { op: 'unary', fn: plainUnary, arg: x.plan }, DIMENSIONLESS, x);
  }
  switch (name) {
    case 'round': {
      const [x, digits] = numbers();
      return numberResult(node, { op: 'binary', fn: 'round', left: x.plan, right: digits.plan }, x.q, join(x, digits));
    }
    case 'sqrt': {
      arity(ctx, node, [1]);
      const [x] = numbers();
      const plain = x.q.kind === null && !x.q.derived;
      return numberResult(node, { op: 'unary', fn: 'sqrt', arg: x.plan }, plain ? x.q : DERIVED, x);
    }
    case 'pow': {
      arity(ctx, node, [2]);
      const [x, y] = numbers();
      const plain = x.q.kind === null && !x.q.derived;
      return numberResult(node, { op: 'binary', fn: 'pow', left: x.plan, right: y.plan }, plain ? { ...x.q, bare: x.q.bare && y.q.bare } : DERIVED, join(x, y));
    }
    case 'clamp': {
      arity(ctx, node, [3]);
      const [x, lo, hi] = numbers();
      const low = extremum(ctx, node, 'max', [x, lo]);
      return extremum(ctx, node, 'min', [low, hi]);
    }
    case 'min': case 'max': case 'avg': {
      const last = node.args[node.args.length - 1];
      if (node.args.length === 2 && last?.kind === 'duration') {
        const x = ctx.requireType(ctx.check(node.args[0]), 'number');
        return overTime(ctx, node, name, x, durationArg(ctx, node, last), x.q);
      }
      if (name === 'avg') {
        arity(ctx, node, [2]);
        throw ctx.typeError(last, `a duration written like 10s, 5m, 1h or 1d (${FUNCTION_SIGNATURES.avg})`, last.kind === 'number' ? 'a number' : last.kind);
      }
      if (node.args.length < 2) arity(ctx, node, [2]);
      return extremum(ctx, node, name, numbers());
    }
    case 'prev': {
      arity(ctx, node, [1]);
      const x = ctx.requireType(ctx.check(node.args[0]), 'number', 'bool');
      return overTime(ctx, node, 'prev', x, 0, x.q);
    }
    case 'delta': case 'rate': {
      arity(ctx, node, [1]);
      const x = ctx.requireType(ctx.check(node.args[0]), 'number');
      return overTime(ctx, node, name, x, 0, name === 'delta' ? x.q : DERIVED);
    }
    case 'integral': {
      arity(ctx, node, [2]);
      const x = ctx.requireType(ctx.check(node.args[0]), 'number');
      return overTime(ctx, node, 'integral', x, durationArg(ctx, node, node.args[1]), DERIVED);
    }
    case 'time_since': {
      arity(ctx, node, [1, 2]);
      const cond = ctx.requireType(ctx.check(node.args[0]), 'bool');
      const window = node.args.length === 2 ? durationArg(ctx, node, node.args[1]) : TIME_SINCE_DEFAULT_LOOKBACK_NS;
      return overTime(ctx, node, 'time_since', cond, window, DERIVED);
    }
  }
  throw ctx.unknown(node, name, 'function');
}
