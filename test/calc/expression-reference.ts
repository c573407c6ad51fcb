// A slow reference interpreter for the evaluation property: it walks the syntax tree at
// each instant, finds every value by scanning the columns with absolute bigint times, and
// sums windows point by point — none of the compiler's registers, cursors, frames or
// prefix sums. Semantics (README "Expression language"): stepped alignment, the worst
// quality of the points used, reasons as flags whose lowest bit names the result's reason.
// Units are not interpreted (the property checks with unit_check 'off'). Not a test file.
import type { ExprNode, PointColumns } from '../../src/calc/expression/index.js';

const NO_VALUE = 1, DIV0 = 2, DOMAIN = 4, NON_FINITE = 8, COND_FALSE = 16, LOOKBACK = 32;
const CONST_Q = Infinity;

interface Value { v: number; q: number; r: number }

function lastAtOrBefore(col: PointColumns, t: bigint): number {
  let k = -1;
  for (let i = 0; i < col.count; i++) if (col.tsBase + BigInt(col.tsOffset[i]) <= t) k = i;
  return k;
}

function namesIn(node: ExprNode, into: Set<string>): Set<string> {
  switch (node.kind) {
    case 'reference': into.add(node.name); break;
    case 'unary': namesIn(node.operand, into); break;
    case 'binary': namesIn(node.left, into); namesIn(node.right, into); break;
    case 'if': namesIn(node.cond, into); namesIn(node.then, into); namesIn(node.else, into); break;
    case 'call': for (const a of node.args) namesIn(a, into); break;
    default: break;
  }
  return into;
}

const roundHalfAway = (x: number) => (x < 0 ? -Math.round(-x) : Math.round(x));

export class ReferenceInterpreter {
  constructor(private readonly columns: Record<string, PointColumns>) {}

  /** The union of the named inputs' timestamps at or before t, ascending. */
  private stamps(names: Set<string>, t: bigint): bigint[] {
    const all = new Set<bigint>();
    for (const n of names) {
      const col = this.columns[n];
      for (let i = 0; i < col.count; i++) {
        const ts = col.tsBase + BigInt(col.tsOffset[i]);
        if (ts <= t) all.add(ts);
      }
    }
    return [...all].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  }

  /** The argument of a function over time as a stepped series up to t. */
  private series(arg: ExprNode, t: bigint): Array<{ ts: bigint } & Value> {
    return this.stamps(namesIn(arg, new Set()), t).map((ts) => {
      const x = this.at(arg, ts);
      if (x.r === 0 && !Number.isFinite(x.v)) return { ts, v: 0, q: 0, r: NON_FINITE };
      return x.r !== 0 ? { ts, v: 0, q: 0, r: x.r } : { ts, ...x };
    });
  }

  /** The result at t as the service reports it: value, quality and reason code. */
  evaluate(node: ExprNode, t: bigint): { value: number; quality: number; reason: number } {
    const x = this.at(node, t);
    let r = x.r;
    if (r === 0 && !Number.isFinite(x.v)) r = NON_FINITE;
    if (r !== 0) return { value: 0, quality: 0, reason: 32 - Math.clz32(r & -r) };
    return { value: x.v, quality: x.q === CONST_Q ? 192 : x.q, reason: 0 };
  }

  at(node: ExprNode, t: bigint): Value {
    switch (node.kind) {
      case 'number': return { v: node.value, q: CONST_Q, r: 0 };
      case 'bool': return { v: node.value ? 1 : 0, q: CONST_Q, r: 0 };
      case 'reference': {
        const col = this.columns[node.name];
        const k = lastAtOrBefore(col, t);
        return k < 0 ? { v: 0, q: 0, r: NO_VALUE } : { v: col.f64![k], q: col.quality[k], r: 0 };
      }
      case 'unary': {
        const a = this.at(node.operand, t);
        return { v: node.op === '-' ? -a.v : a.v === 0 ? 1 : 0, q: a.q, r: a.r };
      }
      case 'if': {
        const c = this.at(node.cond, t);
        if (c.r !== 0) return { v: 0, q: c.q, r: c.r };
        const x = this.at(c.v !== 0 ? node.then : node.else, t);
        return { v: x.v, q: Math.min(c.q, x.q), r: x.r };
      }
      case 'binary': {
        const a = this.at(node.left, t);
        if (node.op === 'and' || node.op === 'or') {
          if (a.r !== 0) return { v: 0, q: a.q, r: a.r };
          const av = a.v !== 0 ? 1 : 0;
          if (av === (node.op === 'and' ? 0 : 1)) return { v: av, q: a.q, r: 0 };
          const b = this.at(node.right, t);
          return { v: b.v !== 0 ? 1 : 0, q: Math.min(a.q, b.q), r: b.r };
        }
        const b = this.at(node.right, t);
        const q = Math.min(a.q, b.q);
        let r = a.r | b.r;
        let v: number;
        switch (node.op) {
          case '+': v = a.v + b.v; break;
          case '-': v = a.v - b.v; break;
          case '*': v = a.v * b.v; break;
          case '/': if (b.v === 0) r |= DIV0; v = a.v / b.v; break;
          case '%': if (b.v === 0) r |= DIV0; v = a.v % b.v; break;
          case '^': v = a.v ** b.v; if (Number.isNaN(v)) r |= DOMAIN; break;
          case '<': v = a.v < b.v ? 1 : 0; break;
          case '<=': v = a.v <= b.v ? 1 : 0; break;
          case '>': v = a.v > b.v ? 1 : 0; break;
          case '>=': v = a.v >= b.v ? 1 : 0; break;
          case '==': v = a.v === b.v ? 1 : 0; break;
          case '!=': v = a.v !== b.v ? 1 : 0; break;
        }
        return { v, q, r };
      }
      case 'call': return this.call(node, t);
      default: throw new Error(`reference interpreter: ${node.kind} not covered`);
    }
  }

