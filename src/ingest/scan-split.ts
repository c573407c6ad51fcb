// A scan (DataBatch.streams: one message with the points of many streams, as a collector
// reads 10,000 tags once a second) as the write path's batches, one per series. The write
// path, the commit feed and the refusals all work per series; only the wire and the ack
// slot are per scan.
import type { PointBatch } from '../storage/series-store.js';
import type { BatchColumns } from './batch-columns.js';

export interface ScanPart {
  /** The stream's index among the session's declarations. */
  stream: number;
  batch: PointBatch;
  /** The scan's index of each of the batch's points (a refusal names that index), when there are several. */
  at: Int32Array | null;
  /** The scan's index of the batch's only point, when `at` is null. */
  first: number;
}

type Values = BatchColumns['values'];

function slice(v: Values, from: number, to: number): Values {
  return Array.isArray(v) ? v.slice(from, to) : (v as Exclude<Values, string[]>).subarray(from, to);
}

/** The values column reordered: out[k] = v[perm[k]]. */
function permute(v: Values, perm: Int32Array): Values {
  const n = perm.length;
  if (Array.isArray(v)) { const out = new Array<string>(n); for (let k = 0; k < n; k++) out[k] = v[perm[k]]; return out; }
  let out: Exclude<Values, string[]>;
  if (v instanceof Float64Array) out = new Float64Array(n);
  else if (v instanceof BigInt64Array) out = new BigInt64Array(n);
  else if (v instanceof Int32Array) out = new Int32Array(n);
  else out = new Uint8Array(n);
  for (let k = 0; k < n; k++) out[k] = (v as typeof out)[perm[k]];
  return out;
}

/**
 * Splits a scan's columns by stream, each stream's points in their order, streams in the
 * order of their first point. The usual scan (every stream once) becomes views of the columns;
 * otherwise the columns are copied in stream order (a stable counting sort) and each stream
 * gets views of the copy. `count` is scratch with an entry per declared stream, all zero, and
 * is left all zero.
 */
export function splitScan(streams: Uint32Array, cols: BatchColumns, seriesOf: (stream: number) => string, count: Int32Array): ScanPart[] {
  const n = streams.length;
  const order: number[] = [];
  for (let i = 0; i < n; i++) { const s = streams[i]; if (count[s]++ === 0) order.push(s); }
  if (order.length === n) {
    const parts = new Array<ScanPart>(n);
    for (let i = 0; i < n; i++) {
      const s = streams[i];
      count[s] = 0;
      parts[i] = { stream: s, at: null, first: i, batch: { series: seriesOf(s), times: cols.times.subarray(i, i + 1), values: slice(cols.values, i, i + 1), quality: cols.quality.subarray(i, i + 1) } };
    }
    return parts;
  }
  // Each stream's first position in stream order; count[s] then walks to its end.
  let o = 0;
  for (const s of order) { const c = count[s]; count[s] = o; o += c; }
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[count[streams[i]]++] = i;
  const times = new BigInt64Array(n), quality = new Uint32Array(n);
  for (let k = 0; k < n; k++) { times[k] = cols.times[perm[k]]; quality[k] = cols.quality[perm[k]]; }
  const values = permute(cols.values, perm);
  const parts = new Array<ScanPart>(order.length);
  let start = 0;
  for (let j = 0; j < order.length; j++) {
    const s = order[j], end = count[s];
    count[s] = 0;
    parts[j] = { stream: s, at: perm.subarray(start, end), first: perm[start], batch: { series: seriesOf(s), times: times.subarray(start, end), values: slice(values, start, end), quality: quality.subarray(start, end) } };
    start = end;
  }
  return parts;
}
