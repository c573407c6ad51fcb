// One rollup bucket of one series at one interval, and how buckets are accumulated.
// The signal between consecutive points p_i, p_{i+1} is a segment [t_i, t_{i+1}):
// 'stepped' holds v_i, 'continuous' interpolates linearly. Every bucket keeps both areas
// so the reader picks the continuity at read time. A segment crossing a bucket boundary
// is split at it, so hourly buckets add up exactly to daily ones. Time is covered only
// between the first and the last point of the series; a bucket a long segment crosses
// without any point in it has count 0 and covered time. Such buckets are not stored (a
// backfill into a long gap would otherwise rewrite every bucket of the gap): readers
// synthesize them from the stored rows on either side (rollup-read.ts).
//
// Stored as day blocks (encodeDayBlock below): one LMDB value per series and UTC day holds
// the day row and the day's hourly rows, each row in a compact variable-length form.
// Legacy row (112 bytes, little-endian; still read, no longer written):
//   0 count f64 | 8 min | 16 max | 24 first | 32 last (f64 numeric view)
//   40 minTs | 48 maxTs | 56 firstTs | 64 lastTs (int64) | 72 lastQuality f64
//   80 areaStepped | 88 areaLinear (value x ns) | 96 coveredNs | 104 goodNs (f64)
export interface RollupRow {
  count: number;
  min: number; max: number; first: number; last: number;
  minTs: bigint; maxTs: bigint; firstTs: bigint; lastTs: bigint;
  lastQuality: number;
  areaStepped: number; areaLinear: number; coveredNs: number; goodNs: number;
}

export const ROW_BYTES = 112;
export const GOOD_QUALITY = 192;

export function emptyRow(): RollupRow {
  return { count: 0, min: NaN, max: NaN, first: NaN, last: NaN, minTs: 0n, maxTs: 0n, firstTs: 0n, lastTs: 0n, lastQuality: 0, areaStepped: 0, areaLinear: 0, coveredNs: 0, goodNs: 0 };
}

export function encodeRow(r: RollupRow): Buffer {
  const b = Buffer.allocUnsafe(ROW_BYTES);
  b.writeDoubleLE(r.count, 0); b.writeDoubleLE(r.min, 8); b.writeDoubleLE(r.max, 16); b.writeDoubleLE(r.first, 24); b.writeDoubleLE(r.last, 32);
  b.writeBigInt64LE(r.minTs, 40); b.writeBigInt64LE(r.maxTs, 48); b.writeBigInt64LE(r.firstTs, 56); b.writeBigInt64LE(r.lastTs, 64);
  b.writeDoubleLE(r.lastQuality, 72); b.writeDoubleLE(r.areaStepped, 80); b.writeDoubleLE(r.areaLinear, 88); b.writeDoubleLE(r.coveredNs, 96); b.writeDoubleLE(r.goodNs, 104);
  return b;
}

export function decodeRow(b: Buffer): RollupRow {
  return {
    count: b.readDoubleLE(0), min: b.readDoubleLE(8), max: b.readDoubleLE(16), first: b.readDoubleLE(24), last: b.readDoubleLE(32),
    minTs: b.readBigInt64LE(40), maxTs: b.readBigInt64LE(48), firstTs: b.readBigInt64LE(56), lastTs: b.readBigInt64LE(64),
    lastQuality: b.readDoubleLE(72), areaStepped: b.readDoubleLE(80), areaLinear: b.readDoubleLE(88), coveredNs: b.readDoubleLE(96), goodNs: b.readDoubleLE(104),
  };
}

/** Folds row b (a later or equal bucket, or a sub-bucket) into a. */
export function mergeRow(a: RollupRow, b: RollupRow): void {
  if (b.count > 0) {
    if (a.count === 0 || b.min < a.min) { a.min = b.min; a.minTs = b.minTs; }
    if (a.count === 0 || b.max > a.max) { a.max = b.max; a.maxTs = b.maxTs; }
    if (a.count === 0 || b.firstTs < a.firstTs) { a.first = b.first; a.firstTs = b.firstTs; }
    if (a.count === 0 || b.lastTs > a.lastTs) { a.last = b.last; a.lastTs = b.lastTs; a.lastQuality = b.lastQuality; }
    a.count += b.count;
  }
  a.areaStepped += b.areaStepped; a.areaLinear += b.areaLinear; a.coveredNs += b.coveredNs; a.goodNs += b.goodNs;
}

