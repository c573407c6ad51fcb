// Rollups kept per series at fixed intervals, current as data arrives and repaired when
// late data lands. Intervals: 1 h and 1 d (see docs/decisions.md: a 1 min
// row per 1 s series would cost ~1.9 bytes/point, more than the whole disk budget; 1 h
// costs ~0.03). Hourly rows are computed from raw points; daily rows are folded from the
// hourly rows of their day, so both always agree.
import { ServiceError, invalid } from '../errors.js';
import type { ValueType } from './encoding/chunk-types.js';
import type { PointColumns } from './encoding/chunk-types.js';
import { INT64_MIN, rollupKey, readTime, seriesKey } from './keys.js';
import { allocColumns, numericAt, type TimedPoints } from './point-runs.js';
import { atLeast, int64ToNumbers, offsetsFrom } from './int64-words.js';
import { headOf, pointAtOrAfter, pointBefore, scanRange, type DecodedChunks, type EdgePoint, type HeadColumns } from './range-scan.js';
import {
  BucketAccumulator, decodeDayBlock, decodeRow, emptyDayBlock, encodeDayBlock, GOOD_QUALITY, HOURS_PER_DAY, isEmptyDayBlock,
  type DayBlock, type RollupRow,
} from './rollup-row.js';
import { emptyLayout, encodeLastHour, type BlockLayout } from './rollup-block.js';
import { dayBuckets, DAY_BLOCK_CODE, floorTo, gapHoursFrom, hourBuckets, type Bucket } from './rollup-read.js';
import { fastGet, sameBytes } from './fast-get.js';
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
const WINDOW_NS = 8n * DAY.ns, WINDOW = Number(WINDOW_NS);
/** A run's base within 2^52 ns of a window's: run offsets shift into the window exactly. */
const EXACT_SHIFT = 2n ** 52n;
/** Scratch for a run's times as offsets from its first bucket. */
let offsets: Float64Array = new Float64Array(4096);

export { floorTo };

/**
 * A day block as loaded into a transaction, with its key (the day block code's); a
 * remembered one also with its stored bytes and their layout (encodeLastHour). onlyHour:
 * the one hour row changed (touchHour), -1 none yet, -2 more than that.
 */
interface LoadedDay { block: DayBlock; legacy: boolean; dirty: boolean; key: Buffer; prev: Buffer | null; layout: BlockLayout | null; onlyHour: number }

/**
 * The day blocks one write transaction touches, loaded once and stored once (flush): a
 * commit's rollup update is one get and one put per series and day. A day that still has
 * legacy rows (codes 1 and 2) is loaded from them and rewritten as a block.
 */
class DayBlocks {
  private readonly blocks = new Map<bigint, LoadedDay>();
  /** remembered: loads through and stores into the writer's last blocks (appendRollups only). */
  constructor(private readonly view: ReadView, private readonly series: Buffer, private readonly remembered = false) {}

  get(day: bigint): DayBlock {
    let e = this.blocks.get(day);
    if (!e) {
      e = (this.remembered ? rememberedDay(this.view, this.series, day) : null) ?? loadDay(this.view, this.series, day);
      this.blocks.set(day, e);
    }
    return e.block;
  }

  /** Marks the day changed; its day row is folded again from its hours at flush unless keepDay. */
  touch(day: bigint): void {
    this.get(day);
    const e = this.blocks.get(day)!;
    e.dirty = true;
    e.onlyHour = -2;
  }

  /** Marks the day changed in hour `h`'s row only (so far). */
  touchHour(day: bigint, h: number): void {
    this.get(day);
    const e = this.blocks.get(day)!;
    e.onlyHour = !e.dirty || e.onlyHour === h ? h : -2;
    e.dirty = true;
  }

  setHour(hourStart: bigint, row: RollupRow | null): void {
    const day = floorTo(hourStart, DAY.ns);
    this.get(day).hours[Number((hourStart - day) / HOUR.ns)] = row;
    this.touch(day);
  }

