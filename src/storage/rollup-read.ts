// Reading rollup buckets: the stored hour rows (day blocks, plus legacy rows of days not
// rewritten since) and the buckets that hold no point, which are not stored. A bucket with
// no point between two stored rows that hold points lies inside one segment: from the last
// point of the row before (last, lastTs, lastQuality) to the first point of the row after
// (first, firstTs), so it is synthesized from those two rows, exactly as the writer would
// have accumulated it. Day rows are the fold of their 24 hours in hour order (stored and
// synthesized alike), unless a day row is stored explicitly (its hours were trimmed).
import { INT64_MAX, INT64_MIN, rollupKey, readTime } from './keys.js';
import { decodeDayBlock, decodeRow, emptyRow, GOOD_QUALITY, HOURS_PER_DAY, mergeRow, type RollupRow } from './rollup-row.js';
import { readFoldedDay } from './rollup-block.js';
import type { ReadView } from './series-env.js';

export const HOUR_NS = 3_600_000_000_000n;
export const DAY_NS = 86_400_000_000_000n;
/** Key codes: 1 legacy hour rows, 2 legacy day rows, 3 day blocks (rollup-row.ts). */
export const LEGACY_HOUR_CODE = 1, LEGACY_DAY_CODE = 2, DAY_BLOCK_CODE = 3;

export interface Bucket { start: bigint; row: RollupRow }
/** A bucket of either width: a day (from a version-3 block's stored fold) or an hour. */
export interface SpanBucket extends Bucket { ns: bigint }

export function floorTo(t: bigint, step: bigint): bigint {
  const m = t % step;
  return m < 0n ? t - m - step : t - m;
}

/**
 * The piece [start, end) of the segment from the last point of `left` to the first point
 * of `right`, as a bucket with no point. Same arithmetic as BucketAccumulator.addSegment
 * (times as exact differences), so a synthesized bucket equals the one the writer stored
 * before buckets without points stopped being stored.
 */
export function gapRow(left: RollupRow, right: RollupRow, start: bigint, end: bigint): RollupRow {
  const r = emptyRow();
  const t0 = left.lastTs, t1 = right.firstTs;
  const a = start > t0 ? start : t0, b = end < t1 ? end : t1;
  if (b <= a) return r;
  const dur = Number(b - a), v0 = left.last, v1 = right.first;
  // strings have no numeric view: their buckets keep quality time only
  if (!Number.isNaN(v0) && !Number.isNaN(v1)) {
    const slope = (v1 - v0) / Number(t1 - t0);
    r.areaStepped += v0 * dur;
    r.areaLinear += (v0 + slope * Number(a - t0) + v0 + slope * Number(b - t0)) * 0.5 * dur;
  }
  r.coveredNs += dur;
  if (left.lastQuality >= GOOD_QUALITY) r.goodNs += dur;
  return r;
}

/** Stored hour rows around a range, and the explicit day rows of its days. */
interface StoredHours {
  /** Stored hour rows whose start lies in [from, end), in time order (at most `limit`). */
  hours: Bucket[];
  /** The last stored hour row before `from` and the first at or after `end` (gap edges). */
  before: Bucket | null;
  after: Bucket | null;
  /** Day rows stored as such: a block's explicit day row (hours trimmed) or a legacy day row. */
  days: Map<bigint, RollupRow>;
}

function blockRange(view: ReadView, series: Buffer, start: bigint, end: bigint, reverse: boolean, limit?: number) {
  return reverse
    ? view.env.rollups.getRange({ start: rollupKey(series, DAY_BLOCK_CODE, end), end: rollupKey(series, DAY_BLOCK_CODE, start), reverse: true, limit, transaction: view.txn })
    : view.env.rollups.getRange({ start: rollupKey(series, DAY_BLOCK_CODE, start), end: rollupKey(series, DAY_BLOCK_CODE, end), limit, transaction: view.txn });
}

