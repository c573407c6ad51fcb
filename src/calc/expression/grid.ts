// Evaluation grids: the instants an expression is evaluated at. An event trigger evaluates
// at every instant one of its inputs has a point (the union of their timestamps); a periodic
// trigger at k·interval + align. Both are half-open ranges [startNs, endNs), as reads are.
import { ServiceError } from '../../errors.js';
import type { EvaluationGrid, PointColumns } from './types.js';

/** 2^53: offsets from a grid's base stay exact integers below this (about 104 days of ns). */
export const MAX_GRID_SPAN_NS = 2n ** 53n;

function checkSpan(startNs: bigint, endNs: bigint): void {
  if (endNs - startNs > MAX_GRID_SPAN_NS) {
    throw new ServiceError('invalid-request', 'an evaluation range spans more than 2^53 ns (about 104 days); split it',
      { errors: [{ field: 'range', problem: 'longer than 2^53 ns' }] });
  }
}

/** An ascending run of exact ns offsets: points [lo, hi) of ts, each plus shift. */
interface Run { ts: Float64Array; shift: number; lo: number; hi: number }

/**
 * Merges two runs into out from index n, dropping duplicates; returns the new count. The
 * advance is written as arithmetic: interleaved inputs would make an if/else mispredict
 * about every other point.
 */
function merge2(a: Run, b: Run, out: Float64Array, n: number): number {
  const at = a.ts, bt = b.ts, sa = a.shift, sb = b.shift, na = a.hi, nb = b.hi;
  let i = a.lo, j = b.lo;
  while (i < na && j < nb) {
    const x = at[i] + sa, y = bt[j] + sb;
    out[n++] = x < y ? x : y;
    i += x <= y ? 1 : 0;
    j += y <= x ? 1 : 0;
  }
  while (i < na) out[n++] = at[i++] + sa;
  while (j < nb) out[n++] = bt[j++] + sb;
  return n;
}

/**
 * Merges three runs in one pass (then the two left once one runs out). Against two
 * pairwise merges for three 1 s inputs (2.5 M points) it took about half the CPU
 * (18-36 ms against 38-56 ms, on the loaded 2-core box, 2026-11-27): the intermediate
 * array is neither written nor read again.
 */
function merge3(a: Run, b: Run, c: Run, out: Float64Array): number {
  const at = a.ts, bt = b.ts, ct = c.ts, sa = a.shift, sb = b.shift, sc = c.shift;
  let i = a.lo, j = b.lo, k = c.lo, n = 0;
  while (i < a.hi && j < b.hi && k < c.hi) {
    const x = at[i] + sa, y = bt[j] + sb, z = ct[k] + sc;
    const m = x < y ? (x < z ? x : z) : (y < z ? y : z);
    out[n++] = m;
    i += x === m ? 1 : 0;
    j += y === m ? 1 : 0;
    k += z === m ? 1 : 0;
  }
  const left = [{ ...a, lo: i }, { ...b, lo: j }, { ...c, lo: k }].filter((r) => r.lo < r.hi);
  if (left.length === 2) return merge2(left[0], left[1], out, n);
  if (left.length === 1) return merge2(left[0], { ts: at, shift: 0, lo: 0, hi: 0 }, out, n);
  return n;
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

/** The union of several columns' timestamps in [fromOffset, toOffset] relative to base, ascending and unique. */
export function unionOffsets(columns: readonly PointColumns[], base: bigint, fromOffset: number, toOffset: number): Float64Array {
  const runs = columns.map((c) => runOf(c, base, fromOffset, toOffset));
  const size = (r: Run) => r.hi - r.lo;
  if (runs.length === 0) return new Float64Array(0);
  let acc: Run;
  let next = 1;
  if (runs.length >= 3) {
    const out = new Float64Array(size(runs[0]) + size(runs[1]) + size(runs[2]));
    acc = { ts: out, shift: 0, lo: 0, hi: merge3(runs[0], runs[1], runs[2], out) };
    next = 3;
  } else {
    acc = runs[0];
  }
  for (; next < runs.length; next += 2) {
    if (next + 1 < runs.length) {
      const out = new Float64Array(size(acc) + size(runs[next]) + size(runs[next + 1]));
      acc = { ts: out, shift: 0, lo: 0, hi: merge3(acc, runs[next], runs[next + 1], out) };
    } else {
      const out = new Float64Array(size(acc) + size(runs[next]));
      acc = { ts: out, shift: 0, lo: 0, hi: merge2(acc, runs[next], out, 0) };
    }
  }
  if (acc.ts === columns[0]?.tsOffset) {
    // One column: its offsets shifted into the grid's frame, as a copy.
    const out = new Float64Array(size(acc));
    for (let i = acc.lo; i < acc.hi; i++) out[i - acc.lo] = acc.ts[i] + acc.shift;
    return out;
  }
  return acc.ts.subarray(acc.lo, acc.hi);
}

/** The union of the inputs' timestamps in [startNs, endNs), ascending and unique, as offsets from startNs. */
export function unionGrid(columns: readonly PointColumns[], startNs: bigint, endNs: bigint): EvaluationGrid {
  checkSpan(startNs, endNs);
  const offsets = unionOffsets(columns, startNs, 0, Number(endNs - startNs) - 1);
  return { tsBase: startNs, tsOffset: offsets, count: offsets.length };
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
