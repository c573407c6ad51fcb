// Lowers a plan's checked tree to a Program (program.ts) once per rule version (on the
// HTTP thread for checks and tests, in each read-pool worker for the engine), and runs it
// over an evaluation grid. Functions over time are evaluated first, each on its own
// argument's stepped series (the argument evaluated at its inputs' timestamps), into
// whole-grid columns the block loop then reads like inputs.
import { bug } from '../errors.js';
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import { BLOCK, Op, runBlock, type AlignState, type Instruction, type Program, type Register, type TimeNode } from './program.js';
import { unionOffsets } from './grid.js';
import { slotsOf, type PlanNode } from './plan-tree.js';
import { CONSTANT_QUALITY, GOOD_QUALITY, NON_FINITE, reasonCode } from './reasons.js';
import { WindowScratch, applyTimeFunction, type SteppedSeries } from './time-functions.js';
import type { EvaluationGrid, EvaluationResult, ExpressionPlan, GridSteps, PlanEvaluation } from './evaluation.js';

function newRegister(): Register {
  return { v: new Float64Array(BLOCK), q: new Uint32Array(BLOCK), r: new Uint8Array(BLOCK), uq: -1, anyR: false };
}

function instruction(op: Op, dst: number, fields: Partial<Instruction>): Instruction {
  return { op, dst, a: -1, b: -1, c: -1, fn: '', slot: -1, scale: 1, shift: 0, literal: '', negate: false, ...fields };
}

/** Builds the program for one plan tree; slotCount sizes the per-slot alignment buffers. */
export function buildProgram(root: PlanNode, slotCount: number): Program {
  const p: Program = { slots: [...slotsOf(root)].sort((x, y) => x - y), instructions: [], registers: [], aligned: [], result: -1, timeNodes: [] };
  for (let s = 0; s < slotCount; s++) p.aligned.push(new Int32Array(p.slots.includes(s) ? BLOCK : 0));
  // Slots a string comparison reads keep their aligned point index (Align's c = 1).
  const indexed = new Set<number>();
  const findStrings = (node: PlanNode): void => {
    if (node.op === 'str-eq') { indexed.add(node.slot); if ('slot' in node.other) indexed.add(node.other.slot); }
    if ('arg' in node && node.op !== 'time') findStrings(node.arg);
    if ('left' in node) { findStrings(node.left); findStrings(node.right); }
    if (node.op === 'if') { findStrings(node.cond); findStrings(node.then); findStrings(node.else); }
  };
  findStrings(root);
  const slotRegister = new Map<number, number>();
  const register = () => { p.registers.push(newRegister()); return p.registers.length - 1; };
  const alignSlot = (slot: number): number => {
    let reg = slotRegister.get(slot);
    if (reg === undefined) {
      reg = register();
      slotRegister.set(slot, reg);
      p.instructions.push(instruction(Op.Align, reg, { slot, c: indexed.has(slot) ? 1 : 0 }));
    }
    return reg;
  };
  const lower = (node: PlanNode): number => {
    switch (node.op) {
      case 'const': {
        const reg = register();
        const r = p.registers[reg];
        r.v.fill(node.value); r.q.fill(CONSTANT_QUALITY);
        r.uq = CONSTANT_QUALITY; r.anyR = false;
        return reg;
      }
      case 'input': return alignSlot(node.slot);
      case 'str-eq': {
        const a = alignSlot(node.slot);
        const dst = register();
        if ('literal' in node.other) {
          p.instructions.push(instruction(Op.StrEqLiteral, dst, { a, slot: node.slot, literal: node.other.literal, negate: node.negate }));
        } else {
          const b = alignSlot(node.other.slot);
          p.instructions.push(instruction(Op.StrEqSlot, dst, { a, b, c: node.other.slot, slot: node.slot, negate: node.negate }));
        }
        return dst;
      }
      case 'affine': {
        const a = lower(node.arg);
        const dst = register();
        p.instructions.push(instruction(Op.Affine, dst, { a, scale: node.scale, shift: node.shift }));
        return dst;
      }
      case 'unary': {
        const a = lower(node.arg);
        const dst = register();
        p.instructions.push(instruction(Op.Unary, dst, { a, fn: node.fn }));
        return dst;
      }
      case 'binary': {
        // A product plus a term (either order) is one instruction: a pass over the block less.
        if (node.fn === 'add') {
          const [product, term] = node.left.op === 'binary' && node.left.fn === 'mul' ? [node.left, node.right]
            : node.right.op === 'binary' && node.right.fn === 'mul' ? [node.right, node.left] : [null, null];
          if (product !== null && product.op === 'binary' && term !== null) {
            const a = lower(product.left);
            const b = lower(product.right);
            const c = lower(term);
            const dst = register();
            p.instructions.push(instruction(Op.MulAdd, dst, { a, b, c }));
            return dst;
          }
        }
        const a = lower(node.left);
        const b = lower(node.right);
        const dst = register();
        p.instructions.push(instruction(Op.Binary, dst, { a, b, fn: node.fn }));
        return dst;
      }
      case 'and': case 'or': {
        const a = lower(node.left);
        const b = lower(node.right);
        const dst = register();
        p.instructions.push(instruction(node.op === 'and' ? Op.And : Op.Or, dst, { a, b }));
        return dst;
      }
      case 'if': {
        const a = lower(node.cond);
        const b = lower(node.then);
        const c = lower(node.else);
        const dst = register();
        p.instructions.push(instruction(Op.If, dst, { a, b, c }));
        return dst;
      }
      case 'time': {
        const dst = register();
        p.timeNodes.push({ fn: node.fn, windowNs: node.windowNs, plan: node.arg, sub: buildProgram(node.arg, slotCount), dst, scratch: new WindowScratch(),
          v: new Float64Array(0), q: new Uint32Array(0), r: new Uint8Array(0), noReasons: new Uint8Array(0) });
        p.instructions.push(instruction(Op.Derived, dst, { a: p.timeNodes.length - 1 }));
        return dst;
      }
    }
  };
  p.result = lower(root);
  return p;
}