/** A bucket being accumulated: like RollupRow, with times as ns offsets from the accumulator's base. */
interface AccRow {
  count: number;
  min: number; max: number; first: number; last: number;
  minOff: number; maxOff: number; firstOff: number; lastOff: number;
  lastQuality: number;
  areaStepped: number; areaLinear: number; coveredNs: number; goodNs: number;
}

function emptyAcc(): AccRow {
  return { count: 0, min: NaN, max: NaN, first: NaN, last: NaN, minOff: 0, maxOff: 0, firstOff: 0, lastOff: 0, lastQuality: 0, areaStepped: 0, areaLinear: 0, coveredNs: 0, goodNs: 0 };
}

/**
 * Accumulates points and segments into buckets of `intervalNs`, with times as exact
 * Float64 ns offsets from `base` (a bucket boundary), so the per-point work has no BigInt:
 * times become int64 again once per bucket, in rows().
 */
export class BucketAccumulator {
  private readonly acc = new Map<number, AccRow>();
  private curIndex = NaN;
  private cur: AccRow = emptyAcc();
  constructor(readonly base: bigint, readonly intervalNs: number) {}

  private row(index: number): AccRow {
    if (index === this.curIndex) return this.cur;
    let r = this.acc.get(index);
    if (!r) { r = emptyAcc(); this.acc.set(index, r); }
    this.curIndex = index; this.cur = r;
    return r;
  }

  /** Seeds a bucket with an existing stored row (incremental append). */
  seed(index: number, r: RollupRow): void {
    const b = this.base;
    const a: AccRow = {
      count: r.count, min: r.min, max: r.max, first: r.first, last: r.last,
      minOff: r.count ? Number(r.minTs - b) : 0, maxOff: r.count ? Number(r.maxTs - b) : 0,
      firstOff: r.count ? Number(r.firstTs - b) : 0, lastOff: r.count ? Number(r.lastTs - b) : 0,
      lastQuality: r.lastQuality, areaStepped: r.areaStepped, areaLinear: r.areaLinear, coveredNs: r.coveredNs, goodNs: r.goodNs,
    };
    this.acc.set(index, a);
    if (index === this.curIndex) this.cur = a;
  }

  addPoint(off: number, v: number, q: number): void {
    const r = this.row(Math.floor(off / this.intervalNs));
    if (r.count === 0 || v < r.min) { r.min = v; r.minOff = off; }
    if (r.count === 0 || v > r.max) { r.max = v; r.maxOff = off; }
    if (r.count === 0 || off < r.firstOff) { r.first = v; r.firstOff = off; }
    if (r.count === 0 || off >= r.lastOff) { r.last = v; r.lastOff = off; r.lastQuality = q; }
    r.count++;
  }

  /**
   * Points [0, n) of a sorted numeric run (offsets from base), each with the segment from
   * the previous point (pOff NaN: none). Same arithmetic as addPoint/addSegment, with the
   * common case (both ends in the current bucket) kept in this loop.
   */
  addRun(off: Float64Array, v: Float64Array, q: Uint32Array, n: number, pOff: number, pV: number, pQ: number): void {
    const I = this.intervalNs;
    let idx = Number.isNaN(pOff) ? NaN : Math.floor(pOff / I);
    let r = Number.isNaN(idx) ? this.cur : this.row(idx);
    let end = (idx + 1) * I;
    for (let i = 0; i < n; i++) {
      const t = off[i], x = v[i], qi = q[i];
      if (!Number.isNaN(pOff)) {
        if (t <= end && pOff >= idx * I) {
          const dur = t - pOff;
          if (dur > 0) {
            r.areaStepped += pV * dur;
            r.areaLinear += (pV + x) * 0.5 * dur;
            r.coveredNs += dur;
            if (pQ >= GOOD_QUALITY) r.goodNs += dur;
          }
        } else this.addSegment(pOff, pV, pQ, t, x);
      }
      const k = Math.floor(t / I);
      if (k !== idx) { idx = k; r = this.row(k); end = (k + 1) * I; }
      if (r.count === 0 || x < r.min) { r.min = x; r.minOff = t; }
      if (r.count === 0 || x > r.max) { r.max = x; r.maxOff = t; }
      if (r.count === 0 || t < r.firstOff) { r.first = x; r.firstOff = t; }
      if (r.count === 0 || t >= r.lastOff) { r.last = x; r.lastOff = t; r.lastQuality = qi; }
      r.count++;
      pOff = t; pV = x; pQ = qi;
    }
  }

