// A compiled plan: a flat list of instructions over register columns, run block by block
// (BLOCK instants at a time). Dispatch costs one switch per instruction per block; every
// instruction is a plain loop over typed arrays, so the per-instant work is a few loads
// and stores and nothing is allocated per point. Each register carries a value, the worst
// quality behind it and reason flags (reasons.ts).
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import type { BinaryFn, PlanNode, TimeFn, UnaryFn } from './plan-tree.js';
import { CONSTANT_QUALITY, DIVISION_BY_ZERO, DOMAIN_ERROR, NO_VALUE } from './reasons.js';
import type { WindowScratch } from './time-functions.js';

/**
 * Instants per block: the registers of a plan (a few dozen at most) stay in L1/L2 cache.
 * 1024 measured against 256 and 4096 with bench/calc-evaluation.ts on 2026-11-27 (within a few percent).
 */
export const BLOCK = 1024;

export const enum Op {
  Align, StrEqLiteral, StrEqSlot, Derived, Affine, Unary, Binary, MulAdd, And, Or, If,
}

export interface Instruction {
  op: Op;
  dst: number;
  a: number;
  b: number;
  c: number;
  /** Align/StrEq: the slot; Unary/Binary: the function; Affine: scale. */
  fn: UnaryFn | BinaryFn | '';
  slot: number;
  scale: number;
  shift: number;
  literal: string;
  negate: boolean;
}

/**
 * A register column for one block. Most blocks of real data have one quality and no
 * undefined instants, so a register may say so instead of filling its columns: when `uq`
 * is >= 0 every instant has that quality and `q` is not read; when `anyR` is false no
 * instant has a reason and `r` is not read. Only mixed blocks pay for the per-instant columns.
 */
export interface Register {
  v: Float64Array;
  q: Uint32Array;
  r: Uint8Array;
  uq: number;
  anyR: boolean;
}

function qualities(reg: Register, n: number): Uint32Array {
  if (reg.uq >= 0) reg.q.fill(reg.uq, 0, n);
  return reg.q;
}

function reasons(reg: Register, n: number): Uint8Array {
  if (!reg.anyR) reg.r.fill(0, 0, n);
  return reg.r;
}

export interface TimeNode {
  fn: TimeFn;
  windowNs: number;
  /** The argument's plan tree (a bare input is read as its own series). */
  plan: PlanNode;
  sub: Program;
  /** Register the result lands in, block by block. */
  dst: number;
  scratch: WindowScratch;
  /** Whole-grid results of the latest evaluation (grown, reused). */
  v: Float64Array;
  q: Uint32Array;
  r: Uint8Array;
  /** All-zero reasons for an input read as its own series (grown, never written). */
  noReasons: Uint8Array;
}

export interface Program {
  /** Slots this program aligns (the inputs its instructions and its time nodes' arguments read). */
  slots: number[];
  instructions: Instruction[];
  registers: Register[];
  /** Per slot (indexed by slot): the aligned point index of the current block, for string comparisons. */
  aligned: Int32Array[];
  result: number;
  timeNodes: TimeNode[];
}

/** Alignment state of one evaluation: per slot, the last point at or before the latest instant. */
export interface AlignState {
  cursor: Int32Array;
  /** input tsBase − grid tsBase, as an exact number of ns. */
  shift: Float64Array;
  /** Per slot: the one quality of all its points, or -1 when they differ (then Align writes qualities per instant). */
  uniformQ: Float64Array;
  columns: readonly PointColumns[];
  /** Per slot: the grid's step-hold indices for its column (a union grid it helped build), or null. */
  steps: Array<Int32Array | null>;
}

/**
 * Stepped alignment of one input over a block. On a union grid the merge already wrote each
 * input's step-hold index (grid.ts), and alignment is a gather. Elsewhere (periodic and edge
 * grids, a function's argument) each cursor first takes the usual single step as arithmetic
 * (`j += cond ? 1 : 0`), then loops for the rare further ones: on a union grid the step is
 * taken about every third instant, unpredictably, and the plain while loop's mispredicted
 * branch cost about a quarter more CPU (three 1 s inputs, 2026-11-27).
 */