  /**
   * Stores each touched day. refold: its day row is derived from its hours again when read
   * (an explicit day row, kept after lifecycle trimmed some hours, is dropped).
   */
  flush(refold: boolean): void {
    const env = this.view.env;
    for (const [day, e] of this.blocks) {
      if (!e.dirty) continue;
      if (refold) e.block.day = null;
      const key = e.key;
      if (isEmptyDayBlock(e.block)) env.rollups.removeSync(key);
      else {
        // the last hour's row alone changed in a remembered block: that row is written after the stored bytes before it
        const row = e.onlyHour >= 0 && e.layout !== null && e.prev !== null && e.layout.lastHour === e.onlyHour ? e.block.hours[e.onlyHour] : null;
        let bytes = row ? encodeLastHour(e.prev!, e.layout!, row, day, HOUR.ns) : null;
        let layout = e.layout;
        if (bytes === null) {
          layout = this.remembered ? emptyLayout() : null;
          bytes = encodeDayBlock(e.block, day, HOUR.ns, true, layout ?? undefined);
        }
        env.rollups.putSync(key, bytes);
        // remembered once stored: the block is then exactly what these bytes decode to
        if (this.remembered) remember(this.series, day, bytes, e.block, key, layout ?? emptyLayout());
        e.prev = bytes;
      }
      if (e.legacy) removeLegacyDay(this.view, this.series, day);
      e.dirty = false; e.legacy = false; e.onlyHour = -1;
    }
  }
}

/**
 * The ingest writer's last stored day block per series, decoded, with the bytes it was
 * stored as: the next append to that series checks the stored value against these bytes
 * (a get, no decode) and, when they match, takes the block as it is. The stored bytes are
 * the only authority: a transaction that aborted after the put, a repair, a trim or a
 * repack leave other bytes (or none), and the block is then decoded as before; so does
 * another store of this process holding the series (the bytes decide, not the store).
 * An entry's bytes are taken while its block is changed (TAKEN until stored again), so
 * that a throw half-way never leaves a block that differs from its bytes. Blocks
 * round-trip exactly (rollup-block.ts): a remembered block equals the decoded one.
 */
const lastBlocks = new Map<number, { series: Buffer; day: bigint; bytes: Buffer; block: DayBlock; key: Buffer; layout: BlockLayout }>();
/** Past this many series the map starts over (a few hundred bytes each; a miss only costs a decode). */
const LAST_BLOCKS_MAX = 16_384;
/** No stored block is this short (a block has a 7-byte head): an entry whose block is being changed. */
const TAKEN = Buffer.alloc(0);

/** The map's key: a series key's first word (random UUIDs; two series that share it take turns, each miss a decode). */
const slotOf = (series: Buffer): number => series.readUInt32LE(0);

function rememberedDay(view: ReadView, series: Buffer, day: bigint): LoadedDay | null {
  const last = lastBlocks.get(slotOf(series));
  if (last === undefined || last.day !== day || last.bytes === TAKEN || !series.equals(last.series)) return null;
  const bytes = last.bytes;
  last.bytes = TAKEN;
  // the entry's key is its (series, day)'s: made once, not twice an append
  const db = view.env.rollups, key = last.key;
  const stored = fastGet(db, key, view.txn);
  return stored !== undefined && sameBytes(stored, bytes) ? { block: last.block, legacy: false, dirty: false, key, prev: bytes, layout: last.layout, onlyHour: -1 } : null;
}

function remember(series: Buffer, day: bigint, bytes: Buffer, block: DayBlock, key: Buffer, layout: BlockLayout): void {
  const slot = slotOf(series), last = lastBlocks.get(slot);
  if (last !== undefined && last.series.equals(series)) { last.day = day; last.bytes = bytes; last.block = block; last.key = key; last.layout = layout; return; }
  if (lastBlocks.size >= LAST_BLOCKS_MAX) lastBlocks.clear();
  lastBlocks.set(slot, { series: Buffer.from(series), day, bytes, block, key, layout });
}

function loadDay(view: ReadView, series: Buffer, day: bigint): LoadedDay {
  const key = rollupKey(series, DAY_BLOCK_CODE, day);
  const stored = view.env.rollups.get(key, { transaction: view.txn });
  if (stored !== undefined) return { block: decodeDayBlock(stored, day, HOUR.ns), legacy: false, dirty: false, key, prev: null, layout: null, onlyHour: -1 };
  const block = emptyDayBlock();
  let legacy = false;
  for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, HOUR.code, day), end: rollupKey(series, HOUR.code, day + DAY.ns), transaction: view.txn })) {
    block.hours[Number((readTime(key, 17) - day) / HOUR.ns)] = decodeRow(value);
    legacy = true;
  }
  const dayRow = view.env.rollups.get(rollupKey(series, DAY.code, day), { transaction: view.txn });
  if (dayRow !== undefined) { block.day = decodeRow(dayRow); legacy = true; }
  return { block, legacy, dirty: false, key, prev: null, layout: null, onlyHour: -1 };
}

