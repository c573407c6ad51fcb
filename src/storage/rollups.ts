// Rollups kept per series at fixed intervals, current as data arrives and repaired when
// late data lands. Intervals: 1 h and 1 d (see docs/decisions.md: a 1 min
// row per 1 s series would cost ~1.9 bytes/point, more than the whole disk budget; 1 h
// costs ~0.03). Hourly rows are computed from raw points; daily rows are folded from the
// hourly rows of their day, so both always agree.
import { ServiceError, invalid } from '../http/errors.js';
import type { ValueType } from './encoding/chunk-types.js';
import { INT64_MIN, rollupKey, readTime, seriesKey } from './keys.js';
import { numericAt, type TimedPoints } from './point-runs.js';
import { atLeast, int64ToNumbers, offsetsFrom } from './int64-words.js';
import { collectTimed, pointAtOrAfter, pointBefore } from './range-scan.js';
import {
  BucketAccumulator, decodeDayBlock, decodeRow, emptyDayBlock, encodeDayBlock, foldHours, HOURS_PER_DAY, isEmptyDayBlock,
  type DayBlock, type RollupRow,
} from './rollup-row.js';
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

/** Key code of the day blocks (rollup-row.ts); codes 1 and 2 hold legacy 112-byte rows. */
const DAY_BLOCK_CODE = 3;

/**
 * The day blocks one write transaction touches, loaded once and stored once (flush): a
 * commit's rollup update is one get and one put per series and day. A day that still has
 * legacy rows (codes 1 and 2) is loaded from them and rewritten as a block.
 */
class DayBlocks {
  private readonly blocks = new Map<bigint, { block: DayBlock; legacy: boolean; dirty: boolean }>();
  constructor(private readonly view: ReadView, private readonly series: Buffer) {}

  get(day: bigint): DayBlock {
    let e = this.blocks.get(day);
    if (!e) {
      e = loadDay(this.view, this.series, day);
      this.blocks.set(day, e);
    }
    return e.block;
  }

  /** Marks the day changed; its day row is folded again from its hours at flush unless keepDay. */
  touch(day: bigint): void {
    this.get(day);
    this.blocks.get(day)!.dirty = true;
  }

  setHour(hourStart: bigint, row: RollupRow | null): void {
    const day = floorTo(hourStart, DAY.ns);
    this.get(day).hours[Number((hourStart - day) / HOUR.ns)] = row;
    this.touch(day);
  }

  /** Folds each touched day's row from its hours (as the hourly rows sum up exactly) and stores it. */
  flush(refold: boolean): void {
    const env = this.view.env;
    for (const [day, e] of this.blocks) {
      if (!e.dirty) continue;
      if (refold) e.block.day = foldHours(e.block.hours);
      const key = rollupKey(this.series, DAY_BLOCK_CODE, day);
      if (isEmptyDayBlock(e.block)) env.rollups.removeSync(key);
      else env.rollups.putSync(key, encodeDayBlock(e.block, day, HOUR.ns));
      if (e.legacy) removeLegacyDay(this.view, this.series, day);
      e.dirty = false; e.legacy = false;
    }
  }
}

function loadDay(view: ReadView, series: Buffer, day: bigint): { block: DayBlock; legacy: boolean; dirty: boolean } {
  const stored = view.env.rollups.get(rollupKey(series, DAY_BLOCK_CODE, day), { transaction: view.txn });
  if (stored !== undefined) return { block: decodeDayBlock(stored, day, HOUR.ns), legacy: false, dirty: false };
  const block = emptyDayBlock();
  let legacy = false;
  for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, HOUR.code, day), end: rollupKey(series, HOUR.code, day + DAY.ns), transaction: view.txn })) {
    block.hours[Number((readTime(key, 17) - day) / HOUR.ns)] = decodeRow(value);
    legacy = true;
  }
  const dayRow = view.env.rollups.get(rollupKey(series, DAY.code, day), { transaction: view.txn });
  if (dayRow !== undefined) { block.day = decodeRow(dayRow); legacy = true; }
  return { block, legacy, dirty: false };
}

function removeLegacyDay(view: ReadView, series: Buffer, day: bigint): void {
  const keys = [...view.env.rollups.getKeys({ start: rollupKey(series, HOUR.code, day), end: rollupKey(series, HOUR.code, day + DAY.ns), transaction: view.txn })];
  for (const key of keys) view.env.rollups.removeSync(key);
  view.env.rollups.removeSync(rollupKey(series, DAY.code, day));
}

function writeRows(blocks: DayBlocks, acc: BucketAccumulator): void {
  const I = BigInt(acc.intervalNs);
  for (const [idx, row] of acc.rows()) {
    blocks.setHour(acc.base + BigInt(idx) * I, row.count === 0 && row.coveredNs === 0 ? null : row);
  }
}

