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
// Stored as day blocks (encodeDayBlock in rollup-block.ts): one LMDB value per series and UTC day holds
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
  /** The point before a run (addRun): time offset, value, quality. */
  private readonly prev = new Float64Array(3);
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
   * the previous point (prevOff NaN: none). Same arithmetic as addPoint/addSegment, with the
   * common case (both ends in the current bucket) kept in this loop.
   * The previous point is read from the run's arrays, or for point 0 from `prev`, never
   * carried in variables that start as the parameters: TurboFan kept those tagged and boxed
   * every point's time and value in a fresh HeapNumber (~32 B of garbage a point, 62% of
   * what the write path allocated in a sampled heap profile of the shared load; 10 M points
   * in 1,000-point runs: 79 scavenges of a 4 MB semi-space, now 3).
   */
  addRun(off: Float64Array, v: Float64Array, q: Uint32Array, n: number, prevOff: number, prevV: number, prevQ: number): void {
    const I = this.intervalNs;
    let idx = Number.isNaN(prevOff) ? NaN : Math.floor(prevOff / I);
    let r = Number.isNaN(idx) ? this.cur : this.row(idx);
    let end = (idx + 1) * I;
    const prev = this.prev;
    prev[0] = prevOff; prev[1] = prevV; prev[2] = prevQ;
    for (let i = 0; i < n; i++) {
      const t = off[i], x = v[i], qi = q[i];
      const pOff = i > 0 ? off[i - 1] : prev[0], pV = i > 0 ? v[i - 1] : prev[1], pQ = i > 0 ? q[i - 1] : prev[2];
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

// The compact day blocks live in rollup-block.ts; their names are re-exported here for the
// modules and tests that import them with the rows.
export { decodeDayBlock, emptyDayBlock, encodeDayBlock, foldHours, HOURS_PER_DAY, isEmptyDayBlock, type DayBlock } from './rollup-block.js';