/** The last (or first) stored hour row of the nearest block and legacy row strictly before `t` (or at or after it). */
function nearestHour(view: ReadView, series: Buffer, t: bigint, before: boolean, legacyRows: boolean): Bucket | null {
  let best: Bucket | null = null;
  const better = (b: Bucket) => { if (best === null || (before ? b.start > best.start : b.start < best.start)) best = b; };
  // a few blocks: one holding only an explicit day row (its hours trimmed) has no hour to give
  const lim = 8;
  const edge = floorTo(t, DAY_NS);
  const range = before ? blockRange(view, series, INT64_MIN, edge + 1n, true, lim) : blockRange(view, series, edge, INT64_MAX, false, lim);
  for (const { key, value } of range) {
    const day = readTime(key, 17);
    const b = decodeDayBlock(value, day, HOUR_NS);
    for (let i = 0; i < HOURS_PER_DAY; i++) {
      const h = before ? HOURS_PER_DAY - 1 - i : i;
      const start = day + BigInt(h) * HOUR_NS, row = b.hours[h];
      if (row !== null && (before ? start < t : start >= t)) { better({ start, row }); break; }
    }
    if (best !== null) break;
  }
  if (!legacyRows) return best;
  const legacy = before
    ? view.env.rollups.getRange({ start: rollupKey(series, LEGACY_HOUR_CODE, t - 1n), end: rollupKey(series, LEGACY_HOUR_CODE, INT64_MIN), reverse: true, limit: 1, transaction: view.txn })
    : view.env.rollups.getRange({ start: rollupKey(series, LEGACY_HOUR_CODE, t), end: rollupKey(series, LEGACY_HOUR_CODE, INT64_MAX), limit: 1, transaction: view.txn });
  for (const { key, value } of legacy) better({ start: readTime(key, 17), row: decodeRow(value) });
  return best;
}

/** Whether the series still has rows in the legacy one-row-per-bucket form (codes 1 and 2). */
function hasLegacyRows(view: ReadView, series: Buffer): boolean {
  for (const _ of view.env.rollups.getKeys({ start: rollupKey(series, LEGACY_HOUR_CODE, INT64_MIN), end: rollupKey(series, DAY_BLOCK_CODE, INT64_MIN), limit: 1, transaction: view.txn })) return true;
  return false;
}

function loadStored(view: ReadView, series: Buffer, from: bigint, end: bigint, limit: number, wantDays: boolean): StoredHours {
  const legacyRows = hasLegacyRows(view, series);
  const hours: Bucket[] = [];
  const days = new Map<bigint, RollupRow>();
  // the blocks of the range, read on past its end for the first stored hour after it when
  // the range does not end with a stored row (a gap edge); lazily: no block past it otherwise
  let blockAfter: Bucket | null = null, pastEnd = 0;
  for (const { key, value } of blockRange(view, series, floorTo(from, DAY_NS), INT64_MAX, false)) {
    const day = readTime(key, 17);
    if (day >= end) {
      const last = hours.length > 0 ? hours[hours.length - 1].start : null;
      if (blockAfter !== null || hours.length >= limit || (last !== null && last + HOUR_NS >= end) || ++pastEnd > 8) break;
    }
    const b = decodeDayBlock(value, day, HOUR_NS);
    if (b.day !== null && day < end) days.set(day, b.day);
    for (let h = 0; h < HOURS_PER_DAY; h++) {
      const start = day + BigInt(h) * HOUR_NS, row = b.hours[h];
      if (row === null || start < from) continue;
      if (start < end) hours.push({ start, row });
      else if (blockAfter === null) blockAfter = { start, row };
    }
    if (hours.length >= limit || blockAfter !== null) break;
  }
  if (legacyRows) {
    for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, LEGACY_HOUR_CODE, from), end: rollupKey(series, LEGACY_HOUR_CODE, end), limit, transaction: view.txn })) {
      hours.push({ start: readTime(key, 17), row: decodeRow(value) });
    }
    hours.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    if (wantDays) {
      for (const { key, value } of view.env.rollups.getRange({ start: rollupKey(series, LEGACY_DAY_CODE, floorTo(from, DAY_NS)), end: rollupKey(series, LEGACY_DAY_CODE, end), transaction: view.txn })) {
        const day = readTime(key, 17);
        if (!days.has(day)) days.set(day, decodeRow(value));
      }
    }
  }
  if (hours.length > limit) hours.length = limit;
  // gap edges: only looked up when the range does not start (end) with a stored row
  const first = hours.length > 0 ? hours[0].start : null, last = hours.length > 0 ? hours[hours.length - 1].start : null;
  const before = first === from ? null : nearestHour(view, series, from, true, legacyRows);
  let after: Bucket | null = null;
  if (!(hours.length >= limit || (last !== null && last + HOUR_NS >= end))) {
    after = legacyRows ? nearestHour(view, series, end, false, true) : blockAfter;
  }
  return { hours, before, after, days };
}

/** Whether the hours between two stored rows lie inside one segment (both rows hold points). */
const spans = (a: Bucket | null, b: Bucket | null): a is Bucket => a !== null && b !== null && a.row.count > 0 && b.row.count > 0;