function align(p: Program, ins: Instruction, st: AlignState, instants: Float64Array, from: number, n: number): void {
  const slot = ins.slot;
  const col = st.columns[slot];
  const off = col.tsOffset;
  const shift = st.shift[slot];
  const last = col.count - 1;
  const reg = p.registers[ins.dst];
  const at = p.aligned[slot];
  const steps = st.steps[slot];
  let j = st.cursor[slot];
  const quality = col.quality;
  const rv = reg.v, rq = reg.q;
  // Instants before the input's first point form a prefix of the block (instants ascend).
  let missing = 0;
  if (steps !== null) {
    while (missing < n && steps[from + missing] < 0) missing++;
    if (col.type === 'float64' && ins.c !== 1) {
      const f = col.f64!;
      for (let i = missing; i < n; i++) rv[i] = f[steps[from + i]];
    } else {
      // String comparisons read the index of every instant, −1 included.
      for (let i = 0; i < n; i++) at[i] = steps[from + i];
    }
    if (n > 0) j = steps[from + n - 1];
  } else if (col.type === 'float64' && ins.c !== 1) {
    const f = col.f64!;
    let i = 0;
    for (; i < n; i++) {
      const t = instants[from + i] - shift;
      j += j < last && off[j + 1] <= t ? 1 : 0;
      while (j < last && off[j + 1] <= t) j++;
      if (j >= 0) break;
      missing++;
    }
    for (; i < n; i++) {
      const t = instants[from + i] - shift;
      j += j < last && off[j + 1] <= t ? 1 : 0;
      while (j < last && off[j + 1] <= t) j++;
      rv[i] = f[j];
      at[i] = j;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const t = instants[from + i] - shift;
      j += j < last && off[j + 1] <= t ? 1 : 0;
      while (j < last && off[j + 1] <= t) j++;
      at[i] = j;
      if (j < 0) missing++;
    }
  }
  st.cursor[slot] = j;
  for (let i = 0; i < missing; i++) { rv[i] = 0; rq[i] = 0; }
  if (!(col.type === 'float64' && ins.c !== 1)) {
    if (col.type === 'float64') { const a = col.f64!; for (let i = missing; i < n; i++) rv[i] = a[at[i]]; }
    else if (col.type === 'int64') { const a = col.i64!; for (let i = missing; i < n; i++) rv[i] = Number(a[at[i]]); }
    else if (col.type === 'boolean') { const a = col.u8!; for (let i = missing; i < n; i++) rv[i] = a[at[i]] !== 0 ? 1 : 0; }
    else if (col.type === 'enum') { const a = col.ord!; for (let i = missing; i < n; i++) rv[i] = a[at[i]]; }
  }
  // Qualities: one for the whole column (the usual case) needs no per-instant column unless
  // the block starts before the input's first point.
  const uq = st.uniformQ[slot];
  if (uq >= 0 && missing === 0) {
    reg.uq = n > 0 ? uq : 0;
  } else if (uq >= 0 && missing === n) {
    reg.uq = 0;
  } else {
    let mixed = 0;
    if (uq >= 0) {
      for (let i = missing; i < n; i++) rq[i] = uq;
      mixed = missing > 0 ? 1 : 0;
    } else {
      const idx = steps !== null && (col.type === 'float64' && ins.c !== 1) ? null : at;
      const q0 = missing > 0 ? 0 : quality[idx ? idx[0] : (steps as Int32Array)[from]];
      if (idx) for (let i = missing; i < n; i++) { const q = quality[idx[i]]; rq[i] = q; mixed |= q ^ q0; }
      else { const s = steps as Int32Array; for (let i = missing; i < n; i++) { const q = quality[s[from + i]]; rq[i] = q; mixed |= q ^ q0; } }
      if (missing > 0 && missing < n) mixed = 1;
    }
    reg.uq = mixed === 0 ? (n > 0 ? rq[0] : 0) : -1;
  }
  reg.anyR = missing > 0;
  if (missing > 0) { reg.r.fill(NO_VALUE, 0, missing); reg.r.fill(0, missing, n); }
}