  /** Adds the segment [t0, t1) starting at (t0, v0, q0) and heading to v1, clipped to [lo, hi). */
  addSegment(t0: number, v0: number, q0: number, t1: number, v1: number, lo = -Infinity, hi = Infinity): void {
    const a0 = Math.max(t0, lo), a1 = Math.min(t1, hi);
    if (!(a1 > a0)) return;
    const I = this.intervalNs, slope = (v1 - v0) / (t1 - t0), good = q0 >= GOOD_QUALITY;
    // strings have no numeric view: their buckets keep counts and quality time only
    const numeric = !Number.isNaN(v0) && !Number.isNaN(v1);
    let a = a0;
    while (a < a1) {
      const idx = Math.floor(a / I);
      const b = Math.min(a1, (idx + 1) * I);
      const dur = b - a;
      const r = this.row(idx);
      if (numeric) {
        r.areaStepped += v0 * dur;
        r.areaLinear += (v0 + slope * (a - t0) + v0 + slope * (b - t0)) * 0.5 * dur;
      }
      r.coveredNs += dur;
      if (good) r.goodNs += dur;
      a = b;
    }
  }

  /** The accumulated buckets by index from base, as stored rows. */
  *rows(): Generator<[number, RollupRow]> {
    const b = this.base;
    for (const [idx, a] of this.acc) {
      const has = a.count > 0;
      yield [idx, {
        count: a.count, min: a.min, max: a.max, first: a.first, last: a.last,
        minTs: has ? b + BigInt(a.minOff) : 0n, maxTs: has ? b + BigInt(a.maxOff) : 0n,
        firstTs: has ? b + BigInt(a.firstOff) : 0n, lastTs: has ? b + BigInt(a.lastOff) : 0n,
        lastQuality: a.lastQuality, areaStepped: a.areaStepped, areaLinear: a.areaLinear, coveredNs: a.coveredNs, goodNs: a.goodNs,
      }];
    }
  }
}

// ---- Compact rows and day blocks -------------------------------------------------------
// A row is written relative to its bucket start B, exactly (every field round-trips bit for
// bit; byte layout in src/storage/encoding/FORMAT.md, "Rollup day blocks"):
//   u8 flags
//     bit 0 stats present (count > 0, or any statistic differs from an empty row's)
//     bit 1 areaLinear omitted: bit-identical to areaStepped
//     bit 2 goodNs omitted: equal to coveredNs
//     bit 3 coveredNs and goodNs as f64 (else varints: they are whole ns, >= 0)
//     bit 4 max omitted: max and maxTs equal min and minTs
//     bit 5 goodNs omitted: 0
//     bit 6 first omitted: first and firstTs equal min and minTs
//     bit 7 last omitted: last and lastTs equal max and maxTs
//   if bit 0: varint count, f64 min, zigzag bigvarint minTs - B, [f64 max, maxTs - B],
//             [f64 first, firstTs - B], [f64 last, lastTs - B], varint lastQuality
//   f64 areaStepped, [f64 areaLinear], coveredNs, [goodNs]
// Hourly rows of a 1 s series cost ~50-70 bytes instead of 112 + an LMDB node each.

const F_STATS = 1, F_LINEAR_SAME = 2, F_GOOD_ALL = 4, F_NS_F64 = 8, F_MAX_SAME = 16, F_GOOD_ZERO = 32, F_FIRST_SAME = 64, F_LAST_SAME = 128;
export const HOURS_PER_DAY = 24;
const BLOCK_VERSION = 1;
const BLOCK_HAS_DAY = 1;
/** The day row is derived at read time (encodeDayBlock), not stored. */
const BLOCK_DAY_DERIVED = 2;

const same = (a: number, b: number): boolean => Object.is(a, b);
const wholeNs = (x: number): boolean => Number.isSafeInteger(x) && x >= 0 && !Object.is(x, -0);

class RowWriter {
  buf = Buffer.allocUnsafe(4096);
  pos = 0;
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }
  u8(x: number): void { this.room(1); this.buf[this.pos++] = x; }
  f64(x: number): void { this.room(8); this.buf.writeDoubleLE(x, this.pos); this.pos += 8; }
  varint(x: number): void {
    this.room(8);
    while (x >= 128) { this.buf[this.pos++] = (x % 128) | 128; x = Math.floor(x / 128); }
    this.buf[this.pos++] = x;
  }
  bigZigzag(x: bigint): void {
    let z = x >= 0n ? x << 1n : ((-x) << 1n) - 1n;
    this.room(11);
    while (z >= 128n) { this.buf[this.pos++] = Number(z & 127n) | 128; z >>= 7n; }
    this.buf[this.pos++] = Number(z);
  }
}

