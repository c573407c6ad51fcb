// Column runs of one series' points, the working form of the write path.
// Two shapes: PointColumns (the codec's: bigint base + exact Float64 ns offsets, what
// chunks and heads hold) and TimedPoints (absolute BigInt64 times: incoming batches and
// the rare general merge). Plain loops over typed arrays; nothing allocates per point
// except string values, which are strings already.
import type { PointColumns, ValueType } from './encoding/chunk-types.js';

/** Absolute-time points of one series, times ascending and unique once normalised. */
export interface TimedPoints {
  type: ValueType;
  count: number;
  ts: BigInt64Array;
  f64: Float64Array | null;
  i64: BigInt64Array | null;
  u8: Uint8Array | null;
  ord: Int32Array | null;
  str: string[] | null;
  quality: Uint32Array;
}

/**
 * The longest time span one chunk or head may cover: 2^50 ns (about 13 days). Offsets
 * inside a chunk are Float64 and exact below 2^53; staying well under that keeps every
 * shift by another chunk's base exact too.
 */
export const MAX_CHUNK_SPAN_NS = 2 ** 50;
const MAX_SPAN_BIG = BigInt(MAX_CHUNK_SPAN_NS);

/** `quality`: a column to use instead of a fresh one (an open head's shared one-quality column, open-head.ts). */
export function allocColumns(type: ValueType, capacity: number, tsBase = 0n, quality: Uint32Array = new Uint32Array(capacity)): PointColumns {
  return {
    type,
    count: 0,
    tsBase,
    tsOffset: new Float64Array(capacity),
    f64: type === 'float64' ? new Float64Array(capacity) : null,
    i64: type === 'int64' ? new BigInt64Array(capacity) : null,
    u8: type === 'boolean' ? new Uint8Array(capacity) : null,
    ord: type === 'enum' ? new Int32Array(capacity) : null,
    str: type === 'string' ? new Array<string>(capacity) : null,
    quality,
  };
}

export function allocTimed(type: ValueType, capacity: number): TimedPoints {
  return {
    type,
    count: 0,
    ts: new BigInt64Array(capacity),
    f64: type === 'float64' ? new Float64Array(capacity) : null,
    i64: type === 'int64' ? new BigInt64Array(capacity) : null,
    u8: type === 'boolean' ? new Uint8Array(capacity) : null,
    ord: type === 'enum' ? new Int32Array(capacity) : null,
    str: type === 'string' ? new Array<string>(capacity) : null,
    quality: new Uint32Array(capacity),
  };
}

type ValueColumns = Pick<PointColumns, 'type' | 'f64' | 'i64' | 'u8' | 'ord' | 'str'>;

/** Copies the value of point i of src into slot j of dst (same type). */
export function copyValue(src: ValueColumns, i: number, dst: ValueColumns, j: number): void {
  switch (src.type) {
    case 'float64': dst.f64![j] = src.f64![i]; break;
    case 'int64': dst.i64![j] = src.i64![i]; break;
    case 'boolean': dst.u8![j] = src.u8![i]; break;
    case 'enum': dst.ord![j] = src.ord![i]; break;
    case 'string': dst.str![j] = src.str![i]; break;
  }
}

/** Exact value identity: float64 compares bits (Object.is tells -0 from 0). */
export function sameValue(a: ValueColumns, i: number, b: ValueColumns, j: number): boolean {
  switch (a.type) {
    case 'float64': return Object.is(a.f64![i], b.f64![j]);
    case 'int64': return a.i64![i] === b.i64![j];
    case 'boolean': return a.u8![i] === b.u8![j];
    case 'enum': return a.ord![i] === b.ord![j];
    case 'string': return a.str![i] === b.str![j];
  }
}

/** The value as the service hands it out (bigint for int64, boolean, ordinal for enum). */
export type PointValue = number | bigint | boolean | string;

export function valueAt(c: ValueColumns, i: number): PointValue {
  switch (c.type) {
    case 'float64': return c.f64![i];
    case 'int64': return c.i64![i];
    case 'boolean': return c.u8![i] === 1;
    case 'enum': return c.ord![i];
    case 'string': return c.str![i];
  }
}

/** Numeric view used by rollups and render: int64 as nearest double, boolean 0/1, enum ordinal, string NaN. */
export function numericAt(c: ValueColumns, i: number): number {
  switch (c.type) {
    case 'float64': return c.f64![i];
    case 'int64': return Number(c.i64![i]);
    case 'boolean': return c.u8![i];
    case 'enum': return c.ord![i];
    case 'string': return NaN;
  }
}

/**
 * out[k] = numericAt(cols, i0 + k): the type is decided once per call, not per point (the
 * per-point numericAt loop cost ~150 ns a point in the read worker's profile, 2026-11-21).
 */
export function numericInto(cols: ValueColumns, i0: number, i1: number, out: Float64Array): void {
  const n = i1 - i0;
  switch (cols.type) {
    case 'float64': out.set(cols.f64!.subarray(i0, i1)); return;
    case 'int64': { const a = cols.i64!; for (let k = 0; k < n; k++) out[k] = Number(a[i0 + k]); return; }
    case 'boolean': { const a = cols.u8!; for (let k = 0; k < n; k++) out[k] = a[i0 + k]; return; }
    case 'enum': { const a = cols.ord!; for (let k = 0; k < n; k++) out[k] = a[i0 + k]; return; }
    case 'string': out.fill(NaN, 0, n); return;
  }
}

export function timeAt(c: PointColumns, i: number): bigint {
  return c.tsBase + BigInt(c.tsOffset[i]);
}

