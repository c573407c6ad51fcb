// The per-interval accumulator of a summary (summary.ts): points, the segments between
// them split at interval ends, and rollup buckets, into columns per interval. Times are ns
// offsets (doubles) from `base`, a point of the interval grid moved forward when runs
// reach 2^51 ns past it, so offsets stay exact over ranges longer than a double allows.
import type { SpanBucket } from './rollup-read.js';
import { HOUR_NS } from './rollup-read.js';
import { GOOD_QUALITY } from './rollup-row.js';
import type { Continuity } from './rollups.js';

/** OPC DA quality classes (ARCHITECTURE.md): good >= 192, uncertain 64..191, bad < 64. */
const UNCERTAIN_QUALITY = 64;
const REBASE_AT = 2 ** 51;

/** Per-interval accumulations; NaN where a statistic has no input. */
export interface SummaryColumns {
  n: number;
  count: Float64Array;
  min: Float64Array; max: Float64Array; first: Float64Array; last: Float64Array;
  /** Sum of (v - shift) and of its square, shift = the interval's first value (stable variance). */
  sumD: Float64Array; sumD2: Float64Array;
  /** Integral of the signal (value x ns) and the time it covers. */
  area: Float64Array; covered: Float64Array;
  goodNs: Float64Array; uncertainNs: Float64Array; badNs: Float64Array;
  pointsRead: number;
  /** Rollup rows used: hours, and days (each one stored row instead of 24). */
  rollupHours: number;
  rollupDays: number;
  /** Stored chunks holding points of the range that were never decoded: rollup rows answered for all their points. */
  chunksPruned: number;
  /** ns of the range held by points the quality filter dropped. */
  filteredNs: number;
}

/** Index of the interval holding t (-1 before the first, n after the last). */
export function intervalOfNs(b: BigInt64Array, t: bigint): number {
  let lo = 0, hi = b.length;
  while (lo < hi) { const mid = (lo + hi) >>> 1; if (b[mid] <= t) lo = mid + 1; else hi = mid; }
  return lo - 1 >= b.length - 1 ? b.length - 1 : lo - 1;
}

/** Offsets of each grid's boundaries from its first (BigInt subtractions, once per grid). */
const gridOffsets = new WeakMap<BigInt64Array, Float64Array>();

export class IntervalAccumulator {
  readonly c: SummaryColumns;
  private readonly n: number;
  private readonly stepped: boolean;
  /** Boundary offsets from base (exact within 2^53 ns of it). */
  private readonly bOff: Float64Array;
  base: bigint;
  /** The previous point of U (offset from base; NaN: none). */
  private pOff = NaN; private pV = NaN; private pQ = 0;
  /** Segment time before this offset is already counted (rollup hours) or not covered. */
  private countedTo = -Infinity;
  /** Unbound time between two pieces, not covered: [gapLo, gapHi). */
  private gapLo = NaN; private gapHi = NaN;

  constructor(private readonly B: BigInt64Array, continuity: Continuity) {
    const n = B.length - 1;
    this.n = n;
    // the columns and the boundary offsets share one buffer: one backing store an attribute
    // instead of 13 (a fleet summary made ~13,000 per read, each a calloc, an external-memory
    // count and a sweep by V8's background threads)
    const all = new Float64Array(12 * n + n + 1);
    let at = 0;
    const f = () => { const c = all.subarray(at, at + n); at += n; return c; };
    this.c = {
      n, count: f(), min: f().fill(NaN), max: f().fill(NaN), first: f().fill(NaN), last: f().fill(NaN), sumD: f(), sumD2: f(),
      area: f(), covered: f(), goodNs: f(), uncertainNs: f(), badNs: f(), pointsRead: 0, rollupHours: 0, rollupDays: 0, chunksPruned: 0, filteredNs: 0,
    };
    this.stepped = continuity === 'stepped';
    this.base = B[0];
    // the grid's offsets from its start, computed once per grid (a task reuses one grid for every attribute)
    let start = gridOffsets.get(B);
    if (!start) {
      start = new Float64Array(n + 1);
      for (let k = 0; k <= n; k++) start[k] = Number(B[k] - B[0]);
      gridOffsets.set(B, start);
    }
    this.bOff = all.subarray(at, at + n + 1);
    this.bOff.set(start);
  }

