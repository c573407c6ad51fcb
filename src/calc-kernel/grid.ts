// Evaluation grids: the instants an expression is evaluated at. An event trigger evaluates
// at every instant one of its inputs has a point (the union of their timestamps); a periodic
// trigger at k·interval + align. Both are half-open ranges [startNs, endNs), as reads are.
//
// The union grid is a k-way merge of the inputs' sorted offsets, and the merge already knows
// at each instant how far every input has come: it writes each input's step-hold index (its
// last point at or before the instant) beside the instant, so alignment is a gather and the
// plan's kernel runs over aligned columns with no search. For `a * b + c` over three 1 s
// inputs at different phases (bench:calc-evaluation, 2026-11-28, load ~12) the merge with
// indices took 9.8 ms against 6.7 ms without, while the searching alignment it replaces took
// 20-28 ms for the three inputs and the gather 8.7 ms.
import { ServiceError } from '../errors.js';
import type { EvaluationGrid, GridSteps, PointColumns } from './evaluation.js';

/** 2^53: offsets from a grid's base stay exact integers below this (about 104 days of ns). */
export const MAX_GRID_SPAN_NS = 2n ** 53n;

function checkSpan(startNs: bigint, endNs: bigint): void {
  if (endNs - startNs > MAX_GRID_SPAN_NS) {
    throw new ServiceError('invalid-request', 'an evaluation range spans more than 2^53 ns (about 104 days); split it',
      { errors: [{ field: 'range', problem: 'longer than 2^53 ns' }] });
  }
}

/**
 * Buffers a union grid is built in, grown and reused across calls (a worker keeps one). A
 * fresh 20 MB grid for 2.5 M instants cost as much as the merge itself (page faults and
 * zeroing: 13.0 ms against 6.7 ms reused, 2026-11-28). A grid built in a scratch is a view,
 * valid until the scratch's next use.
 */
export class GridScratch {
  ts = new Float64Array(0);
  index: Int32Array[] = [];
  ensure(n: number, columns: number): void {
    if (this.ts.length < n) {
      const size = Math.max(n, Math.ceil(this.ts.length * 1.5));
      this.ts = new Float64Array(size);
      this.index = this.index.map(() => new Int32Array(size));
    }
    while (this.index.length < columns) this.index.push(new Int32Array(this.ts.length));
  }
}

/** An ascending run of exact ns offsets: points [lo, hi) of ts, each plus shift. */
interface Run { ts: Float64Array; shift: number; lo: number; hi: number }

/**
 * Copies what is left of one run into out from n (the others are exhausted, their indices
 * held at their last point); returns the new count.
 */
function rest1(a: Run, out: Float64Array, n: number, ia: Int32Array | null): number {
  const at = a.ts, sa = a.shift;
  const from = n;
  for (let i = a.lo; i < a.hi; i++) out[n++] = at[i] + sa;
  if (ia) for (let i = a.lo, k = from; k < n; i++, k++) ia[k] = i;
  a.lo = a.hi;
  return n;
}

/**
 * Merges two runs into out from n, dropping duplicates, writing step-hold indices when asked;
 * returns the new count. With indices (every grid an expression is evaluated on), each run's
 * next offset stays in a local and only a run that advanced reads its next one (past its end
 * the loop stops, so the stale value is never compared), in two independent ifs. Against the
 * arithmetic advance kept for the index-free merges, which reloads every offset each step,
 * 2 M instants of two inputs took 7.0 against 7.9 ms at fixed phases and 12.0 against 13.8
 * ms randomly interleaved (2026-11-28).
 */
function merge2(a: Run, b: Run, out: Float64Array, n: number, ia: Int32Array | null, ib: Int32Array | null): number {
  const at = a.ts, bt = b.ts, sa = a.shift, sb = b.shift, na = a.hi, nb = b.hi;
  let i = a.lo, j = b.lo;
  if (ia && ib && i < na && j < nb) {
    let x = at[i] + sa, y = bt[j] + sb;
    for (;;) {
      const m = x < y ? x : y;
      if (x === m && ++i < na) x = at[i] + sa;
      if (y === m && ++j < nb) y = bt[j] + sb;
      out[n] = m; ia[n] = i - 1; ib[n] = j - 1; n++;
      if (i >= na || j >= nb) break;
    }
  } else {
    while (i < na && j < nb) {
      const x = at[i] + sa, y = bt[j] + sb;
      out[n++] = x < y ? x : y;
      i += x <= y ? 1 : 0;
      j += y <= x ? 1 : 0;
    }
  }
  a.lo = i; b.lo = j;
  const from = n;
  if (i < na) { n = rest1(a, out, n, ia); if (ib) ib.fill(j - 1, from, n); }
  else if (j < nb) { n = rest1(b, out, n, ib); if (ia) ia.fill(i - 1, from, n); }
  return n;
}