/**
 * A function's argument as a stepped series up to lastInstant. A float64 input read as it
 * is (the usual `avg(Flow, 5m)`) is its own series, only its reason column is made; any
 * other argument is evaluated at its inputs' own timestamps.
 */
function steppedSeries(t: TimeNode, columns: readonly PointColumns[], tsBase: bigint, lastInstant: number): SteppedSeries {
  const plan = t.plan;
  if (plan.op === 'input' && columns[plan.slot].type === 'float64' && columns[plan.slot].f64) {
    const col = columns[plan.slot];
    const shift = Number(col.tsBase - tsBase);
    let count = col.count;
    while (count > 0 && col.tsOffset[count - 1] + shift > lastInstant) count--;
    // A stored NaN or infinity must make its windows undefined, as the evaluated path does.
    const f = col.f64!;
    let finite = true;
    for (let i = 0; i < count; i++) if (f[i] - f[i] !== 0) { finite = false; break; }
    if (finite) {
      if (t.noReasons.length < count) t.noReasons = new Uint8Array(count);
      return { count, ts: col.tsOffset, shift, v: f, q: col.quality, r: t.noReasons };
    }
  }
  // Every timestamp of the argument's inputs at or before lastInstant, in the grid's frame.
  const { ts, steps } = unionOffsets(t.sub.slots.map((s) => columns[s]), tsBase, -Infinity, lastInstant);
  const series: SteppedSeries = { count: ts.length, ts, shift: 0, v: new Float64Array(ts.length), q: new Uint32Array(ts.length), r: new Uint8Array(ts.length) };
  runProgram(t.sub, columns, tsBase, ts, ts.length, steps, series, false);
  return series;
}

/**
 * The program's alignment state for these columns, reset: kept on the program (a program runs
 * one evaluation at a time on its thread) since a live window of a point or two allocated four
 * arrays for it on every run.
 */
const alignStates = new WeakMap<Program, AlignState>();
function alignStateOf(p: Program, columns: readonly PointColumns[]): AlignState {
  const n = columns.length;
  let st = alignStates.get(p);
  if (st === undefined || st.cursor.length !== n) {
    st = { cursor: new Int32Array(n), shift: new Float64Array(n), uniformQ: new Float64Array(n), columns, steps: new Array<Int32Array | null>(n) };
    alignStates.set(p, st);
  }
  st.cursor.fill(-1); st.shift.fill(0); st.uniformQ.fill(0); st.steps.fill(null);
  st.columns = columns;
  return st;
}