/** Clears the hourly rows of [from, to) that exist (blocks and legacy rows alike). */
function clearHours(view: ReadView, blocks: DayBlocks, series: Buffer, from: bigint, to: bigint): void {
  const days = new Set<bigint>();
  for (const key of view.env.rollups.getKeys({ start: rollupKey(series, DAY_BLOCK_CODE, floorTo(from, DAY.ns)), end: rollupKey(series, DAY_BLOCK_CODE, to), transaction: view.txn })) days.add(readTime(key, 17));
  for (const key of view.env.rollups.getKeys({ start: rollupKey(series, HOUR.code, from), end: rollupKey(series, HOUR.code, to), transaction: view.txn })) days.add(floorTo(readTime(key, 17), DAY.ns));
  for (const day of days) {
    const b = blocks.get(day);
    for (let h = 0; h < HOURS_PER_DAY; h++) {
      const start = day + BigInt(h) * HOUR.ns;
      if (start >= from && start < to && b.hours[h] !== null) blocks.setHour(start, null);
    }
  }
}

/** Recomputes every rollup that points in [lo, hi] (changed, added or removed) can affect. Inside the write txn. */
export function repairRollups(view: ReadView, series: Buffer, type: ValueType, lo: bigint, hi: bigint): void {
  const pred = pointBefore(view, series, lo);
  const succ = pointAtOrAfter(view, series, hi + 1n);
  const from = floorTo(pred ? pred.ts : lo, HOUR.ns);
  const to = floorTo(succ ? succ.ts : hi, HOUR.ns) + HOUR.ns;
  const blocks = new DayBlocks(view, series);
  for (let w0 = from; w0 < to; w0 += WINDOW_NS) {
    const w1 = w0 + WINDOW_NS < to ? w0 + WINDOW_NS : to;
    clearHours(view, blocks, series, w0, w1);
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
    writeRows(blocks, acc);
  }
  // every day touching [from, to) is folded again, as before day blocks (foldDays)
  for (let d = floorTo(from, DAY.ns); d <= to - 1n; d += DAY.ns) blocks.touch(d);
  blocks.flush(true);
}

/**
 * Drops the rollup buckets that end before `cutoffNs` (lifecycle): hourly rows and day rows
 * alike; a day row stays while its day reaches the cutoff, even when some of its hours go.
 * Returns the number of buckets dropped.
 */
export function trimRollups(view: ReadView, series: Buffer, cutoffNs: bigint): number {
  let dropped = 0;
  for (const { code, ns } of [HOUR, DAY]) {
    const keys = [...view.env.rollups.getKeys({ start: rollupKey(series, code, INT64_MIN), end: rollupKey(series, code, cutoffNs - ns + 1n), transaction: view.txn })];
    for (const key of keys) { view.env.rollups.removeSync(key); dropped++; }
  }
  const blocks = new DayBlocks(view, series);
  const days = [...view.env.rollups.getKeys({ start: rollupKey(series, DAY_BLOCK_CODE, INT64_MIN), end: rollupKey(series, DAY_BLOCK_CODE, cutoffNs - HOUR.ns + 1n), transaction: view.txn })].map((k) => readTime(k, 17));
  for (const day of days) {
    const b = blocks.get(day);
    for (let h = 0; h < HOURS_PER_DAY; h++) {
      const start = day + BigInt(h) * HOUR.ns;
      if (b.hours[h] !== null && start + HOUR.ns <= cutoffNs) { b.hours[h] = null; dropped++; }
    }
    if (b.day !== null && day + DAY.ns <= cutoffNs) { b.day = null; dropped++; }
    blocks.touch(day);
  }
  blocks.flush(false);
  return dropped;
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
  const blocks = new DayBlocks(view, series);
  let seeded: RollupRow | null = null;
  if (prevTs !== null) {
    seeded = blocks.get(floorTo(base, DAY.ns)).hours[Number((base - floorTo(base, DAY.ns)) / HOUR.ns)];
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
  writeRows(blocks, acc);
  blocks.flush(true);
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

/**
 * Stored buckets of `interval` whose start lies in [from, end), in time order, at most
 * `limit`: from the day blocks, merged with any legacy rows of days not rewritten since.
 */
function storedRows(view: ReadView, series: Buffer, interval: RollupInterval, from: bigint, end: bigint, limit: number): { start: bigint; row: RollupRow }[] {
  const iv = ROLLUP_INTERVALS[interval];
  const rows: { start: bigint; row: RollupRow }[] = [];
  for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, DAY_BLOCK_CODE, floorTo(from, DAY.ns)), end: rollupKey(series, DAY_BLOCK_CODE, end), transaction: view.txn })) {
    const day = readTime(key, 17);
    const b = decodeDayBlock(value, day, HOUR.ns);
    if (interval === '1d') {
      if (b.day !== null && day >= from) rows.push({ start: day, row: b.day });
    } else {
      for (let h = 0; h < HOURS_PER_DAY; h++) {
        const start = day + BigInt(h) * HOUR.ns, row = b.hours[h];
        if (row !== null && start >= from && start < end) rows.push({ start, row });
      }
    }
    if (rows.length >= limit) break;
  }
  let legacy = false;
  for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, iv.code, from), end: rollupKey(series, iv.code, end), limit, transaction: view.txn })) {
    rows.push({ start: readTime(key, 17), row: decodeRow(value) });
    legacy = true;
  }
  if (legacy) rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return rows.length > limit ? rows.slice(0, limit) : rows;
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
  const rows = storedRows(view, series, q.interval, floorTo(q.startNs, iv.ns), q.endNs, limit);
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