/** Returns the reason flags the operation itself raised (0: none), so a clean block stays clean. */
function unary(fn: UnaryFn, a: Float64Array, v: Float64Array, r: Uint8Array, n: number): number {
  let raised = 0;
  switch (fn) {
    case 'neg': for (let i = 0; i < n; i++) v[i] = -a[i]; break;
    case 'not': for (let i = 0; i < n; i++) v[i] = a[i] === 0 ? 1 : 0; break;
    case 'abs': for (let i = 0; i < n; i++) v[i] = Math.abs(a[i]); break;
    case 'sqrt': for (let i = 0; i < n; i++) { const x = a[i]; if (x < 0) { r[i] |= DOMAIN_ERROR; raised = DOMAIN_ERROR; } v[i] = Math.sqrt(x); } break;
    case 'exp': for (let i = 0; i < n; i++) v[i] = Math.exp(a[i]); break;
    case 'ln': for (let i = 0; i < n; i++) { const x = a[i]; if (!(x > 0)) { r[i] |= DOMAIN_ERROR; raised = DOMAIN_ERROR; } v[i] = Math.log(x); } break;
    case 'log10': for (let i = 0; i < n; i++) { const x = a[i]; if (!(x > 0)) { r[i] |= DOMAIN_ERROR; raised = DOMAIN_ERROR; } v[i] = Math.log10(x); } break;
    case 'round': for (let i = 0; i < n; i++) v[i] = roundHalfAway(a[i]); break;
    case 'floor': for (let i = 0; i < n; i++) v[i] = Math.floor(a[i]); break;
    case 'ceil': for (let i = 0; i < n; i++) v[i] = Math.ceil(a[i]); break;
    case 'sin': for (let i = 0; i < n; i++) v[i] = Math.sin(a[i]); break;
    case 'cos': for (let i = 0; i < n; i++) v[i] = Math.cos(a[i]); break;
    case 'tan': for (let i = 0; i < n; i++) v[i] = Math.tan(a[i]); break;
  }
  return raised;
}

/** Half away from zero, as operators expect (Math.round takes -2.5 to -2). */
export function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

export function roundTo(x: number, digits: number): number {
  const f = 10 ** Math.trunc(digits);
  return roundHalfAway(x * f) / f;
}

