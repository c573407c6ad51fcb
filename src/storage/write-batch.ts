// The write path's input and its per-point validation. A batch is one series' points in
// columns; each point is either accepted into a normalised run (sorted, one point per
// time) or refused with a reason. Nothing is dropped silently: a later point at the same
// time inside one batch supersedes the earlier one, which goes to the audit like any edit.
import { invalid } from '../errors.js';
import type { SeriesMeta } from './series-meta.js';
import { INT64_MAX, INT64_MIN } from './keys.js';
import { allocTimed, copyValue, sameValue, valueAt, type Supersession, type TimedPoints } from './point-runs.js';
import { atLeast, gatherInt64, offsetsFrom } from './int64-words.js';

export interface PointBatch {
  series: string;
  /** ns since the epoch. */
  times: BigInt64Array | readonly bigint[];
  /**
   * Typed by the series: Float64Array (float64), BigInt64Array (int64), Uint8Array 0/1
   * (boolean), Int32Array ordinals (enum); or a plain array of JS values of that type
   * (number, bigint or safe integer, boolean, integer ordinal, string).
   */
  values: Float64Array | BigInt64Array | Uint8Array | Int32Array | readonly unknown[];
  /** OPC DA quality, integer 0..2^32-1. */
  quality: Uint32Array | readonly number[];
}

export type RefusalReason =
  | 'unknown-series'
  | 'wrong-type'
  | 'non-finite'
  | 'time-out-of-range'
  | 'invalid-quality'
  | 'unknown-enum-ordinal'
  /** A string with a lone UTF-16 surrogate: it has no UTF-8 form and would not round-trip. */
  | 'invalid-string'
  /** Storing the batch needs a stored chunk of its series that failed its checksum (see applyBatches). */
  | 'chunk-corrupt';

export interface Refusal {
  /** Index of the point in the batch as sent. */
  index: number;
  reason: RefusalReason;
}

export interface NormalisedBatch {
  points: TimedPoints;
  refusals: Refusal[];
  /** Earlier points of this same batch replaced by a later one at the same time. */
  superseded: Supersession[];
  /** Identical repeats inside the batch. */
  unchanged: number;
}

/** With the u flag a class of surrogates matches only unpaired ones. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function columnMatches(type: SeriesMeta['type'], values: PointBatch['values']): boolean {
  if (Array.isArray(values)) return true;
  switch (type) {
    case 'float64': return values instanceof Float64Array;
    case 'int64': return values instanceof BigInt64Array;
    case 'boolean': return values instanceof Uint8Array;
    case 'enum': return values instanceof Int32Array;
    case 'string': return false;
  }
}

export function refuseAll(count: number, reason: RefusalReason): Refusal[] {
  const out: Refusal[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = { index: i, reason };
  return out;
}

/** Structural checks; a malformed batch is a request error, not a per-point refusal. */
export function checkBatchShape(b: PointBatch, at: string): void {
  if (b === null || typeof b !== 'object') throw invalid(at, 'must be a batch object');
  const n = b.times?.length;
  if (!(b.times instanceof BigInt64Array) && !Array.isArray(b.times)) throw invalid(`${at}.times`, 'must be a BigInt64Array or an array of bigint');
  if (!(ArrayBuffer.isView(b.values) || Array.isArray(b.values))) throw invalid(`${at}.values`, 'must be a typed array or an array');
  if (!(b.quality instanceof Uint32Array) && !Array.isArray(b.quality)) throw invalid(`${at}.quality`, 'must be a Uint32Array or an array of integers');
  if (b.values.length !== n || b.quality.length !== n) throw invalid(at, `times, values and quality must have the same length (got ${n}, ${b.values.length}, ${b.quality.length})`);
}