class RowReader {
  pos: number;
  constructor(private readonly b: Buffer, at: number) { this.pos = at; }
  private need(n: number): void { if (this.pos + n > this.b.length) throw new Error('rollup block truncated'); }
  u8(): number { this.need(1); return this.b[this.pos++]; }
  f64(): number { this.need(8); const x = this.b.readDoubleLE(this.pos); this.pos += 8; return x; }
  varint(): number {
    let x = 0, mul = 1;
    for (;;) {
      const c = this.u8();
      x += (c & 127) * mul;
      if (c < 128) return x;
      mul *= 128;
    }
  }
  bigZigzag(): bigint {
    let z = 0n, shift = 0n;
    for (;;) {
      const c = this.u8();
      z |= BigInt(c & 127) << shift;
      if (c < 128) break;
      shift += 7n;
    }
    return (z & 1n) === 0n ? z >> 1n : -((z + 1n) >> 1n);
  }
}

function isEmptyStats(r: RollupRow): boolean {
  return r.count === 0 && Number.isNaN(r.min) && Number.isNaN(r.max) && Number.isNaN(r.first) && Number.isNaN(r.last)
    && r.minTs === 0n && r.maxTs === 0n && r.firstTs === 0n && r.lastTs === 0n && same(r.lastQuality, 0);
}

/**
 * How a block writes its numbers: times (offsets from the row's bucket start) and whole-ns
 * durations in units of 10^e ns (e = NO_SCALE: times as zigzag bigvarints of ns,
 * durations as varints of ns), statistics as m / 10^k (k = NO_SCALE: f64). Chosen per block
 * as the largest e and the smallest k that are exact for every field.
 */
interface BlockScale { e: number; k: number }
const NO_SCALE = 255;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const MAX_MANTISSA = 2 ** 51;

/** Largest e <= 9 with x divisible by 10^e (x a safe integer). */
function tens(x: number): number {
  if (x === 0) return 9;
  let e = 0;
  while (e < 9 && x % POW10[e + 1] === 0) e++;
  return e;
}

/** Smallest k <= 9 with v = round(v x 10^k) / 10^k exactly, or NO_SCALE. */
function decimals(v: number): number {
  if (!Number.isFinite(v) || Object.is(v, -0)) return NO_SCALE;
  for (let k = 0; k <= 9; k++) {
    const m = Math.round(v * POW10[k]);
    if (Math.abs(m) < MAX_MANTISSA && m / POW10[k] === v) return k;
  }
  return NO_SCALE;
}

const rowValues = (r: RollupRow): number[] => [r.min, r.max, r.first, r.last];
const rowTimes = (r: RollupRow): bigint[] => [r.minTs, r.maxTs, r.firstTs, r.lastTs];

function scaleOf(rows: (RollupRow | null)[], bases: bigint[]): BlockScale {
  let e = 9, k = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r === null) continue;
    if (!isEmptyStats(r)) {
      for (const t of rowTimes(r)) {
        const d = t - bases[i];
        // zigzag of |d| < 2^51 stays a safe integer
        if (e !== NO_SCALE) e = d > -2251799813685248n && d < 2251799813685248n ? Math.min(e, tens(Number(d))) : NO_SCALE;
      }
      for (const v of rowValues(r)) if (k !== NO_SCALE) k = Math.max(k, decimals(v));
    }
    if (e !== NO_SCALE && wholeNs(r.coveredNs) && wholeNs(r.goodNs)) e = Math.min(e, tens(r.coveredNs), tens(r.goodNs));
  }
  if (k !== NO_SCALE) {
    // every value again at the common k (a value exact at k' < k is exact at k only if it checks)
    const p = POW10[k];
    for (const r of rows) {
      if (r === null || isEmptyStats(r)) continue;
      for (const v of rowValues(r)) { const m = Math.round(v * p); if (!(Math.abs(m) < MAX_MANTISSA && m / p === v)) return { e, k: NO_SCALE }; }
    }
  }
  return { e, k };
}