function binary(fn: BinaryFn, a: Float64Array, b: Float64Array, v: Float64Array, r: Uint8Array, n: number): number {
  let raised = 0;
  switch (fn) {
    case 'add': for (let i = 0; i < n; i++) v[i] = a[i] + b[i]; break;
    case 'sub': for (let i = 0; i < n; i++) v[i] = a[i] - b[i]; break;
    case 'mul': for (let i = 0; i < n; i++) v[i] = a[i] * b[i]; break;
    case 'div': for (let i = 0; i < n; i++) { const d = b[i]; if (d === 0) { r[i] |= DIVISION_BY_ZERO; raised = DIVISION_BY_ZERO; } v[i] = a[i] / d; } break;
    case 'mod': for (let i = 0; i < n; i++) { const d = b[i]; if (d === 0) { r[i] |= DIVISION_BY_ZERO; raised = DIVISION_BY_ZERO; } v[i] = a[i] % d; } break;
    case 'pow': for (let i = 0; i < n; i++) { const x = a[i] ** b[i]; if (Number.isNaN(x)) { r[i] |= DOMAIN_ERROR; raised = DOMAIN_ERROR; } v[i] = x; } break;
    case 'lt': for (let i = 0; i < n; i++) v[i] = a[i] < b[i] ? 1 : 0; break;
    case 'le': for (let i = 0; i < n; i++) v[i] = a[i] <= b[i] ? 1 : 0; break;
    case 'gt': for (let i = 0; i < n; i++) v[i] = a[i] > b[i] ? 1 : 0; break;
    case 'ge': for (let i = 0; i < n; i++) v[i] = a[i] >= b[i] ? 1 : 0; break;
    case 'eq': for (let i = 0; i < n; i++) v[i] = a[i] === b[i] ? 1 : 0; break;
    case 'ne': for (let i = 0; i < n; i++) v[i] = a[i] !== b[i] ? 1 : 0; break;
    case 'min': for (let i = 0; i < n; i++) v[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case 'max': for (let i = 0; i < n; i++) v[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case 'round': for (let i = 0; i < n; i++) v[i] = roundTo(a[i], b[i]); break;
  }
  return raised;
}

/** Runs the instructions for instants[from, from + n); the result is in registers[p.result]. */
export function runBlock(p: Program, st: AlignState, instants: Float64Array, from: number, n: number): void {
  const regs = p.registers;
  for (const ins of p.instructions) {
    const d = regs[ins.dst];
    switch (ins.op) {
      case Op.Align: align(p, ins, st, instants, from, n); break;
      case Op.StrEqLiteral: case Op.StrEqSlot: {
        const idx = p.aligned[ins.slot];
        const strs = st.columns[ins.slot].str ?? [];
        const src = regs[ins.a];
        const sq = qualities(src, n), sr = reasons(src, n);
        const literal = ins.op === Op.StrEqLiteral;
        const other = literal ? src : regs[ins.b];
        const oq = qualities(other, n), or = reasons(other, n);
        const otherIdx = literal ? idx : p.aligned[ins.c];
        const otherStrs = literal ? strs : st.columns[ins.c].str ?? [];
        for (let i = 0; i < n; i++) {
          const eq = idx[i] >= 0 && (literal ? strs[idx[i]] === ins.literal : otherIdx[i] >= 0 && strs[idx[i]] === otherStrs[otherIdx[i]]);
          d.v[i] = eq !== ins.negate ? 1 : 0;
          d.q[i] = sq[i] < oq[i] ? sq[i] : oq[i];
          d.r[i] = sr[i] | or[i];
        }
        d.uq = -1; d.anyR = true;
        break;
      }
      case Op.Derived: {
        // Copied with this block's uniformity found on the way (a window at the start of a
        // grid may be undefined while the rest of it is all good).
        const t = p.timeNodes[ins.a];
        const tv = t.v, tq = t.q, tr = t.r, dv = d.v, dq = d.q, dr = d.r;
        const q0 = tq[from];
        let mixed = 0, anyR = 0;
        for (let i = 0; i < n; i++) {
          const q = tq[from + i], r = tr[from + i];
          dv[i] = tv[from + i]; dq[i] = q; dr[i] = r;
          mixed |= q ^ q0; anyR |= r;
        }
        d.uq = mixed === 0 ? q0 : -1;
        d.anyR = anyR !== 0;
        break;
      }
      case Op.Affine: {
        const a = regs[ins.a];
        const av = a.v, dv = d.v, s = ins.scale, k = ins.shift;
        for (let i = 0; i < n; i++) dv[i] = av[i] * s + k;
        copyFlags(a, d, n);
        break;
      }
      case Op.Unary: {
        const a = regs[ins.a];
        copyFlags(a, d, n);
        const fn = ins.fn as UnaryFn;
        // Zeroed reasons for the operation to raise into; the block stays clean if it raises none.
        if (fn === 'sqrt' || fn === 'ln' || fn === 'log10') reasons(d, n);
        if (unary(fn, a.v, d.v, d.r, n) !== 0) d.anyR = true;
        break;
      }
      case Op.Binary: {
        const a = regs[ins.a], b = regs[ins.b];
        if (a.uq >= 0 && b.uq >= 0) d.uq = a.uq < b.uq ? a.uq : b.uq;
        else {
          const aq = qualities(a, n), bq = qualities(b, n), dq = d.q;
          for (let i = 0; i < n; i++) { const x = aq[i], y = bq[i]; dq[i] = x < y ? x : y; }
          d.uq = -1;
        }
        if (!a.anyR && !b.anyR) d.anyR = false;
        else {
          const ar = reasons(a, n), br = reasons(b, n), dr = d.r;
          for (let i = 0; i < n; i++) dr[i] = ar[i] | br[i];
          d.anyR = true;
        }
        const fn = ins.fn as BinaryFn;
        if (fn === 'div' || fn === 'mod' || fn === 'pow') reasons(d, n);
        if (binary(fn, a.v, b.v, d.v, d.r, n) !== 0) d.anyR = true;
        break;
      }
      case Op.MulAdd: {
        // `a * b + c` in one pass (the product never lands in a register of its own); the
        // same IEEE result as the two operations, which JavaScript never contracts.
        const a = regs[ins.a], b = regs[ins.b], c = regs[ins.c];
        if (a.uq >= 0 && b.uq >= 0 && c.uq >= 0) {
          const ab = a.uq < b.uq ? a.uq : b.uq;
          d.uq = ab < c.uq ? ab : c.uq;
        } else {
          const aq = qualities(a, n), bq = qualities(b, n), cq = qualities(c, n), dq = d.q;
          for (let i = 0; i < n; i++) { const x = aq[i], y = bq[i], z = cq[i]; const m = x < y ? x : y; dq[i] = m < z ? m : z; }
          d.uq = -1;
        }
        if (!a.anyR && !b.anyR && !c.anyR) d.anyR = false;
        else {
          const ar = reasons(a, n), br = reasons(b, n), cr = reasons(c, n), dr = d.r;
          for (let i = 0; i < n; i++) dr[i] = ar[i] | br[i] | cr[i];
          d.anyR = true;
        }
        const av = a.v, bv = b.v, cv = c.v, dv = d.v;
        for (let i = 0; i < n; i++) dv[i] = av[i] * bv[i] + cv[i];
        break;
      }
      case Op.And: case Op.Or: {
        // Short-circuit per instant: `x != 0 and y / x > 1` is false, not undefined, where x is 0.
        const a = regs[ins.a], b = regs[ins.b];
        const decided = ins.op === Op.And ? 0 : 1;
        // Clean, and the left operand's quality the worst: the result always has it.
        if (!a.anyR && !b.anyR && a.uq >= 0 && b.uq >= 0 && a.uq <= b.uq) {
          const av = a.v, bv = b.v, dv = d.v;
          for (let i = 0; i < n; i++) dv[i] = (av[i] !== 0 ? 1 : 0) === decided ? decided : bv[i] !== 0 ? 1 : 0;
          d.uq = a.uq; d.anyR = false;
          break;
        }
        const aq = qualities(a, n), ar = reasons(a, n), bq = qualities(b, n), br = reasons(b, n);
        for (let i = 0; i < n; i++) {
          if (ar[i] !== 0) { d.v[i] = 0; d.q[i] = aq[i]; d.r[i] = ar[i]; continue; }
          const av = a.v[i] !== 0 ? 1 : 0;
          if (av === decided) { d.v[i] = av; d.q[i] = aq[i]; d.r[i] = 0; continue; }
          d.v[i] = b.v[i] !== 0 ? 1 : 0; d.q[i] = aq[i] < bq[i] ? aq[i] : bq[i]; d.r[i] = br[i];
        }
        d.uq = -1; d.anyR = true;
        break;
      }
      case Op.If: {
        const c = regs[ins.a], x = regs[ins.b], y = regs[ins.c];
        // A clean block whose result has one quality (the branches share one, or the
        // condition's is the worst: `if a > b then 1 else 0`) is a select on values alone.
        const uniform = c.uq < 0 || x.uq < 0 || y.uq < 0 ? -1
          : x.uq === y.uq ? (c.uq < x.uq ? c.uq : x.uq) : c.uq <= x.uq && c.uq <= y.uq ? c.uq : -1;
        if (!c.anyR && !x.anyR && !y.anyR && uniform >= 0) {
          const cv = c.v, xv = x.v, yv = y.v, dv = d.v;
          for (let i = 0; i < n; i++) dv[i] = cv[i] !== 0 ? xv[i] : yv[i];
          d.uq = uniform; d.anyR = false;
          break;
        }
        const cq = qualities(c, n), cr = reasons(c, n), xq = qualities(x, n), xr = reasons(x, n), yq = qualities(y, n), yr = reasons(y, n);
        const xv = x.v, yv = y.v;
        for (let i = 0; i < n; i++) {
          if (cr[i] !== 0) { d.v[i] = 0; d.q[i] = cq[i]; d.r[i] = cr[i]; continue; }
          const pick = c.v[i] !== 0;
          const q = pick ? xq[i] : yq[i];
          d.v[i] = pick ? xv[i] : yv[i]; d.q[i] = cq[i] < q ? cq[i] : q; d.r[i] = pick ? xr[i] : yr[i];
        }
        d.uq = -1; d.anyR = true;
        break;
      }
    }
  }
}

/** The destination of a one-operand instruction inherits its operand's qualities and reasons. */
function copyFlags(a: Register, d: Register, n: number): void {
  d.uq = a.uq;
  if (a.uq < 0) { const aq = a.q, dq = d.q; for (let i = 0; i < n; i++) dq[i] = aq[i]; }
  d.anyR = a.anyR;
  if (a.anyR) { const ar = a.r, dr = d.r; for (let i = 0; i < n; i++) dr[i] = ar[i]; }
}

export { CONSTANT_QUALITY };
