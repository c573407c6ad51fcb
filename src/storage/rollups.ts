// Rollups kept per series at fixed intervals, current as data arrives and repaired when
// late data lands. Intervals: 1 h and 1 d (see docs/decisions.md: a 1 min
// row per 1 s series would cost ~1.9 bytes/point, more than the whole disk budget; 1 h
// costs ~0.03). Hourly rows are computed from raw points; daily rows are folded from the
// hourly rows of their day, so both always agree.
import { ServiceError, invalid } from '../http/errors.js';
import type { ValueType } from './encoding/chunk-types.js';
import { rollupKey, readTime, seriesKey } from './keys.js';
import { numericAt, type TimedPoints } from './point-runs.js';
import { atLeast, int64ToNumbers, offsetsFrom } from './int64-words.js';
import { collectTimed, pointAtOrAfter, pointBefore } from './range-scan.js';
import { BucketAccumulator, decodeRow, encodeRow, mergeRow, emptyRow, type RollupRow } from './rollup-row.js';
import { readMeta } from './series-meta.js';
import type { ReadView, SeriesEnv } from './series-env.js';

export const ROLLUP_INTERVALS = {
  '1h': { code: 1, ns: 3_600_000_000_000n },
  '1d': { code: 2, ns: 86_400_000_000_000n },
} as const;
export type RollupInterval = keyof typeof ROLLUP_INTERVALS;
export type Continuity = 'continuous' | 'stepped';

const HOUR = ROLLUP_INTERVALS['1h'], DAY = ROLLUP_INTERVALS['1d'];
/** Repair works in windows of 8 days so that ns offsets stay far below 2^53. */
const WINDOW_NS = 8n * DAY.ns;
/** Scratch for a run's times as offsets from its first bucket. */
let offsets: Float64Array = new Float64Array(4096);

export function floorTo(t: bigint, step: bigint): bigint {
  const m = t % step;
  return m < 0n ? t - m - step : t - m;
}

function writeRows(env: SeriesEnv, series: Buffer, acc: BucketAccumulator, code: number): void {
  const I = BigInt(acc.intervalNs);
  for (const [idx, row] of acc.rows()) {
    const key = rollupKey(series, code, acc.base + BigInt(idx) * I);
    if (row.count === 0 && row.coveredNs === 0) env.rollups.removeSync(key);
    else env.rollups.putSync(key, encodeRow(row));
  }
}

/** Recomputes daily rows for the days touching [from, to] from their hourly rows. */
function foldDays(view: ReadView, series: Buffer, from: bigint, to: bigint): void {
  for (let d = floorTo(from, DAY.ns); d <= to; d += DAY.ns) {
    const day = emptyRow();
    let any = false;
    for (const { value } of view.env.rollups.getRange({ start: rollupKey(series, HOUR.code, d), end: rollupKey(series, HOUR.code, d + DAY.ns), transaction: view.txn })) {
      mergeRow(day, decodeRow(value)); any = true;
    }
    const key = rollupKey(series, DAY.code, d);
    if (any) view.env.rollups.putSync(key, encodeRow(day)); else view.env.rollups.removeSync(key);
  }
}

function clearHours(view: ReadView, series: Buffer, from: bigint, to: bigint): void {
  const keys = [...view.env.rollups.getKeys({ start: rollupKey(series, HOUR.code, from), end: rollupKey(series, HOUR.code, to), transaction: view.txn })];
  for (const key of keys) {
    view.env.rollups.removeSync(key);
  }
}

/** Recomputes every rollup that points in [lo, hi] (changed, added or removed) can affect. Inside the write txn. */
export function repairRollups(view: ReadView, series: Buffer, type: ValueType, lo: bigint, hi: bigint): void {
  const pred = pointBefore(view, series, lo);
  const succ = pointAtOrAfter(view, series, hi + 1n);
  const from = floorTo(pred ? pred.ts : lo, HOUR.ns);
  const to = floorTo(succ ? succ.ts : hi, HOUR.ns) + HOUR.ns;
  for (let w0 = from; w0 < to; w0 += WINDOW_NS) {
    const w1 = w0 + WINDOW_NS < to ? w0 + WINDOW_NS : to;
    clearHours(view, series, w0, w1);
    const pts = collectTimed(view, series, type, w0, w1);
    const before = pointBefore(view, series, w0);
    const after = pointAtOrAfter(view, series, w1);
    const acc = new BucketAccumulator(w0, Number(HOUR.ns));
    const span = Number(w1 - w0);
    let pOff = before ? -Number(w0 - before.ts) : NaN, pV = before ? before.v : NaN, pQ = before ? before.quality : 0;
    for (let i = 0; i < pts.count; i++) {
      const off = Number(pts.ts[i] - w0), v = numericAt(pts, i);
      if (!Number.isNaN(pOff)) acc.addSegment(pOff, pV, pQ, off, v, 0, span);
      acc.addPoint(off, v, pts.quality[i]);
      pOff = off; pV = v; pQ = pts.quality[i];
    }
    if (after && !Number.isNaN(pOff)) acc.addSegment(pOff, pV, pQ, Number(after.ts - w0), after.v, 0, span);
    writeRows(view.env, series, acc, HOUR.code);
  }
  foldDays(view, series, from, to - 1n);
}

/**
 * Folds points appended after the series' previous last point `prevTs` (null: the series
 * was empty) into the rollups without rereading raw data. Falls back to a repair when
 * the stored bucket does not end at prevTs (e.g. it was trimmed by lifecycle).
 */