/**
 * Merges three runs in one pass (then the two left once one runs out). Against two pairwise
 * merges for three 1 s inputs (2.5 M points) it took about half the CPU (18-36 ms against
 * 38-56 ms, on the loaded 2-core box, 2026-11-27): the intermediate array is neither written
 * nor read again. With indices it advances as merge2 does (2.5 M instants of three inputs:
 * 12.0 against 15.0 ms at fixed phases, 21 against 26 ms randomly interleaved).
 */
function merge3(a: Run, b: Run, c: Run, out: Float64Array, ia: Int32Array | null, ib: Int32Array | null, ic: Int32Array | null): number {
  const at = a.ts, bt = b.ts, ct = c.ts, sa = a.shift, sb = b.shift, sc = c.shift;
  let i = a.lo, j = b.lo, k = c.lo, n = 0;
  const na = a.hi, nb = b.hi, nc = c.hi;
  if (ia && ib && ic && i < na && j < nb && k < nc) {
    let x = at[i] + sa, y = bt[j] + sb, z = ct[k] + sc;
    for (;;) {
      const m = x < y ? (x < z ? x : z) : (y < z ? y : z);
      if (x === m && ++i < na) x = at[i] + sa;
      if (y === m && ++j < nb) y = bt[j] + sb;
      if (z === m && ++k < nc) z = ct[k] + sc;
      out[n] = m; ia[n] = i - 1; ib[n] = j - 1; ic[n] = k - 1; n++;
      if (i >= na || j >= nb || k >= nc) break;
    }
  } else {
    while (i < na && j < nb && k < nc) {
      const x = at[i] + sa, y = bt[j] + sb, z = ct[k] + sc;
      const m = x < y ? (x < z ? x : z) : (y < z ? y : z);
      out[n++] = m;
      i += x === m ? 1 : 0;
      j += y === m ? 1 : 0;
      k += z === m ? 1 : 0;
    }
  }
  a.lo = i; b.lo = j; c.lo = k;
  const from = n;
  // One run is exhausted: its index holds at its last point while the other two merge on.
  if (i >= na) { n = merge2(b, c, out, n, ib, ic); if (ia) ia.fill(i - 1, from, n); }
  else if (j >= nb) { n = merge2(a, c, out, n, ia, ic); if (ib) ib.fill(j - 1, from, n); }
  else { n = merge2(a, b, out, n, ia, ib); if (ic) ic.fill(k - 1, from, n); }
  return n;
}

/**
 * Step-hold indices of one run over a finished grid that contains each of its points (one
 * pass: the grid's instants between two of its points hold the earlier one).
 */
function stepIndex(r: Run, grid: Float64Array, n: number, idx: Int32Array): void {
  const ts = r.ts, s = r.shift;
  let p = 0, j = r.lo - 1;
  for (let k = r.lo; k < r.hi; k++) {
    const x = ts[k] + s;
    while (p < n && grid[p] < x) idx[p++] = j;
    j = k;
  }
  while (p < n) idx[p++] = j;
}

/** The run of a column's points whose offset from base lies in [fromOffset, toOffset] (binary searches: look-back may be long). */
function runOf(col: PointColumns, base: bigint, fromOffset: number, toOffset: number): Run {
  const shift = Number(col.tsBase - base);
  const off = col.tsOffset;
  let l = 0, h = col.count;
  while (l < h) { const m = (l + h) >>> 1; if (off[m] + shift < fromOffset) l = m + 1; else h = m; }
  const lo = l;
  h = col.count;
  while (l < h) { const m = (l + h) >>> 1; if (off[m] + shift <= toOffset) l = m + 1; else h = m; }
  return { ts: off, shift, lo, hi: l };
}

/**
 * The union of several columns' timestamps in [fromOffset, toOffset] relative to base,
 * ascending and unique, into ts (sized for the sum of the runs); with index, each column's
 * step-hold index per instant too. Returns the count.
 */
