// Per-column accumulation for render. Times are `rel`: ns since the range start, as
// doubles. Every array is sized to the width once per render; the per-point loop
// only indexes typed arrays.
import type { EdgePoint } from './range-scan.js';
import type { RenderStat } from './render.js';

/** What addSummary needs of a chunk header: times relative to the range start, numeric values. */
export interface ChunkExtremes {
  count: number;
  firstRel: number; lastRel: number; minRel: number; maxRel: number;
  first: number; last: number; min: number; max: number;
}

/** The pixel column of a point `rel` ns after the range start; shared with tests' rasteriser. */
export function columnOf(rel: number, width: number, span: number): number {
  return Math.floor((rel * width) / span);
}

/**
 * The neighbouring double of an integer-valued t in direction dir: t ± 1 below 2^53, and
 * the next representable value above (where t ± 1 rounds back to t; ranges longer than
 * 104 days reach there).
 */
function stepDouble(t: number, dir: 1 | -1): number {
  let step = 1;
  while (t + dir * step === t) step *= 2;
  return t + dir * step;
}

export class ColumnSink {
  private readonly span: number;
  private readonly count: Float64Array;
  private readonly fRel: Float64Array; private readonly fV: Float64Array;
  private readonly lRel: Float64Array; private readonly lV: Float64Array;
  private readonly minRel: Float64Array; private readonly minV: Float64Array;
  private readonly maxRel: Float64Array; private readonly maxV: Float64Array;
  private readonly area: Float64Array | null;
  private readonly cov: Float64Array | null;
  private readonly good: Float64Array | null;
  /** Per-point stats: whether each column's last point is good (its percent_good when the column covers no time). */
  private readonly lastGood: Uint8Array | null;
  private prevRel = NaN; private prevV = NaN; private prevGood = false;
  private goodNs = 0; private coveredNs = 0;
  pointsScanned = 0;

  constructor(readonly startNs: bigint, endNs: bigint, private readonly width: number, private readonly stepped: boolean, private readonly perPoint: boolean) {
    this.span = Number(endNs - startNs);
    const W = width;
    this.count = new Float64Array(W);
    this.fRel = new Float64Array(W); this.fV = new Float64Array(W);
    this.lRel = new Float64Array(W); this.lV = new Float64Array(W);
    this.minRel = new Float64Array(W); this.minV = new Float64Array(W);
    this.maxRel = new Float64Array(W); this.maxV = new Float64Array(W);
    this.area = perPoint ? new Float64Array(W) : null;
    this.cov = perPoint ? new Float64Array(W) : null;
    this.good = perPoint ? new Float64Array(W) : null;
    this.lastGood = perPoint ? new Uint8Array(W) : null;
  }

  sameColumn(a: number, b: number): boolean {
    return columnOf(a, this.width, this.span) === columnOf(b, this.width, this.span);
  }

  prevPoint(rel: number, v: number, good: boolean): void {
    this.prevRel = rel; this.prevV = v; this.prevGood = good;
  }

  /** The segment from the previous point to (rel, v), clipped to the range: quality time and per-column areas. */
  private segment(rel: number, v: number): void {
    const r0 = this.prevRel;
    if (Number.isNaN(r0)) return;
    const a0 = r0 > 0 ? r0 : 0, a1 = rel < this.span ? rel : this.span;
    if (!(a1 > a0)) return;
    this.coveredNs += a1 - a0;
    if (this.prevGood) this.goodNs += a1 - a0;
    if (!this.perPoint) return;
    const W = this.width, span = this.span, v0 = this.prevV, slope = (v - v0) / (rel - r0);
    let a = a0;
    while (a < a1) {
      const c = columnOf(a, W, span);
      const b = Math.min(a1, ((c + 1) * span) / W);
      const d = b - a;
      this.area![c] += this.stepped ? v0 * d : (2 * v0 + slope * (a - r0 + b - r0)) * 0.5 * d;
      this.cov![c] += d;
      if (this.prevGood) this.good![c] += d;
      if (!(b > a)) break;
      a = b;
    }
  }

  private point(c: number, rel: number, v: number): void {
    if (this.count[c] === 0) {
      this.fRel[c] = rel; this.fV[c] = v; this.minRel[c] = rel; this.minV[c] = v; this.maxRel[c] = rel; this.maxV[c] = v;
    } else {
      if (v < this.minV[c]) { this.minV[c] = v; this.minRel[c] = rel; }
      if (v > this.maxV[c]) { this.maxV[c] = v; this.maxRel[c] = rel; }
    }
    this.lRel[c] = rel; this.lV[c] = v;
  }