  private call(node: ExprNode & { kind: 'call' }, t: bigint): Value {
    const windowNs = node.args[1]?.kind === 'duration' ? node.args[1].ns : 0;
    const timed = node.name === 'prev' || node.name === 'delta' || node.name === 'rate' || node.name === 'integral' || node.name === 'time_since'
      || (node.name === 'avg' || ((node.name === 'min' || node.name === 'max') && node.args[1]?.kind === 'duration'));
    if (!timed) {
      const args = node.args.map((a) => this.at(a, t));
      const q = Math.min(...args.map((a) => a.q));
      let r = args.reduce((acc, a) => acc | a.r, 0);
      const [x, y] = args.map((a) => a.v);
      let v: number;
      switch (node.name) {
        case 'abs': v = Math.abs(x); break;
        case 'sqrt': if (x < 0) r |= DOMAIN; v = Math.sqrt(x); break;
        case 'round': v = roundHalfAway(x); break;
        case 'min': v = x < y ? x : y; break;
        case 'max': v = x > y ? x : y; break;
        default: throw new Error(`reference interpreter: ${node.name} not covered`);
      }
      return { v, q, r };
    }
    const s = this.series(node.args[0], t);
    const k = s.length - 1;
    if (k < 0) return { v: 0, q: 0, r: NO_VALUE };
    switch (node.name) {
      case 'prev': return k < 1 ? { v: 0, q: 0, r: NO_VALUE } : { v: s[k - 1].v, q: s[k - 1].q, r: s[k - 1].r };
      case 'delta': case 'rate': {
        if (k < 1) return { v: 0, q: 0, r: NO_VALUE };
        const d = s[k].v - s[k - 1].v;
        return { v: node.name === 'delta' ? d : (d * 1e9) / Number(s[k].ts - s[k - 1].ts), q: Math.min(s[k].q, s[k - 1].q), r: s[k].r | s[k - 1].r };
      }
      case 'time_since': {
        const p = s[k];
        if (p.r !== 0) return { v: 0, q: 0, r: p.r };
        if (p.v === 0) return { v: 0, q: 0, r: COND_FALSE };
        let m = k;
        while (m > 0 && s[m - 1].v !== 0 && s[m - 1].r === 0) m--;
        if (s[m].ts < t - BigInt(windowNs)) return { v: 0, q: 0, r: LOOKBACK };
        return { v: Number(t - s[m].ts) / 1e9, q: p.q, r: 0 };
      }
      default: {
        const a = t - BigInt(windowNs);
        let lo = 0;
        for (let m = 0; m <= k; m++) if (s[m].ts <= a) lo = m;
        const used = s.slice(lo, k + 1);
        const bad = used.find((p) => p.r !== 0);
        if (bad) return { v: 0, q: 0, r: bad.r };
        const q = Math.min(...used.map((p) => p.q));
        if (node.name === 'min') return { v: Math.min(...used.map((p) => p.v)), q, r: 0 };
        if (node.name === 'max') return { v: Math.max(...used.map((p) => p.v)), q, r: 0 };
        const begin = a > s[0].ts ? a : s[0].ts;
        let area = 0;
        for (let m = lo; m <= k; m++) {
          const from = s[m].ts > begin ? s[m].ts : begin;
          const to = m < k ? s[m + 1].ts : t;
          area += s[m].v * Number(to - from);
        }
        const covered = Number(t - begin);
        return { v: node.name === 'integral' ? area / 1e9 : covered > 0 ? area / covered : s[k].v, q, r: 0 };
      }
    }
  }
}