function mergeInto(columns: readonly PointColumns[], base: bigint, fromOffset: number, toOffset: number, ts: Float64Array, index: Int32Array[] | null): number {
  const runs = columns.map((c) => runOf(c, base, fromOffset, toOffset));
  const los = runs.map((r) => r.lo);
  const at = (i: number): Int32Array | null => (index ? index[i] : null);
  if (runs.length === 0) return 0;
  if (runs.length === 1) return rest1(runs[0], ts, 0, at(0));
  if (runs.length === 2) return merge2(runs[0], runs[1], ts, 0, at(0), at(1));
  if (runs.length === 3) return merge3(runs[0], runs[1], runs[2], ts, at(0), at(1), at(2));
  // More inputs: merged three, then two more at a time into the accumulated union.
  let size = runs[0].hi - runs[0].lo + runs[1].hi - runs[1].lo + runs[2].hi - runs[2].lo;
  let acc = new Float64Array(size);
  let n = merge3(runs[0], runs[1], runs[2], acc, null, null, null);
  for (let next = 3; next < runs.length; next += 2) {
    const two = next + 1 < runs.length;
    size = n + runs[next].hi - runs[next].lo + (two ? runs[next + 1].hi - runs[next + 1].lo : 0);
    const into = new Float64Array(size);
    const accRun: Run = { ts: acc, shift: 0, lo: 0, hi: n };
    n = two ? merge3(accRun, runs[next], runs[next + 1], into, null, null, null) : merge2(accRun, runs[next], into, 0, null, null);
    acc = into;
  }
  ts.set(acc.subarray(0, n));
  if (index) for (let c = 0; c < runs.length; c++) stepIndex({ ...runs[c], lo: los[c] }, ts, n, index[c]);
  return n;
}

function totalSize(columns: readonly PointColumns[], base: bigint, fromOffset: number, toOffset: number): number {
  let size = 0;
  for (const c of columns) { const r = runOf(c, base, fromOffset, toOffset); size += r.hi - r.lo; }
  return size;
}

/**
 * The union of several columns' timestamps in [fromOffset, toOffset] relative to base,
 * ascending and unique, with each column's step-hold indices (fresh arrays).
 */
export function unionOffsets(columns: readonly PointColumns[], base: bigint, fromOffset: number, toOffset: number): { ts: Float64Array; steps: GridSteps } {
  const size = totalSize(columns, base, fromOffset, toOffset);
  const out = new Float64Array(size);
  const index = columns.map(() => new Int32Array(size));
  const n = mergeInto(columns, base, fromOffset, toOffset, out, index);
  return { ts: out.subarray(0, n), steps: { columns: [...columns], index } };
}

/**
 * The union of the inputs' timestamps in [startNs, endNs), ascending and unique, as offsets
 * from startNs, with each input's step-hold indices (grid.steps). Built in fresh arrays, or
 * in scratch (then a view valid until the scratch's next use).
 */
export function unionGrid(columns: readonly PointColumns[], startNs: bigint, endNs: bigint, scratch?: GridScratch): EvaluationGrid {
  checkSpan(startNs, endNs);
  const last = Number(endNs - startNs) - 1;
  const size = totalSize(columns, startNs, 0, last);
  let ts: Float64Array;
  let index: Int32Array[];
  if (scratch) {
    scratch.ensure(size, columns.length);
    ts = scratch.ts;
    index = scratch.index.slice(0, columns.length);
  } else {
    ts = new Float64Array(size);
    index = columns.map(() => new Int32Array(size));
  }
  const n = mergeInto(columns, startNs, 0, last, ts, index);
  const steps: GridSteps = { columns: [...columns], index };
  return { tsBase: startNs, tsOffset: ts.subarray(0, n), count: n, steps };
}

/** The instants k·intervalNs + alignNs inside [startNs, endNs), as offsets from startNs. */
export function periodicGrid(startNs: bigint, endNs: bigint, intervalNs: bigint, alignNs = 0n): EvaluationGrid {
  if (intervalNs <= 0n) {
    throw new ServiceError('invalid-request', 'interval_ns must be positive', { errors: [{ field: 'interval_ns', problem: 'must be positive' }] });
  }
  checkSpan(startNs, endNs);
  let first = startNs - ((((startNs - alignNs) % intervalNs) + intervalNs) % intervalNs);
  if (first < startNs) first += intervalNs;
  const n = first >= endNs ? 0 : Number((endNs - 1n - first) / intervalNs) + 1;
  const out = new Float64Array(n);
  const base = Number(first - startNs);
  const step = Number(intervalNs);
  for (let i = 0; i < n; i++) out[i] = base + i * step;
  return { tsBase: startNs, tsOffset: out, count: n };
}