function writeValue(w: RowWriter, v: number, s: BlockScale): void {
  if (s.k === NO_SCALE) { w.f64(v); return; }
  const m = Math.round(v * POW10[s.k]);
  w.varint(m >= 0 ? 2 * m : -2 * m - 1);
}

function readValue(rd: RowReader, s: BlockScale): number {
  if (s.k === NO_SCALE) return rd.f64();
  const z = rd.varint();
  const m = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  return m / POW10[s.k];
}

function writeTime(w: RowWriter, t: bigint, base: bigint, s: BlockScale): void {
  if (s.e === NO_SCALE) { w.bigZigzag(t - base); return; }
  const u = Number(t - base) / POW10[s.e];
  w.varint(u >= 0 ? 2 * u : -2 * u - 1);
}

function readTime(rd: RowReader, base: bigint, s: BlockScale): bigint {
  if (s.e === NO_SCALE) return base + rd.bigZigzag();
  const z = rd.varint();
  return base + BigInt(z % 2 === 0 ? z / 2 : -(z + 1) / 2) * BigInt(POW10[s.e]);
}

function writeRow(w: RowWriter, r: RollupRow, base: bigint, s: BlockScale): void {
  const stats = !isEmptyStats(r);
  const nsAsF64 = !(wholeNs(r.coveredNs) && wholeNs(r.goodNs));
  let flags = (stats ? F_STATS : 0) | (same(r.areaLinear, r.areaStepped) ? F_LINEAR_SAME : 0) | (nsAsF64 ? F_NS_F64 : 0);
  if (same(r.goodNs, r.coveredNs)) flags |= F_GOOD_ALL;
  else if (same(r.goodNs, 0)) flags |= F_GOOD_ZERO;
  if (stats) {
    if (same(r.max, r.min) && r.maxTs === r.minTs) flags |= F_MAX_SAME;
    if (same(r.first, r.min) && r.firstTs === r.minTs) flags |= F_FIRST_SAME;
    if (same(r.last, r.max) && r.lastTs === r.maxTs) flags |= F_LAST_SAME;
  }
  w.u8(flags);
  if (stats) {
    if (!(Number.isSafeInteger(r.count) && r.count >= 0) || !(Number.isInteger(r.lastQuality) && r.lastQuality >= 0 && r.lastQuality < 2 ** 32)) {
      throw new Error(`BUG: rollup row count ${r.count} or quality ${r.lastQuality} is not a whole number`);
    }
    w.varint(r.count);
    writeValue(w, r.min, s); writeTime(w, r.minTs, base, s);
    if (!(flags & F_MAX_SAME)) { writeValue(w, r.max, s); writeTime(w, r.maxTs, base, s); }
    if (!(flags & F_FIRST_SAME)) { writeValue(w, r.first, s); writeTime(w, r.firstTs, base, s); }
    if (!(flags & F_LAST_SAME)) { writeValue(w, r.last, s); writeTime(w, r.lastTs, base, s); }
    w.varint(r.lastQuality);
  }
  w.f64(r.areaStepped);
  if (!(flags & F_LINEAR_SAME)) w.f64(r.areaLinear);
  const unit = s.e === NO_SCALE ? 1 : POW10[s.e];
  if (nsAsF64) w.f64(r.coveredNs); else w.varint(r.coveredNs / unit);
  if (!(flags & (F_GOOD_ALL | F_GOOD_ZERO))) { if (nsAsF64) w.f64(r.goodNs); else w.varint(r.goodNs / unit); }
}

function readRow(rd: RowReader, base: bigint, s: BlockScale): RollupRow {
  const flags = rd.u8();
  const r = emptyRow();
  if (flags & F_STATS) {
    r.count = rd.varint();
    r.min = readValue(rd, s); r.minTs = readTime(rd, base, s);
    if (flags & F_MAX_SAME) { r.max = r.min; r.maxTs = r.minTs; } else { r.max = readValue(rd, s); r.maxTs = readTime(rd, base, s); }
    if (flags & F_FIRST_SAME) { r.first = r.min; r.firstTs = r.minTs; } else { r.first = readValue(rd, s); r.firstTs = readTime(rd, base, s); }
    if (flags & F_LAST_SAME) { r.last = r.max; r.lastTs = r.maxTs; } else { r.last = readValue(rd, s); r.lastTs = readTime(rd, base, s); }
    r.lastQuality = rd.varint();
  }
  r.areaStepped = rd.f64();
  r.areaLinear = flags & F_LINEAR_SAME ? r.areaStepped : rd.f64();
  const unit = s.e === NO_SCALE ? 1 : POW10[s.e];
  const ns = () => (flags & F_NS_F64 ? rd.f64() : rd.varint() * unit);
  r.coveredNs = ns();
  r.goodNs = flags & F_GOOD_ALL ? r.coveredNs : flags & F_GOOD_ZERO ? 0 : ns();
  return r;
}