  /**
   * A whole chunk inside one column, from its header. nonGoodNs: the time inside the chunk
   * after non-good points; lastGood: the quality class of its last point.
   */
  addSummary(h: ChunkExtremes, nonGoodNs: number, lastGood: boolean): void {
    const first = h.firstRel, last = h.lastRel;
    const c = columnOf(first, this.width, this.span);
    const wasEmpty = this.count[c] === 0;
    this.segment(first, h.first);
    if (wasEmpty) { this.fRel[c] = first; this.fV[c] = h.first; }
    if (wasEmpty || h.min < this.minV[c]) { this.minV[c] = h.min; this.minRel[c] = h.minRel; }
    if (wasEmpty || h.max > this.maxV[c]) { this.maxV[c] = h.max; this.maxRel[c] = h.maxRel; }
    this.lRel[c] = last; this.lV[c] = h.last;
    this.count[c] += h.count;
    this.pointsScanned += h.count;
    this.chunkCoverage(first, last, nonGoodNs, h.last, lastGood);
  }

  // ---- a chunk in parts (render-straddle.ts): enter, points and group runs, coverage ----

  /** The segment from the previous point to a chunk's first point. */
  enterChunk(firstRel: number, firstV: number): void {
    this.segment(firstRel, firstV);
  }

  /** Coverage inside a chunk known from its summary; its last point becomes the previous point. */
  chunkCoverage(firstRel: number, lastRel: number, nonGoodNs: number, lastV: number, lastGood: boolean): void {
    const span = lastRel - firstRel;
    this.coveredNs += span;
    this.goodNs += span - nonGoodNs;
    this.prevPoint(lastRel, lastV, lastGood);
  }

  /**
   * Points ts[i]+baseRel (i in [i0, i1), times ascending) into their columns; coverage is
   * the caller's (chunkCoverage). Splits the run at column starts, then scans each
   * column's slice for its extremes: one comparison per point, the column updated once.
   */
  addRun(baseRel: number, ts: Float64Array, v: Float64Array, i0: number, i1: number): void {
    let i = i0;
    while (i < i1) {
      const c = columnOf(baseRel + ts[i], this.width, this.span);
      const next = c + 1 < this.width ? this.columnStart(c + 1) : Infinity;
      let j = i + 1;
      while (j < i1 && baseRel + ts[j] < next) j++;
      let lo = i, hi = i;
      for (let k = i + 1; k < j; k++) {
        const x = v[k];
        if (x < v[lo]) lo = k;
        else if (x > v[hi]) hi = k;
      }
      const wasEmpty = this.count[c] === 0;
      if (wasEmpty) { this.fRel[c] = baseRel + ts[i]; this.fV[c] = v[i]; }
      if (wasEmpty || v[lo] < this.minV[c]) { this.minV[c] = v[lo]; this.minRel[c] = baseRel + ts[lo]; }
      if (wasEmpty || v[hi] > this.maxV[c]) { this.maxV[c] = v[hi]; this.maxRel[c] = baseRel + ts[hi]; }
      this.lRel[c] = baseRel + ts[j - 1]; this.lV[c] = v[j - 1];
      this.count[c] += j - i;
      i = j;
    }
    this.pointsScanned += i1 - i0;
  }

  /**
   * The smallest rel (a double: integer ns below 2^53, coarser above) in column c, exactly
   * as columnOf decides: a point's rel is below it if and only if columnOf puts it before c.
   */
  private columnStart(c: number): number {
    let t = Math.ceil((c * this.span) / this.width);
    while (columnOf(t, this.width, this.span) >= c) t = stepDouble(t, -1);
    while (columnOf(t, this.width, this.span) < c) t = stepDouble(t, 1);
    return t;
  }

  /** Where column c + 1 starts (Infinity after the last column): rel >= it exactly when columnAt(rel) > c. */
  nextColumnStart(c: number): number {
    return c + 1 < this.width ? this.columnStart(c + 1) : Infinity;
  }

  columnAt(rel: number): number {
    return columnOf(rel, this.width, this.span);
  }

  isEmpty(c: number): boolean {
    return this.count[c] === 0;
  }

  /** Whether a point of value v would become column c's min (max): decides whether its time is worth resolving. */
  beatsMin(c: number, v: number): boolean {
    return this.count[c] === 0 || v < this.minV[c];
  }

  beatsMax(c: number, v: number): boolean {
    return this.count[c] === 0 || v > this.maxV[c];
  }

  /**
   * A run of `n` points in column c known by summary: its first point, its extremes (times
   * resolved by the caller when beatsMin/beatsMax said so, else NaN) and its last point.
   */
  addGroupRun(c: number, n: number, fRel: number, fV: number, minRel: number, minV: number, maxRel: number, maxV: number, lRel: number, lV: number): void {
    const wasEmpty = this.count[c] === 0;
    if (wasEmpty) { this.fRel[c] = fRel; this.fV[c] = fV; }
    if (!Number.isNaN(minRel)) { this.minV[c] = minV; this.minRel[c] = minRel; }
    if (!Number.isNaN(maxRel)) { this.maxV[c] = maxV; this.maxRel[c] = maxRel; }
    this.lRel[c] = lRel; this.lV[c] = lV;
    this.count[c] += n;
    this.pointsScanned += n;
  }