function removeLegacyDay(view: ReadView, series: Buffer, day: bigint): void {
  const keys = [...view.env.rollups.getKeys({ start: rollupKey(series, HOUR.code, day), end: rollupKey(series, HOUR.code, day + DAY.ns), transaction: view.txn })];
  for (const key of keys) view.env.rollups.removeSync(key);
  view.env.rollups.removeSync(rollupKey(series, DAY.code, day));
}

/** Stores the accumulated buckets that hold points; a bucket without one is not stored (rollup-read.ts synthesizes it). */
function writeRows(blocks: DayBlocks, acc: BucketAccumulator): void {
  const I = BigInt(acc.intervalNs);
  for (const [idx, row] of acc.rows()) {
    if (row.count > 0) blocks.setHour(acc.base + BigInt(idx) * I, row);
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

/**
 * Recomputes every rollup that points in [lo, hi] (changed, added or removed) can affect,
 * inside the write txn: the buckets from the one holding the point before lo to the one
 * holding the point after hi. Only buckets holding points are stored, so the work is the
 * points of those buckets, not the length of a gap between them (a backfill before live
 * data). `head`: the writer's in-memory head columns when it has them (range-scan.ts).
 */
export function repairRollups(view: ReadView, series: Buffer, type: ValueType, lo: bigint, hi: bigint, head?: HeadColumns): void {
  const h = headOf(view, series, head);
  const memo: DecodedChunks = new Map();
  const pred = pointBefore(view, series, lo, h, memo);
  const succ = pointAtOrAfter(view, series, hi + 1n, h, memo);
  const from = floorTo(pred ? pred.ts : lo, HOUR.ns);
  const to = floorTo(succ ? succ.ts : hi, HOUR.ns) + HOUR.ns;
  const blocks = new DayBlocks(view, series);
  clearHours(view, blocks, series, from, to);
  const w = new RepairWriter(blocks, pointBefore(view, series, from, h, memo));
  scanRange(view, series, from, to, (cols, i0, i1) => { w.addRun(cols, i0, i1); return true; }, scratchColumns(type), h, memo);
  w.finish(pointAtOrAfter(view, series, to, h, memo));
  blocks.flush(true);
}

const scratchByType = new Map<ValueType, PointColumns>();
/** Decode scratch per value type: the repair does not keep runs past their visit. */
function scratchColumns(type: ValueType): PointColumns | undefined {
  // strings decode into fresh arrays (their scratch would hold references)
  if (type === 'string') return undefined;
  let c = scratchByType.get(type);
  // a larger chunk decodes into fresh arrays (decodeColumns)
  if (!c) { c = allocColumns(type, 8192); scratchByType.set(type, c); }
  return c;
}

/**
 * Folds the points of a repair, in time order, into accumulators of at most WINDOW_NS
 * (offsets stay exact), each starting at the hour of its first point. A segment is added
 * only to the buckets of its two ends: the buckets it crosses in between hold no point.
 */
class RepairWriter {
  private acc: BucketAccumulator | null = null;
  private base = 0n;
  private readonly I = Number(HOUR.ns);
  /** The previous point: offset from base (NaN: none), value, quality; pTs: the point before the range. */
  private pOff = NaN;
  private pV = NaN;
  private pQ = 0;
  private readonly pTs: bigint | null = null;
  constructor(private readonly blocks: DayBlocks, before: EdgePoint | null) {
    if (before) { this.pTs = before.ts; this.pV = before.v; this.pQ = before.quality; }
  }

  addRun(cols: PointColumns, i0: number, i1: number): void {
    let i = i0;
    while (i < i1) {
      // offsets from this window's base as run offset + one exact shift: no BigInt per point
      const d = this.acc === null ? null : cols.tsBase - this.base;
      const shift = d !== null && d > -EXACT_SHIFT && d < EXACT_SHIFT ? Number(d) : NaN;
      if (Number.isNaN(shift) || cols.tsOffset[i] + shift >= WINDOW) {
        this.addPoint(cols.tsBase + BigInt(cols.tsOffset[i]), numericAt(cols, i), cols.quality[i]);
        i++;
        continue;
      }
      for (; i < i1; i++) {
        const off = cols.tsOffset[i] + shift;
        if (off >= WINDOW) break;
        this.addAt(off, numericAt(cols, i), cols.quality[i]);
      }
    }
  }

  /** A point at `ts`, opening a window when it lies past this one. */
  private addPoint(ts: bigint, v: number, q: number): void {
    if (this.acc === null || ts - this.base >= WINDOW_NS) this.startWindow(ts, v);
    this.addAt(Number(ts - this.base), v, q);
  }

  /** A point at offset `off` of this window, with the segment from the previous point. */
  private addAt(off: number, v: number, q: number): void {
    const acc = this.acc!, I = this.I;
    if (!Number.isNaN(this.pOff)) {
      const pIdx = Math.floor(this.pOff / I), idx = Math.floor(off / I);
      if (idx - pIdx <= 1) acc.addSegment(this.pOff, this.pV, this.pQ, off, v);
      else {
        acc.addSegment(this.pOff, this.pV, this.pQ, off, v, -Infinity, (pIdx + 1) * I);
        acc.addSegment(this.pOff, this.pV, this.pQ, off, v, idx * I, Infinity);
      }
    }
    acc.addPoint(off, v, q);
    this.pOff = off; this.pV = v; this.pQ = q;
  }

  /** Closes the window (the previous point's bucket gets its part of the segment to ts) and opens one at ts's hour. */
  private startWindow(ts: bigint, v: number): void {
    if (this.acc !== null) {
      this.tail(ts, v);
      writeRows(this.blocks, this.acc);
    }
    // the previous point's time: from its offset once a window is open, else the point before the range
    const prevTs = this.acc !== null && !Number.isNaN(this.pOff) ? this.base + BigInt(this.pOff) : this.pTs;
    this.base = floorTo(ts, HOUR.ns);
    this.acc = new BucketAccumulator(this.base, this.I);
    // the segment from the previous point: here only its part in ts's bucket (offset 0)
    this.pOff = prevTs === null ? NaN : -Number(this.base - prevTs);
  }

  private tail(ts: bigint, v: number): void {
    if (this.acc === null || Number.isNaN(this.pOff)) return;
    const I = this.I, end = (Math.floor(this.pOff / I) + 1) * I;
    this.acc.addSegment(this.pOff, this.pV, this.pQ, Number(ts - this.base), v, -Infinity, end);
  }

  /** The last point's bucket gets its part of the segment to the point after the range. */
  finish(after: EdgePoint | null): void {
    if (this.acc === null) return;
    if (after) this.tail(after.ts, after.v);
    writeRows(this.blocks, this.acc);
  }
}

/**
 * Drops the rollup buckets that end before `cutoffNs` (lifecycle): hourly rows and day rows
 * alike; a day row stays while its day reaches the cutoff, even when some of its hours go
 * (it is then stored explicitly, as it was before the trim). Hours without points after the
 * cutoff whose gap starts in a trimmed bucket are stored (count 0): the reader could no
 * longer synthesize them. Returns the number of stored buckets dropped.
 */
export function trimRollups(view: ReadView, series: Buffer, cutoffNs: bigint): number {
  const firstKept = floorTo(cutoffNs, HOUR.ns);
  // read first: the gap hours to keep and the day row of the day the cutoff falls in
  const gap = gapHoursFrom(view, series, firstKept);
  const cutDay = floorTo(cutoffNs, DAY.ns);
  // kept explicitly only when the trim takes some of that day's hours (stored or synthesized)
  const cutDayLoses = firstKept > cutDay && hourBuckets(view, series, cutDay, firstKept, 1).length > 0;
  const cutDayRow = cutDayLoses ? dayBuckets(view, series, cutDay, cutDay + DAY.ns, 1)[0] ?? null : null;
  let dropped = 0;
  for (const { code, ns } of [HOUR, DAY]) {
    const keys = [...view.env.rollups.getKeys({ start: rollupKey(series, code, INT64_MIN), end: rollupKey(series, code, cutoffNs - ns + 1n), transaction: view.txn })];
    for (const key of keys) { view.env.rollups.removeSync(key); dropped++; }
  }
  const blocks = new DayBlocks(view, series);
  const days = [...view.env.rollups.getKeys({ start: rollupKey(series, DAY_BLOCK_CODE, INT64_MIN), end: rollupKey(series, DAY_BLOCK_CODE, cutoffNs - HOUR.ns + 1n), transaction: view.txn })].map((k) => readTime(k, 17));
  for (const day of days) {
    const b = blocks.get(day);
    // a block with hours and no explicit day row has a derived one
    const hasDay = b.day !== null || b.hours.some((h) => h !== null);
    for (let h = 0; h < HOURS_PER_DAY; h++) {
      const start = day + BigInt(h) * HOUR.ns;
      if (b.hours[h] !== null && start + HOUR.ns <= cutoffNs) { b.hours[h] = null; dropped++; }
    }
    if (day + DAY.ns <= cutoffNs) { if (hasDay) dropped++; b.day = null; }
    blocks.touch(day);
  }
  if (cutDayRow !== null) { blocks.get(cutDay).day = cutDayRow.row; blocks.touch(cutDay); }
  for (const { start, row } of gap) blocks.setHour(start, row);
  blocks.flush(false);
  return dropped;
}

/**
 * Folds points appended after the series' previous last point `prevTs` (null: the series
 * was empty) into the rollups without rereading raw data. Falls back to a repair when
 * the stored bucket does not end at prevTs (e.g. it was trimmed by lifecycle).
 */
export function appendRollups(view: ReadView, series: Buffer, type: ValueType, prevTs: bigint | null, fresh: TimedPoints, head?: HeadColumns): void {
  if (fresh.count === 0) return;
  const last = fresh.ts[fresh.count - 1];
  const base = floorTo(prevTs ?? fresh.ts[0], HOUR.ns);
  const blocks = new DayBlocks(view, series, true);
  let seeded: RollupRow | null = null;
  if (prevTs !== null) {
    seeded = blocks.get(floorTo(base, DAY.ns)).hours[Number((base - floorTo(base, DAY.ns)) / HOUR.ns)];
    if (!seeded || seeded.lastTs !== prevTs || last - base >= WINDOW_NS) {
      repairRollups(view, series, type, fresh.ts[0], last, head);
      return;
    }
  } else if (last - base >= WINDOW_NS) {
    repairRollups(view, series, type, fresh.ts[0], last, head);
    return;
  }
  if (seeded !== null && prevTs !== null && fresh.count === 1 && fresh.type !== 'string' && fresh.type !== 'int64' && last - base < HOUR.ns) {
    appendOneInHour(blocks, base, seeded, prevTs, fresh);
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

/**
 * One point after the last point of its hour's row, in that hour (a calculation output,
 * one point a second on its own series): the row is updated in place with the arithmetic
 * of BucketAccumulator.addRun for a point whose segment lies in one bucket, so the result
 * is the same to the bit, without the accumulator, its seeded copy and the rows generator
 * (about a third of the rollup work of such a write, bench/calc-write.ts). Not for int64
 * (addRun sees its values through int64ToNumbers) nor strings (no numeric view).
 */
function appendOneInHour(blocks: DayBlocks, base: bigint, row: RollupRow, prevTs: bigint, fresh: TimedPoints): void {
  const t = fresh.ts[0], x = numericAt(fresh, 0), q = fresh.quality[0];
  // exact: both lie in one hour
  const dur = Number(t - prevTs);
  const pV = row.last;
  if (dur > 0) {
    row.areaStepped += pV * dur;
    row.areaLinear += (pV + x) * 0.5 * dur;
    row.coveredNs += dur;
    if (row.lastQuality >= GOOD_QUALITY) row.goodNs += dur;
  }
  if (row.count === 0 || x < row.min) { row.min = x; row.minTs = t; }
  if (row.count === 0 || x > row.max) { row.max = x; row.maxTs = t; }
  if (row.count === 0 || t < row.firstTs) { row.first = x; row.firstTs = t; }
  if (row.count === 0 || t >= row.lastTs) { row.last = x; row.lastTs = t; row.lastQuality = q; }
  row.count++;
  const day = floorTo(base, DAY.ns);
  blocks.touchHour(day, Number((base - day) / HOUR.ns));
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

/** Buckets whose start lies in [floor(start), end): stored, and synthesized where they hold no point (rollup-read.ts). */
export function readRollups(view: ReadView, id: string, q: RollupQuery): RollupColumns {
  const iv = ROLLUP_INTERVALS[q.interval];
  if (!iv) throw invalid('interval', `must be one of ${Object.keys(ROLLUP_INTERVALS).join(', ')}`);
  if (q.continuity !== 'continuous' && q.continuity !== 'stepped') throw invalid('continuity', "must be 'continuous' or 'stepped'");
  if (q.endNs <= q.startNs) throw invalid('end_ns', 'must be greater than start_ns');
  const series = seriesKey(id);
  if (!readMeta(view, id)) throw new ServiceError('not-found', `series ${id} not found`);
  const limit = q.limit ?? 100_000;
  const from = floorTo(q.startNs, iv.ns);
  const rows: Bucket[] = q.interval === '1d' ? dayBuckets(view, series, from, q.endNs, limit) : hourBuckets(view, series, from, q.endNs, limit);
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