export function appendRollups(view: ReadView, series: Buffer, type: ValueType, prevTs: bigint | null, fresh: TimedPoints): void {
  if (fresh.count === 0) return;
  const last = fresh.ts[fresh.count - 1];
  const base = floorTo(prevTs ?? fresh.ts[0], HOUR.ns);
  let seeded: RollupRow | null = null;
  if (prevTs !== null) {
    const stored = view.env.rollups.get(rollupKey(series, HOUR.code, base), { transaction: view.txn });
    seeded = stored ? decodeRow(stored) : null;
    if (!seeded || seeded.lastTs !== prevTs || last - base >= WINDOW_NS) {
      repairRollups(view, series, type, fresh.ts[0], last);
      return;
    }
  } else if (last - base >= WINDOW_NS) {
    repairRollups(view, series, type, fresh.ts[0], last);
    return;
  }
  const acc = new BucketAccumulator(base, Number(HOUR.ns));
  let pOff = NaN, pV = NaN, pQ = 0;
  if (seeded && prevTs !== null) {
    acc.seed(0, seeded);
    pOff = Number(prevTs - base); pV = seeded.last; pQ = seeded.lastQuality;
  }
  // exact: the run lies within WINDOW_NS (8 days) of base, checked above
  offsets = atLeast(offsets, fresh.count);
  if (!offsetsFrom(fresh.ts, 0, fresh.count, base, offsets, 0)) throw new Error('BUG: rollup append beyond the exact span');
  const numbers = numericColumn(fresh);
  if (numbers) acc.addRun(offsets, numbers, fresh.quality, fresh.count, pOff, pV, pQ);
  else {
    for (let i = 0; i < fresh.count; i++) {
      const off = offsets[i], v = numericAt(fresh, i);
      if (!Number.isNaN(pOff)) acc.addSegment(pOff, pV, pQ, off, v);
      acc.addPoint(off, v, fresh.quality[i]);
      pOff = off; pV = v; pQ = fresh.quality[i];
    }
  }
  writeRows(view.env, series, acc, HOUR.code);
  foldDays(view, series, base, last);
}

let numbersScratch: Float64Array = new Float64Array(4096);

/** The numeric view of a run's values as one column (no BigInt per point for int64); null for strings. */
function numericColumn(t: TimedPoints): Float64Array | null {
  switch (t.type) {
    case 'float64': return t.f64;
    case 'string': return null;
    case 'int64': numbersScratch = atLeast(numbersScratch, t.count); int64ToNumbers(t.i64!, t.count, numbersScratch); return numbersScratch;
    case 'boolean': case 'enum': {
      numbersScratch = atLeast(numbersScratch, t.count);
      const src = t.type === 'boolean' ? t.u8! : t.ord!;
      for (let i = 0; i < t.count; i++) numbersScratch[i] = src[i];
      return numbersScratch;
    }
  }
}

/** Rollup buckets as columns; NaN where a statistic is undefined (no points, no covered time). */
export interface RollupColumns {
  interval: RollupInterval;
  count: number;
  bucketStartNs: BigInt64Array;
  points: Float64Array;
  min: Float64Array; max: Float64Array; first: Float64Array; last: Float64Array;
  twa: Float64Array;
  /** Percent (0..100) of covered time whose segment starts at a good-quality point. */
  percentGood: Float64Array;
  coveredNs: Float64Array;
}

export interface RollupQuery {
  interval: RollupInterval;
  startNs: bigint;
  endNs: bigint;
  continuity: Continuity;
  /** At most this many buckets (default 100,000). */
  limit?: number;
}

/** Buckets whose start lies in [floor(start), end). */
export function readRollups(view: ReadView, id: string, q: RollupQuery): RollupColumns {
  const iv = ROLLUP_INTERVALS[q.interval];
  if (!iv) throw invalid('interval', `must be one of ${Object.keys(ROLLUP_INTERVALS).join(', ')}`);
  if (q.continuity !== 'continuous' && q.continuity !== 'stepped') throw invalid('continuity', "must be 'continuous' or 'stepped'");
  if (q.endNs <= q.startNs) throw invalid('end_ns', 'must be greater than start_ns');
  const series = seriesKey(id);
  if (!readMeta(view, id)) throw new ServiceError('not-found', `series ${id} not found`);
  const limit = q.limit ?? 100_000;
  const rows: { start: bigint; row: RollupRow }[] = [];
  for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, iv.code, floorTo(q.startNs, iv.ns)), end: rollupKey(series, iv.code, q.endNs), limit, transaction: view.txn })) {
    rows.push({ start: readTime(key, 17), row: decodeRow(value) });
  }
  const n = rows.length;
  const out: RollupColumns = {
    interval: q.interval, count: n, bucketStartNs: new BigInt64Array(n), points: new Float64Array(n),
    min: new Float64Array(n), max: new Float64Array(n), first: new Float64Array(n), last: new Float64Array(n),
    twa: new Float64Array(n), percentGood: new Float64Array(n), coveredNs: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const { start, row } = rows[i];
    out.bucketStartNs[i] = start;
    out.points[i] = row.count;
    out.min[i] = row.count ? row.min : NaN; out.max[i] = row.count ? row.max : NaN;
    out.first[i] = row.count ? row.first : NaN; out.last[i] = row.count ? row.last : NaN;
    const area = q.continuity === 'stepped' ? row.areaStepped : row.areaLinear;
    out.twa[i] = row.coveredNs > 0 ? area / row.coveredNs : NaN;
    out.percentGood[i] = row.coveredNs > 0 ? (100 * row.goodNs) / row.coveredNs : NaN;
    out.coveredNs[i] = row.coveredNs;
  }
  return out;
}