  /** Points ts[i]+baseRel (i in [i0, i1)); quality per point, or allGood for uniform chunks. */
  addPoints(baseRel: number, ts: Float64Array, v: Float64Array, quality: Uint32Array | null, allGood: boolean, i0: number, i1: number): void {
    const W = this.width, span = this.span;
    for (let i = i0; i < i1; i++) {
      const rel = baseRel + ts[i], x = v[i];
      this.segment(rel, x);
      const c = columnOf(rel, W, span);
      this.point(c, rel, x);
      this.count[c]++;
      this.prevRel = rel; this.prevV = x; this.prevGood = quality ? quality[i] >= 192 : allGood;
      if (this.lastGood) this.lastGood[c] = this.prevGood ? 1 : 0;
    }
    this.pointsScanned += i1 - i0;
  }

  nextPoint(rel: number, v: number): void {
    this.segment(rel, v);
  }

  /**
   * Good time over covered time, in percent; 0 when the range covers no time (no points, or
   * one point and nothing after it): no time of the range is known to be good
   * (docs/decisions.md, 2026-11-27).
   */
  private percentGood(): number {
    return this.coveredNs > 0 ? (100 * this.goodNs) / this.coveredNs : 0;
  }

  significantPoints(before: EdgePoint | null, after: EdgePoint | null): { count: number; tMs: Float64Array; tNs: BigInt64Array; v: Float64Array; percentGood: number; pointsScanned: number } {
    let cap = (before ? 1 : 0) + (after ? 1 : 0);
    for (let c = 0; c < this.width; c++) if (this.count[c] > 0) cap += 4;
    const tNs = new BigInt64Array(cap), v = new Float64Array(cap);
    let n = 0;
    if (before) { tNs[n] = before.ts; v[n] = before.v; n++; }
    const rel = [0, 0, 0, 0], val = [0, 0, 0, 0];
    for (let c = 0; c < this.width; c++) {
      if (this.count[c] === 0) continue;
      rel[0] = this.fRel[c]; val[0] = this.fV[c];
      rel[1] = this.minRel[c]; val[1] = this.minV[c];
      rel[2] = this.maxRel[c]; val[2] = this.maxV[c];
      rel[3] = this.lRel[c]; val[3] = this.lV[c];
      // time order; first and last are the extremes in time already
      if (rel[1] > rel[2]) { const r = rel[1], x = val[1]; rel[1] = rel[2]; val[1] = val[2]; rel[2] = r; val[2] = x; }
      let last = NaN;
      for (let k = 0; k < 4; k++) {
        if (rel[k] === last) continue;
        last = rel[k];
        tNs[n] = this.startNs + BigInt(rel[k]); v[n] = val[k]; n++;
      }
    }
    if (after) { tNs[n] = after.ts; v[n] = after.v; n++; }
    const tMs = new Float64Array(n);
    for (let i = 0; i < n; i++) tMs[i] = Number(tNs[i]) / 1e6;
    return { count: n, tMs, tNs: tNs.subarray(0, n), v: v.subarray(0, n), percentGood: this.percentGood(), pointsScanned: this.pointsScanned };
  }

  band(stat: RenderStat | null): { tMs: Float64Array; vMin: Float64Array; vMax: Float64Array; vStat: Float64Array | null; percentGood: number; pointsScanned: number } {
    const W = this.width;
    const tMs = new Float64Array(W), vMin = new Float64Array(W), vMax = new Float64Array(W);
    const vStat = stat ? new Float64Array(W) : null;
    const startMs = Number(this.startNs) / 1e6;
    for (let c = 0; c < W; c++) {
      tMs[c] = startMs + (c * this.span) / W / 1e6;
      const has = this.count[c] > 0;
      vMin[c] = has ? this.minV[c] : NaN;
      vMax[c] = has ? this.maxV[c] : NaN;
      if (!vStat) continue;
      switch (stat) {
        case 'count': vStat[c] = this.count[c]; break;
        case 'min': vStat[c] = vMin[c]; break;
        case 'max': vStat[c] = vMax[c]; break;
        case 'first': vStat[c] = has ? this.fV[c] : NaN; break;
        case 'last': vStat[c] = has ? this.lV[c] : NaN; break;
        // A column with points but no covered time (its last point ends the data) takes the
        // limit of a shrinking window: the value and quality of its last point.
        case 'twa': vStat[c] = this.cov![c] > 0 ? this.area![c] / this.cov![c] : has ? this.lV[c] : NaN; break;
        case 'percent_good': vStat[c] = this.cov![c] > 0 ? (100 * this.good![c]) / this.cov![c] : has ? 100 * this.lastGood![c] : NaN; break;
      }
    }
    return { tMs, vMin, vMax, vStat, percentGood: this.percentGood(), pointsScanned: this.pointsScanned };
  }
}
