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
 * The union of the inputs' timestamps in [startNs, endNs), ascending and unique, as offsets
 * from startNs. Merges the already sorted columns (k-way, k small), so it costs one pass.
 */
export function unionGrid(columns: readonly PointColumns[], startNs: bigint, endNs: bigint): EvaluationGrid {
  checkSpan(startNs, endNs);
  const span = Number(endNs - startNs);
  const k = columns.length;
  const cursor = new Int32Array(k);
  const shift = new Float64Array(k);
  let total = 0;
  for (let c = 0; c < k; c++) {
    const col = columns[c];
    shift[c] = Number(col.tsBase - startNs);
    // Skip the look-back points before the range.
    let i = 0;
    while (i < col.count && col.tsOffset[i] + shift[c] < 0) i++;
    cursor[c] = i;
    total += col.count - i;
  }
  const out = new Float64Array(total);
  let n = 0;
  for (;;) {
    let best = Infinity;
    for (let c = 0; c < k; c++) {
      const col = columns[c];
      const i = cursor[c];
      if (i < col.count) {
        const t = col.tsOffset[i] + shift[c];
        if (t < best) best = t;
      }
    }
    if (best >= span) break;
    out[n++] = best;
    for (let c = 0; c < k; c++) {
      const col = columns[c];
      const i = cursor[c];
      if (i < col.count && col.tsOffset[i] + shift[c] === best) cursor[c] = i + 1;
    }
  }
  return { tsBase: startNs, tsOffset: out.subarray(0, n), count: n };
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