/**
 * Hour buckets whose start lies in [from, end) (from hour-aligned), stored and synthesized,
 * in time order, at most `limit`; `days` gets the explicit day rows of the days read.
 */
export function hourBuckets(view: ReadView, series: Buffer, from: bigint, end: bigint, limit: number, days?: Map<bigint, RollupRow>): Bucket[] {
  const s = loadStored(view, series, from, end, limit, days !== undefined);
  if (days) for (const [d, r] of s.days) days.set(d, r);
  const out: Bucket[] = [];
  let prev = s.before;
  const fill = (next: Bucket | null) => {
    if (!spans(prev, next)) return;
    let t = prev.start + HOUR_NS;
    if (t < from) t = from;
    const stop = next!.start < end ? next!.start : end;
    for (; t < stop && out.length < limit; t += HOUR_NS) out.push({ start: t, row: gapRow(prev.row, next!.row, t, t + HOUR_NS) });
  };
  for (const b of s.hours) {
    fill(b);
    if (out.length >= limit) return out;
    out.push(b);
    prev = b;
  }
  if (out.length < limit) fill(s.after);
  return out;
}

/** Day buckets whose start lies in [from, end) (from day-aligned): explicit day rows, else the fold of the day's hours. */
export function dayBuckets(view: ReadView, series: Buffer, from: bigint, end: bigint, limit: number): Bucket[] {
  const explicit = new Map<bigint, RollupRow>();
  const dayEnd = floorTo(end - 1n, DAY_NS) + DAY_NS;
  // every hour of the days asked for: at most 24 per day (the limit bounds days, not hours)
  const hours = hourBuckets(view, series, from, dayEnd, limit * HOURS_PER_DAY, explicit);
  const folded = new Map<bigint, RollupRow>();
  for (const { start, row } of hours) {
    const day = floorTo(start, DAY_NS);
    if (explicit.has(day)) continue;
    let d = folded.get(day);
    if (!d) { d = emptyRow(); folded.set(day, d); }
    mergeRow(d, row);
  }
  const out: Bucket[] = [];
  for (const [start, row] of explicit) if (start >= from && start < end) out.push({ start, row });
  for (const [start, row] of folded) out.push({ start, row });
  out.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return out.length > limit ? out.slice(0, limit) : out;
}

/**
 * The hours without points from `t` (hour-aligned) up to the next stored row, when `t` lies
 * inside a segment between two stored rows that hold points (else none).
 */
export function gapHoursFrom(view: ReadView, series: Buffer, t: bigint): Bucket[] {
  const legacyRows = hasLegacyRows(view, series);
  const before = nearestHour(view, series, t, true, legacyRows), after = nearestHour(view, series, t, false, legacyRows);
  if (!spans(before, after)) return [];
  const out: Bucket[] = [];
  for (let s = t; s < after!.start; s += HOUR_NS) out.push({ start: s, row: gapRow(before.row, after!.row, s, s + HOUR_NS) });
  return out;
}

/**
 * The buckets covering [from, to) (hour-aligned), in time order: the days wholly inside it
 * that `dayFits` accepts and whose block stores its day row (version 3: all 24 hours hold
 * points, so the row equals the fold dayBuckets derives), read without decoding their hours;
 * hour buckets (stored and synthesized, as hourBuckets) everywhere else. A day of an older
 * block, or one with hours without points, is answered by its hours: the same sums.
 */
export function coverBuckets(view: ReadView, series: Buffer, from: bigint, to: bigint, dayFits: (day: bigint) => boolean): SpanBucket[] {
  const days: Bucket[] = [];
  const firstDay = floorTo(from + DAY_NS - 1n, DAY_NS);
  if (firstDay + DAY_NS <= to) {
    for (const { key, value } of blockRange(view, series, firstDay, to, false)) {
      const day = readTime(key, 17);
      if (day + DAY_NS > to || !dayFits(day)) continue;
      const row = readFoldedDay(value, day, HOUR_NS);
      if (row !== null) days.push({ start: day, row });
    }
  }
  const out: SpanBucket[] = [];
  const hours = (a: bigint, b: bigint) => {
    if (b <= a) return;
    for (const h of hourBuckets(view, series, a, b, Number((b - a) / HOUR_NS) + 1)) out.push({ start: h.start, row: h.row, ns: HOUR_NS });
  };
  let at = from;
  for (const d of days) {
    hours(at, d.start);
    out.push({ start: d.start, row: d.row, ns: DAY_NS });
    at = d.start + DAY_NS;
  }
  hours(at, to);
  return out;
}
