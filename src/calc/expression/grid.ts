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

/**
 * Merges two ascending runs of exact ns offsets (a[i] + shiftA, b[j] + shiftB) into out,
 * dropping duplicates; returns the count. A plain two-way merge on locals with the
 * advance written as arithmetic (the interleaving of inputs makes an if/else mispredict
 * about every other point); a k-way merge looping over the inputs per point measured
 * several times slower (bench/calc-evaluation.ts, 2026-11-27).
 */
export function mergeOffsets(a: Float64Array, shiftA: number, ia: number, na: number,
  b: Float64Array, shiftB: number, ib: number, nb: number, out: Float64Array): number {
  let i = ia, j = ib, n = 0;
  while (i < na && j < nb) {
    const x = a[i] + shiftA, y = b[j] + shiftB;
    out[n++] = x < y ? x : y;
    i += x <= y ? 1 : 0;
    j += y <= x ? 1 : 0;
  }
  while (i < na) out[n++] = a[i++] + shiftA;
  while (j < nb) out[n++] = b[j++] + shiftB;
  return n;
}

/** [first, end) of a column's points whose offset from base lies in [fromOffset, toOffset]. */
function pointRange(col: PointColumns, shift: number, fromOffset: number, toOffset: number): [number, number] {
  const off = col.tsOffset;
  let lo = 0, hi = col.count;
  // Binary searches: look-back points before the range may be many.
  let l = 0, h = col.count;
  while (l < h) { const m = (l + h) >>> 1; if (off[m] + shift < fromOffset) l = m + 1; else h = m; }
  lo = l;
  l = lo; h = col.count;
  while (l < h) { const m = (l + h) >>> 1; if (off[m] + shift <= toOffset) l = m + 1; else h = m; }
  hi = l;
  return [lo, hi];
}

/** The union of several columns' timestamps in [fromOffset, toOffset] relative to base, ascending and unique. */
export function unionOffsets(columns: readonly PointColumns[], base: bigint, fromOffset: number, toOffset: number): Float64Array {
  let acc = new Float64Array(0);
  let accCount = 0;
  for (let c = 0; c < columns.length; c++) {
    const col = columns[c];
    const shift = Number(col.tsBase - base);
    const [lo, hi] = pointRange(col, shift, fromOffset, toOffset);
    const out = new Float64Array(accCount + hi - lo);
    accCount = mergeOffsets(acc, 0, 0, accCount, col.tsOffset, shift, lo, hi, out);
    acc = out;
  }
  return acc.subarray(0, accCount);
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