  private fillOffsets(): void {
    for (let k = 0; k <= this.n; k++) this.bOff[k] = Number(this.B[k] - this.base);
  }

  /** Offset of `t` from base, moving base forward first when t is 2^51 ns or more past it. */
  offsetOf(t: bigint): number {
    if (t - this.base >= BigInt(REBASE_AT)) this.rebase(t);
    return Number(t - this.base);
  }

  /** Offset of `t` from base without moving base (edge points far outside the range). */
  edgeOffset(t: bigint): number { return Number(t - this.base); }

  private rebase(t: bigint): void {
    const k = intervalOfNs(this.B, t);
    const nb = this.B[k < 0 ? 0 : k];
    if (nb <= this.base) return;
    const shift = Number(nb - this.base);
    this.base = nb;
    this.fillOffsets();
    this.pOff -= shift; this.countedTo -= shift; this.gapLo -= shift; this.gapHi -= shift;
  }

  /** Largest k with bOff[k] <= off, clamped to [-1, n]. */
  private intervalAt(off: number): number {
    const b = this.bOff;
    let lo = 0, hi = b.length;
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (b[mid] <= off) lo = mid + 1; else hi = mid; }
    return lo - 1;
  }

  setPrev(off: number, v: number, q: number): void {
    this.pOff = off; this.pV = v; this.pQ = q;
  }

  hasPrev(): boolean { return !Number.isNaN(this.pOff); }

  /** Segment time before `off` is not to be counted again (rollup hours end there). */
  countedUpTo(off: number): void { this.countedTo = off; }

  /** The time [lo, hi) between two pieces is not covered by the segment that crosses it. */
  unbound(lo: number, hi: number): void { this.gapLo = lo; this.gapHi = hi; }

  /** The segment from the previous point to (off, v), where it is not yet counted, up to `upTo`. */
  segmentTo(off: number, v: number, upTo = Infinity): void {
    if (Number.isNaN(this.pOff)) return;
    const lo = Math.max(this.pOff, this.countedTo, this.bOff[0]), hi = Math.min(off, this.bOff[this.n], upTo);
    if (!Number.isNaN(this.gapLo) && this.gapLo < hi && this.gapHi > lo) {
      this.addSegment(off, v, lo, Math.min(hi, this.gapLo));
      this.addSegment(off, v, Math.max(lo, this.gapHi), hi);
    } else this.addSegment(off, v, lo, hi);
    this.gapLo = NaN; this.gapHi = NaN;
    this.countedTo = -Infinity;
  }

  /** The part [a0, a1) of the segment from the previous point to (t1, v1), split at interval ends. */
  private addSegment(t1: number, v1: number, a0: number, a1: number): void {
    if (!(a1 > a0)) return;
    const c = this.c, bOff = this.bOff, t0 = this.pOff, v0 = this.pV, q = this.pQ;
    const slope = this.stepped ? 0 : (v1 - v0) / (t1 - t0);
    const numeric = !Number.isNaN(v0) && (this.stepped || !Number.isNaN(v1));
    let a = a0, k = this.intervalAt(a0);
    while (a < a1 && k < this.n) {
      const b = Math.min(a1, bOff[k + 1]);
      const d = b - a;
      if (k >= 0 && d > 0) {
        if (numeric) c.area[k] += this.stepped ? v0 * d : (2 * v0 + slope * (a - t0 + b - t0)) * 0.5 * d;
        c.covered[k] += d;
        if (q >= GOOD_QUALITY) c.goodNs[k] += d; else if (q >= UNCERTAIN_QUALITY) c.uncertainNs[k] += d; else c.badNs[k] += d;
      }
      a = b; k++;
    }
  }

  /** Points at offsets off[i] (i in [i0, i1), ascending, inside the range) with their segments. */
  points(off: Float64Array, v: Float64Array, q: Uint32Array, i0: number, i1: number): void {
    const c = this.c, bOff = this.bOff, stepped = this.stepped;
    let i = i0;
    while (i < i1) {
      // the first point of a stretch inside one interval: its segment may start in an earlier
      // interval, in counted time or across unbound time
      const t = off[i], x = v[i];
      const k = this.intervalAt(t), begin = bOff[k], end = bOff[k + 1];
      const p = this.pOff;
      if (p >= begin && this.countedTo <= p && Number.isNaN(this.gapLo)) {
        const d = t - p, v0 = this.pV, q0 = this.pQ;
        if (d > 0) {
          if (v0 === v0 && (stepped || x === x)) c.area[k] += stepped ? v0 * d : (v0 + x) * 0.5 * d;
          c.covered[k] += d;
          if (q0 >= GOOD_QUALITY) c.goodNs[k] += d; else if (q0 >= UNCERTAIN_QUALITY) c.uncertainNs[k] += d; else c.badNs[k] += d;
        }
      } else this.segmentTo(t, x);
      if (c.count[k] === 0) { c.first[k] = x; c.min[k] = x; c.max[k] = x; }
      else if (x < c.min[k]) c.min[k] = x;
      else if (x > c.max[k]) c.max[k] = x;
      c.last[k] = x;
      const dx0 = x - c.first[k];
      c.sumD[k] += dx0; c.sumD2[k] += dx0 * dx0;
      c.count[k]++;
      // the rest of the stretch: every segment lies inside interval k, nothing of it counted,
      // so the same sums in the same order run in locals (a profile put ~50 ns a point in the
      // column loads and stores, 2026-11-28)
      let pT = t, pV = x, pQ = q[i];
      i++;
      let area = c.area[k], cov = c.covered[k], good = c.goodNs[k], unc = c.uncertainNs[k], bad = c.badNs[k];
      let cnt = c.count[k], mn = c.min[k], mx = c.max[k], last = x, sD = c.sumD[k], sD2 = c.sumD2[k];
      const first = c.first[k];
      for (; i < i1; i++) {
        const ti = off[i];
        if (ti >= end) break;
        const xi = v[i], d = ti - pT;
        if (d > 0) {
          if (pV === pV && (stepped || xi === xi)) area += stepped ? pV * d : (pV + xi) * 0.5 * d;
          cov += d;
          if (pQ >= GOOD_QUALITY) good += d; else if (pQ >= UNCERTAIN_QUALITY) unc += d; else bad += d;
        }
        if (xi < mn) mn = xi; else if (xi > mx) mx = xi;
        last = xi;
        const dx = xi - first;
        sD += dx; sD2 += dx * dx;
        cnt++;
        pT = ti; pV = xi; pQ = q[i];
      }
      c.area[k] = area; c.covered[k] = cov; c.goodNs[k] = good; c.uncertainNs[k] = unc; c.badNs[k] = bad;
      c.count[k] = cnt; c.min[k] = mn; c.max[k] = mx; c.last[k] = last; c.sumD[k] = sD; c.sumD2[k] = sD2;
      this.pOff = pT; this.pV = pV; this.pQ = pQ;
    }
    c.pointsRead += i1 - i0;
  }

  /** A dropped point at offset `a` held until `b`: the part inside the range is filtered time. */
  filtered(a: number, b: number): void {
    const lo = Math.max(a, this.bOff[0]), hi = Math.min(b, this.bOff[this.n]);
    if (hi > lo) this.c.filteredNs += hi - lo;
  }

  /** A rollup bucket (hour or day) at offset `off`, inside one interval; its last point becomes the previous point. */
  rollupBucket(off: number, b: SpanBucket): void {
    const c = this.c, r = b.row, k = this.intervalAt(off);
    if (r.count > 0) {
      if (c.count[k] === 0) { c.first[k] = r.first; c.min[k] = r.min; c.max[k] = r.max; }
      else { if (r.min < c.min[k]) c.min[k] = r.min; if (r.max > c.max[k]) c.max[k] = r.max; }
      c.last[k] = r.last;
      c.count[k] += r.count;
      // sums are not kept by rollups: useRollups is false whenever they are asked for
      c.sumD[k] = NaN; c.sumD2[k] = NaN;
      this.setPrev(this.offsetOf(r.lastTs), r.last, r.lastQuality);
    }
    c.area[k] += this.stepped ? r.areaStepped : r.areaLinear;
    c.covered[k] += r.coveredNs;
    c.goodNs[k] += r.goodNs;
    // the non-good time is bad or uncertain, which rollups do not tell apart
    c.uncertainNs[k] = NaN; c.badNs[k] = NaN;
    if (b.ns === HOUR_NS) c.rollupHours++; else c.rollupDays++;
  }
}