/** The day row as the hour rows fold into it (mergeRow from an empty row, in hour order). */
export function foldHours(hours: (RollupRow | null)[]): RollupRow | null {
  let day: RollupRow | null = null;
  for (const h of hours) {
    if (h === null) continue;
    day ??= emptyRow();
    mergeRow(day, h);
  }
  return day;
}

/**
 * One series' rollups of one UTC day: the rows of its 24 hours that hold points (null: none)
 * and an explicit day row (null: derived from the hours by the reader, see encodeDayBlock).
 */
export interface DayBlock {
  day: RollupRow | null;
  hours: (RollupRow | null)[];
}

export function emptyDayBlock(): DayBlock {
  return { day: null, hours: new Array<RollupRow | null>(HOURS_PER_DAY).fill(null) };
}

export function isEmptyDayBlock(b: DayBlock): boolean {
  return b.day === null && b.hours.every((h) => h === null);
}

const blockWriter = new RowWriter();

/**
 * u8 version (1) | u8 flags (bit 0: day row stored; bit 1: day row derived) | 3 bytes hour mask (bit h: hour h
 * present, little-endian) | u8 e | u8 k (BlockScale) | day row (relative to dayStart) |
 * present hour rows in hour order (each relative to its hour's start). A fresh Buffer.
 * A block without an explicit day row (b.day null) that has hours sets bit 1: its day row is
 * derived by the reader, the fold of the day's 24 hours, those holding no point synthesized
 * from the neighbouring rows (rollup-read.ts). Blocks written before buckets without points
 * stopped being stored set the same bit with every such hour stored: the same fold.
 */
export function encodeDayBlock(b: DayBlock, dayStart: bigint, hourNs: bigint): Buffer {
  const w = blockWriter;
  w.pos = 0;
  let mask = 0;
  for (let h = 0; h < HOURS_PER_DAY; h++) if (b.hours[h] !== null) mask |= 1 << h;
  const bases = [dayStart, ...b.hours.map((_, h) => dayStart + BigInt(h) * hourNs)];
  const day = b.day;
  const s = scaleOf([day, ...b.hours], bases);
  w.u8(BLOCK_VERSION); w.u8(day !== null ? BLOCK_HAS_DAY : mask !== 0 ? BLOCK_DAY_DERIVED : 0);
  w.u8(mask & 255); w.u8((mask >>> 8) & 255); w.u8((mask >>> 16) & 255);
  w.u8(s.e); w.u8(s.k);
  if (day !== null) writeRow(w, day, dayStart, s);
  for (let h = 0; h < HOURS_PER_DAY; h++) {
    const row = b.hours[h];
    if (row !== null) writeRow(w, row, bases[h + 1], s);
  }
  return Buffer.from(w.buf.subarray(0, w.pos));
}

export function decodeDayBlock(bytes: Buffer, dayStart: bigint, hourNs: bigint): DayBlock {
  const rd = new RowReader(bytes, 0);
  const version = rd.u8();
  if (version !== BLOCK_VERSION) throw new Error(`rollup day block version ${version} is not known`);
  const flags = rd.u8();
  const mask = rd.u8() | (rd.u8() << 8) | (rd.u8() << 16);
  const s: BlockScale = { e: rd.u8(), k: rd.u8() };
  if ((s.e > 9 && s.e !== NO_SCALE) || (s.k > 9 && s.k !== NO_SCALE)) throw new Error(`rollup day block scale ${s.e}/${s.k} is not valid`);
  const b = emptyDayBlock();
  if (flags & BLOCK_HAS_DAY) b.day = readRow(rd, dayStart, s);
  for (let h = 0; h < HOURS_PER_DAY; h++) if (mask & (1 << h)) b.hours[h] = readRow(rd, dayStart + BigInt(h) * hourNs, s);
  if ((flags & BLOCK_DAY_DERIVED) && mask === 0) throw new Error('rollup day block derives a day row from no hours');
  if (rd.pos !== bytes.length) throw new Error(`rollup day block has ${bytes.length - rd.pos} unread bytes`);
  return b;
}