/** Validates every point and returns the accepted ones sorted by time, one per time. */
export function normaliseBatch(b: PointBatch, meta: SeriesMeta): NormalisedBatch {
  const n = b.times.length;
  if (!columnMatches(meta.type, b.values)) return { points: allocTimed(meta.type, 0), refusals: refuseAll(n, 'wrong-type'), superseded: [], unchanged: 0 };
  if (b.times instanceof BigInt64Array && b.quality instanceof Uint32Array && !Array.isArray(b.values)) return normaliseColumns(b.times, b.values as TypedValues, b.quality, meta);
  const staged = allocTimed(meta.type, n);
  const origin = new Int32Array(n);
  const refusals: Refusal[] = [];
  const ordinals = meta.enumSet ? new Set(meta.enumSet.ordinals) : null;
  const plain = Array.isArray(b.values) ? (b.values as readonly unknown[]) : null;
  let m = 0;
  for (let i = 0; i < n; i++) {
    const t = b.times[i];
    if (typeof t !== 'bigint' || t < INT64_MIN || t > INT64_MAX) { refusals.push({ index: i, reason: 'time-out-of-range' }); continue; }
    const q = b.quality[i];
    if (!Number.isInteger(q) || q < 0 || q > 0xffffffff) { refusals.push({ index: i, reason: 'invalid-quality' }); continue; }
    const reason = plain ? stagePlain(meta, plain[i], staged, m, ordinals) : stageTyped(meta, b.values as ArrayLike<number | bigint>, i, staged, m, ordinals);
    if (reason) { refusals.push({ index: i, reason }); continue; }
    staged.ts[m] = t;
    staged.quality[m] = q;
    origin[m] = i;
    m++;
  }
  staged.count = m;
  return dedupeSorted(staged, origin, refusals);
}

type TypedValues = Float64Array | BigInt64Array | Uint8Array | Int32Array;

/**
 * The collector shape (typed times, values and quality): times and quality need no check
 * (every element is an int64 / uint32), values are checked in one plain loop, and when
 * nothing is refused the run is a view of the caller's columns, never copied or turned
 * into BigInts per point. Nothing downstream writes into a normalised run.
 */
function normaliseColumns(times: BigInt64Array, values: TypedValues, quality: Uint32Array, meta: SeriesMeta): NormalisedBatch {
  const n = times.length;
  const refusals: Refusal[] = [];
  switch (meta.type) {
    case 'float64': { const f = values as Float64Array; for (let i = 0; i < n; i++) if (!Number.isFinite(f[i])) refusals.push({ index: i, reason: 'non-finite' }); break; }
    case 'boolean': { const u = values as Uint8Array; for (let i = 0; i < n; i++) if (u[i] > 1) refusals.push({ index: i, reason: 'wrong-type' }); break; }
    case 'enum': {
      const ordinals = meta.enumSet ? new Set(meta.enumSet.ordinals) : null;
      const o = values as Int32Array;
      if (ordinals) for (let i = 0; i < n; i++) if (!ordinals.has(o[i])) refusals.push({ index: i, reason: 'unknown-enum-ordinal' });
      break;
    }
    default: break;
  }
  let pts: TimedPoints;
  let origin: Int32Array | null = null;
  if (refusals.length === 0) {
    pts = { type: meta.type, count: n, ts: times, quality, f64: null, i64: null, u8: null, ord: null, str: null };
    setColumn(pts, values);
  } else {
    const m = n - refusals.length;
    origin = new Int32Array(m);
    for (let i = 0, r = 0, j = 0; i < n; i++) {
      if (r < refusals.length && refusals[r].index === i) { r++; continue; }
      origin[j++] = i;
    }
    pts = allocTimed(meta.type, m);
    gatherInt64(times, origin, m, pts.ts);
    for (let j = 0; j < m; j++) pts.quality[j] = quality[origin[j]];
    switch (meta.type) {
      case 'float64': for (let j = 0; j < m; j++) pts.f64![j] = (values as Float64Array)[origin[j]]; break;
      case 'int64': gatherInt64(values as BigInt64Array, origin, m, pts.i64!); break;
      case 'boolean': for (let j = 0; j < m; j++) pts.u8![j] = (values as Uint8Array)[origin[j]]; break;
      case 'enum': for (let j = 0; j < m; j++) pts.ord![j] = (values as Int32Array)[origin[j]]; break;
      case 'string': break;
    }
    pts.count = m;
  }
  if (strictlyIncreasing(pts.ts, pts.count)) return { points: pts, refusals, superseded: [], unchanged: 0 };
  if (origin === null) origin = Int32Array.from({ length: n }, (_, i) => i);
  return dedupeSorted(pts, origin, refusals);
}

function setColumn(pts: TimedPoints, values: TypedValues): void {
  switch (pts.type) {
    case 'float64': pts.f64 = values as Float64Array; break;
    case 'int64': pts.i64 = values as BigInt64Array; break;
    case 'boolean': pts.u8 = values as Uint8Array; break;
    case 'enum': pts.ord = values as Int32Array; break;
    case 'string': break;
  }
}