/** Runs a program at instants (offsets from tsBase) into out, keeping reason flags (not codes) and raw qualities. */
function runProgram(p: Program, columns: readonly PointColumns[], tsBase: bigint, instants: Float64Array, count: number, steps: GridSteps | null,
  out: { v: Float64Array; q: Uint32Array; r: Uint8Array }, codes: boolean): void {
  const last = count > 0 ? instants[count - 1] : -Infinity;
  for (const t of p.timeNodes) {
    if (t.v.length < count) { t.v = new Float64Array(count); t.q = new Uint32Array(count); t.r = new Uint8Array(count); }
    applyTimeFunction(t.fn, t.windowNs, steppedSeries(t, columns, tsBase, last), instants, 0, count, t, t.scratch);
  }
  const st = alignStateOf(p, columns);
  for (const s of p.slots) {
    const col = columns[s];
    // A slot whose column built the grid gathers through the merge's indices.
    const k = steps ? steps.columns.indexOf(col) : -1;
    if (k >= 0) st.steps[s] = (steps as GridSteps).index[k];
    st.shift[s] = Number(col.tsBase - tsBase);
    const q = col.quality;
    let uq = col.count > 0 ? q[0] : 0;
    for (let i = 1; i < col.count; i++) if (q[i] !== uq) { uq = -1; break; }
    st.uniformQ[s] = uq;
  }
  const res = p.registers[p.result];
  const ov = out.v, oq = out.q, or = out.r;
  for (let from = 0; from < count; from += BLOCK) {
    const n = Math.min(BLOCK, count - from);
    runBlock(p, st, instants, from, n);
    const rv = res.v;
    if (res.uq >= 0 && !res.anyR) {
      // The common block: one quality, nothing undefined so far; only non-finite values to
      // catch. Values are copied with x − x summed on the way (NaN once any is NaN or ±∞),
      // qualities and reasons filled; only a block that met a non-finite value is revisited.
      const q = codes && res.uq === CONSTANT_QUALITY ? GOOD_QUALITY : res.uq;
      let nonFinite = 0;
      for (let i = 0; i < n; i++) { const x = rv[i]; ov[from + i] = x; nonFinite += x - x; }
      oq.fill(q, from, from + n);
      or.fill(0, from, from + n);
      if (nonFinite !== 0) {
        for (let i = 0; i < n; i++) {
          const x = rv[i];
          if (x - x !== 0) { ov[from + i] = 0; oq[from + i] = 0; or[from + i] = codes ? reasonCode(NON_FINITE) : NON_FINITE; }
        }
      }
      continue;
    }
    const rq = res.uq >= 0 ? res.q.fill(res.uq, 0, n) : res.q;
    const rr = res.anyR ? res.r : res.r.fill(0, 0, n);
    for (let i = 0; i < n; i++) {
      const x = rv[i];
      let r = rr[i];
      if (r === 0 && x - x !== 0) r = NON_FINITE;
      if (r !== 0) { ov[from + i] = 0; oq[from + i] = 0; or[from + i] = codes ? reasonCode(r) : r; }
      else { ov[from + i] = x; oq[from + i] = codes && rq[i] === CONSTANT_QUALITY ? GOOD_QUALITY : rq[i]; or[from + i] = 0; }
    }
  }
}

/** A plan made runnable: its program built once; reusable, not shareable across threads (registers are scratch). */
export class PlanEvaluator implements PlanEvaluation {
  readonly inputs;
  readonly resultType;
  readonly lookbackNs;
  readonly lookbackPoints;
  private readonly program: Program;
  constructor(readonly plan: ExpressionPlan) {
    this.inputs = plan.inputs;
    this.resultType = plan.resultType;
    this.lookbackNs = plan.lookbackNs;
    this.lookbackPoints = plan.lookbackPoints;
    this.program = buildProgram(plan.tree, plan.inputs.length);
  }

  evaluate(columns: readonly PointColumns[], grid: EvaluationGrid): EvaluationResult {
    const n = grid.count;
    return this.evaluateInto(columns, grid, { count: n, values: new Float64Array(n), quality: new Uint32Array(n), reason: new Uint8Array(n) });
  }

  evaluateInto(columns: readonly PointColumns[], grid: EvaluationGrid, out: EvaluationResult): EvaluationResult {
    const n = grid.count;
    if (columns.length !== this.inputs.length) throw bug('columns', `${columns.length} column sets for ${this.inputs.length} inputs`);
    if (out.values.length < n || out.quality.length < n || out.reason.length < n) throw bug('out', `arrays shorter than the grid (${n})`);
    runProgram(this.program, columns, grid.tsBase, grid.tsOffset, n, grid.steps ?? null, { v: out.values, q: out.quality, r: out.reason }, true);
    out.count = n;
    return out;
  }
}