/** Absolute times of a column run (used only on the general merge path). */
export function toTimed(c: PointColumns): TimedPoints {
  const t = allocTimed(c.type, c.count);
  for (let i = 0; i < c.count; i++) {
    t.ts[i] = c.tsBase + BigInt(c.tsOffset[i]);
    copyValue(c, i, t, i);
    t.quality[i] = c.quality[i];
  }
  t.count = c.count;
  return t;
}

/** Points [from, to) of a timed run as columns based at ts[from]; caller guarantees span < MAX_CHUNK_SPAN_NS. */
export function timedToColumns(t: TimedPoints, from: number, to: number): PointColumns {
  const n = to - from;
  const base = t.ts[from];
  const c = allocColumns(t.type, n, base);
  for (let k = 0; k < n; k++) {
    c.tsOffset[k] = Number(t.ts[from + k] - base);
    copyValue(t, from + k, c, k);
    c.quality[k] = t.quality[from + k];
  }
  c.count = n;
  return c;
}

/** Points [from, to) of a column run, rebased at its own first point (exact: integer differences). */
export function sliceColumns(c: PointColumns, from: number, to: number): PointColumns {
  const n = to - from;
  const shift = c.tsOffset[from];
  const out = allocColumns(c.type, n, c.tsBase + BigInt(shift));
  for (let k = 0; k < n; k++) {
    out.tsOffset[k] = c.tsOffset[from + k] - shift;
    copyValue(c, from + k, out, k);
    out.quality[k] = c.quality[from + k];
  }
  out.count = n;
  return out;
}

/** Cuts a timed run wherever the span from a piece's first point would reach MAX_CHUNK_SPAN_NS. */
export function splitTimedBySpan(t: TimedPoints): PointColumns[] {
  const pieces: PointColumns[] = [];
  let from = 0;
  for (let i = 1; i <= t.count; i++) {
    if (i === t.count || t.ts[i] - t.ts[from] >= MAX_SPAN_BIG) {
      pieces.push(timedToColumns(t, from, i));
      from = i;
    }
  }
  return pieces;
}

/** Appends timed points (all later than c's last point, within span) to a copy of c. */
export function appendTimed(c: PointColumns, t: TimedPoints): PointColumns {
  const out = allocColumns(c.type, c.count + t.count, c.tsBase);
  out.tsOffset.set(c.tsOffset.subarray(0, c.count));
  out.quality.set(c.quality.subarray(0, c.count));
  for (let i = 0; i < c.count; i++) copyValue(c, i, out, i);
  const base = c.tsBase;
  for (let k = 0, j = c.count; k < t.count; k++, j++) {
    out.tsOffset[j] = Number(t.ts[k] - base);
    copyValue(t, k, out, j);
    out.quality[j] = t.quality[k];
  }
  out.count = c.count + t.count;
  return out;
}

/** A value replaced at an existing time, handed to the audit. */
export interface Supersession {
  ts: bigint;
  oldValue: PointValue;
  oldQuality: number;
}

export interface MergeOutcome {
  merged: TimedPoints;
  /** Incoming points that were new or replaced a different value. */
  changed: number;
  unchanged: number;
  superseded: Supersession[];
  /** Smallest and largest time whose stored point changed, null when nothing did. */
  changedLo: bigint | null;
  changedHi: bigint | null;
}

/** Merges sorted unique incoming points into sorted unique existing points; incoming wins a time tie. */
export function mergeTimed(existing: TimedPoints, incoming: TimedPoints): MergeOutcome {
  const out = allocTimed(existing.type, existing.count + incoming.count);
  const superseded: Supersession[] = [];
  let i = 0, j = 0, n = 0, changed = 0, unchanged = 0;
  let lo: bigint | null = null, hi: bigint | null = null;
  const touch = (t: bigint) => { if (lo === null || t < lo) lo = t; if (hi === null || t > hi) hi = t; };
  while (i < existing.count || j < incoming.count) {
    const takeExisting = j >= incoming.count || (i < existing.count && existing.ts[i] < incoming.ts[j]);
    if (takeExisting) {
      out.ts[n] = existing.ts[i]; copyValue(existing, i, out, n); out.quality[n] = existing.quality[i]; i++; n++;
      continue;
    }
    const t = incoming.ts[j];
    if (i < existing.count && existing.ts[i] === t) {
      if (sameValue(existing, i, incoming, j) && existing.quality[i] === incoming.quality[j]) unchanged++;
      else {
        superseded.push({ ts: t, oldValue: valueAt(existing, i), oldQuality: existing.quality[i] });
        changed++; touch(t);
      }
      i++;
    } else { changed++; touch(t); }
    out.ts[n] = t; copyValue(incoming, j, out, n); out.quality[n] = incoming.quality[j]; j++; n++;
  }
  out.count = n;
  return { merged: out, changed, unchanged, superseded, changedLo: lo, changedHi: hi };
}

/** Points [from, to) of a timed run as a new timed run. */
export function sliceTimed(t: TimedPoints, from: number, to: number): TimedPoints {
  const out = allocTimed(t.type, to - from);
  out.ts.set(t.ts.subarray(from, to));
  out.quality.set(t.quality.subarray(from, to));
  for (let k = from; k < to; k++) copyValue(t, k, out, k - from);
  out.count = to - from;
  return out;
}

/** First index with ts > t (binary search). */
export function upperBound(t: TimedPoints, value: bigint, from = 0): number {
  let lo = from, hi = t.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t.ts[mid] <= value) lo = mid + 1; else hi = mid;
  }
  return lo;
}