let offsets: Float64Array = new Float64Array(4096);

/** Times strictly ascending? Compared as exact offsets from the first time; BigInt only for a batch spanning 2^52 ns. */
function strictlyIncreasing(ts: BigInt64Array, n: number): boolean {
  if (n < 2) return true;
  offsets = atLeast(offsets, n);
  if (offsetsFrom(ts, 0, n, ts[0], offsets, 0)) {
    for (let i = 1; i < n; i++) if (!(offsets[i] > offsets[i - 1])) return false;
    return true;
  }
  for (let i = 1; i < n; i++) if (ts[i] <= ts[i - 1]) return false;
  return true;
}

function stageTyped(meta: SeriesMeta, values: ArrayLike<number | bigint>, i: number, out: TimedPoints, m: number, ordinals: Set<number> | null): RefusalReason | null {
  switch (meta.type) {
    case 'float64': {
      const v = values[i] as number;
      if (!Number.isFinite(v)) return 'non-finite';
      out.f64![m] = v; return null;
    }
    case 'int64': out.i64![m] = values[i] as bigint; return null;
    case 'boolean': {
      const v = values[i] as number;
      if (v !== 0 && v !== 1) return 'wrong-type';
      out.u8![m] = v; return null;
    }
    case 'enum': {
      const v = values[i] as number;
      if (ordinals && !ordinals.has(v)) return 'unknown-enum-ordinal';
      out.ord![m] = v; return null;
    }
    case 'string': return 'wrong-type';
  }
}

function stagePlain(meta: SeriesMeta, v: unknown, out: TimedPoints, m: number, ordinals: Set<number> | null): RefusalReason | null {
  switch (meta.type) {
    case 'float64':
      if (typeof v !== 'number') return 'wrong-type';
      if (!Number.isFinite(v)) return 'non-finite';
      out.f64![m] = v; return null;
    case 'int64':
      if (typeof v === 'bigint') {
        if (v < INT64_MIN || v > INT64_MAX) return 'wrong-type';
        out.i64![m] = v; return null;
      }
      if (typeof v === 'number' && Number.isSafeInteger(v)) { out.i64![m] = BigInt(v); return null; }
      return typeof v === 'number' && !Number.isFinite(v) ? 'non-finite' : 'wrong-type';
    case 'boolean':
      if (typeof v !== 'boolean') return 'wrong-type';
      out.u8![m] = v ? 1 : 0; return null;
    case 'enum':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) return 'wrong-type';
      if (ordinals && !ordinals.has(v)) return 'unknown-enum-ordinal';
      out.ord![m] = v; return null;
    case 'string':
      if (typeof v !== 'string') return 'wrong-type';
      if (LONE_SURROGATE.test(v)) return 'invalid-string';
      out.str![m] = v; return null;
  }
}

/** Sorts by time (stable: batch order breaks ties) and keeps the last point of each time. */
function dedupeSorted(staged: TimedPoints, origin: Int32Array, refusals: Refusal[]): NormalisedBatch {
  const n = staged.count;
  let sorted = true;
  for (let i = 1; i < n; i++) if (staged.ts[i] <= staged.ts[i - 1]) { sorted = false; break; }
  if (sorted) return { points: staged, refusals, superseded: [], unchanged: 0 };
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => (staged.ts[a] < staged.ts[b] ? -1 : staged.ts[a] > staged.ts[b] ? 1 : origin[a] - origin[b]));
  const out = allocTimed(staged.type, n);
  const superseded: Supersession[] = [];
  let unchanged = 0, m = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k];
    if (m > 0 && out.ts[m - 1] === staged.ts[i]) {
      const p = m - 1;
      if (sameValue(out, p, staged, i) && out.quality[p] === staged.quality[i]) { unchanged++; continue; }
      superseded.push({ ts: staged.ts[i], oldValue: valueAt(out, p), oldQuality: out.quality[p] });
      copyValue(staged, i, out, p); out.quality[p] = staged.quality[i];
      continue;
    }
    out.ts[m] = staged.ts[i]; copyValue(staged, i, out, m); out.quality[m] = staged.quality[i]; m++;
  }
  out.count = m;
  return { points: out, refusals, superseded, unchanged };
}
