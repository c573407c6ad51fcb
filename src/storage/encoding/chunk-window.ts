// The points of one sealed chunk inside a time window, decoding only the window when the
// chunk's layout allows random access: a read whose window cuts a chunk (an hour out of a
// 10,000-point chunk of a 1 s series) decoded the whole chunk, 2.7 points for each point
// it answered over the hour of 950 attributes (2026-11-28). The window's edges are found by
// a binary search of the time column when it needs no anchor (GRID or SLOTS residuals in
// RLE, FOR, FRAME or RICE), else from the group directory's first times (decimal floats,
// int64); values and qualities come from int-column-range.ts the same ways. What this
// cannot read in part (split floats, wide int64, strings, a delta-coded column without a
// directory) it leaves to the whole-chunk decoder: decode() returns -1 and reads nothing
// into `out`. The bytes written are the whole decoder's, bit for bit: the same integers,
// the same division by 10^k, the same int64 words (test/storage/chunk-window.test.ts).
import { ChunkReader } from './byte-io.js';
import { finishSection, openVerified } from './chunk.js';
import { sectionOffsets } from './chunk-header.js';
import { readChunkSummary } from './chunk-range.js';
import { ChunkSummary } from './chunk-summary.js';
import type { ChunkHeader, PointColumns } from './chunk-types.js';
import { decodeIntColumnTo } from './int-column-decode.js';
import { IntColumnIndex } from './int-column-range.js';
import { TimeColumnIndex } from './time-column.js';
import { int64Words } from './value-columns.js';

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

export class ChunkWindow {
  private readonly times = new TimeColumnIndex();
  private readonly values = new IntColumnIndex();
  private readonly qualities = new IntColumnIndex();
  private readonly summary = new ChunkSummary();
  private x = new Float64Array(4096);
  private q = new Uint32Array(0);

  /**
   * Fills out[0..m) with the chunk's points whose time is in [from, to) and returns m
   * (out.tsBase becomes the chunk's first time), or -1 when the layout has no random
   * access (nothing read into out: the caller decodes the chunk whole). `h`: the chunk's
   * checked header (readChunkHeader). `out` must hold the window's points: the chunk's
   * count is always enough.
   */
  decode(bytes: Uint8Array, h: ChunkHeader, from: bigint, to: bigint, out: PointColumns): number {
    const type = h.type, n = h.count;
    if (type === 'string' || n === 0) return -1;
    const s = sectionOffsets(bytes);
    // the value column's prefix, read before the CRC pass: split floats and wide int64 stop here
    let divisor = 1, valueAt = s.valuesAt;
    if (type === 'float64') {
      if (bytes[valueAt] !== 0) return -1;
      const k = bytes[valueAt + 1];
      if (!(k <= 9)) return -1; // the whole decoder names the damage
      divisor = POW10[k];
      valueAt += 2;
    } else if (type === 'int64') {
      if (bytes[valueAt] !== 0) return -1;
      valueAt += 1;
    }
    const c = openVerified(bytes);
    let r = new ChunkReader(c.bytes, c.words, s.timesAt, s.valuesAt);
    this.times.parse(r, n);
    finishSection(r, 'time');
    r = new ChunkReader(c.bytes, c.words, valueAt, s.qualityAt);
    this.values.parse(r, n);
    finishSection(r, 'value');
    const sm = this.summary;
    if (!this.times.anchorFree || !this.values.anchorFree) {
      // anchors from the group directory (readChunkSummary reads a summary the header CRC covers)
      if (!readChunkSummary(bytes, n, sm, s) || sm.groups === 0) return -1;
      sm.loadDirectory();
    }
    const firstTs = h.firstTs;
    const fromRel = from <= firstTs ? 0 : Number(from - firstTs);
    const toRel = to > h.lastTs ? Infinity : Number(to - firstTs);
    let i0: number, i1: number;
    if (this.times.anchorFree) {
      i0 = this.firstAtOrAfter(fromRel, 0, n);
      i1 = toRel === Infinity ? n : this.firstAtOrAfter(toRel, i0, n);
      if (i1 > i0) this.times.range(i0, i1, out.tsOffset, 0, 0);
    } else {
      // the groups holding the window, by their first times; then the points inside them
      const G = 1 << sm.groupShift;
      const g0 = Math.max(0, lastGroupBelow(sm, fromRel)), g1 = toRel === Infinity ? sm.groups - 1 : lastGroupBelow(sm, toRel);
      if (g1 < g0) { i0 = i1 = 0; } else {
        const a = g0 * G, b = Math.min(n, (g1 + 1) * G);
        const rel = out.tsOffset; // the groups' times, then moved down to the window's
        this.times.range(a, b, rel, a, sm.firstRel[g0]);
        let j0 = 0;
        while (j0 < b - a && rel[j0] < fromRel) j0++;
        let j1 = b - a;
        while (j1 > j0 && rel[j1 - 1] >= toRel) j1--;
        if (j0 > 0 && j1 > j0) rel.copyWithin(0, j0, j1);
        i0 = a + j0; i1 = a + j1;
      }
    }
    const m = i1 > i0 ? i1 - i0 : 0;
    out.type = type;
    out.tsBase = firstTs;
    out.count = m;
    if (m === 0) return 0;
    if (this.x.length < m) this.x = new Float64Array(Math.max(m, 2 * this.x.length));
    const x = this.x;
    if (type === 'boolean' || type === 'enum') {
      // states: mostly runs, filled straight into their narrow column
      if (this.values.anchorFree) this.values.rangeInto(i0, i1, type === 'boolean' ? out.u8! : out.ord!, x);
      else {
        const g = i0 >> sm.groupShift;
        this.values.range(i0, i1, x, g << sm.groupShift, sm.firstX[g]);
        copyNumbers(x, type === 'boolean' ? out.u8! : out.ord!, m);
      }
    } else if (this.values.anchorFree) this.values.range(i0, i1, x, 0, 0);
    else {
      const g = i0 >> sm.groupShift;
      this.values.range(i0, i1, x, g << sm.groupShift, sm.firstX[g]);
    }
    if (type === 'float64') divide(x, out.f64!, m, divisor);
    else if (type === 'int64') int64Words(x, out.i64!, m);
    this.readQuality(c.bytes, c.words, s.qualityAt, s.end, n, i0, i1, out.quality);
    return m;
  }

  /** First index in [lo, hi) whose time offset is >= t (hi when none), by the anchor-free time column. */
  private firstAtOrAfter(t: number, lo: number, hi: number): number {
    if (t <= 0) return lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times.at(mid, 0, 0) < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  /** Qualities of points [i0, i1) into q[0..): in place when the column needs no anchor, else decoded whole. */
  private readQuality(bytes: Uint8Array, words: Uint32Array, at: number, end: number, n: number, i0: number, i1: number, out: Uint32Array): void {
    const r = new ChunkReader(bytes, words, at, end);
    this.qualities.parse(r, n);
    finishSection(r, 'quality');
    if (this.qualities.anchorFree) {
      this.qualities.rangeInto(i0, i1, out, this.x);
      return;
    }
    if (this.q.length < n) this.q = new Uint32Array(Math.max(n, 4096));
    const whole = new ChunkReader(bytes, words, at, end);
    decodeIntColumnTo(whole, n, this.q);
    finishSection(whole, 'quality');
    out.set(this.q.subarray(i0, i1));
  }
}

/** Last group g with firstRel[g] < t (-1: none). */
function lastGroupBelow(sm: ChunkSummary, t: number): number {
  let lo = 0, hi = sm.groups;
  while (lo < hi) { const mid = (lo + hi) >>> 1; if (sm.firstRel[mid] < t) lo = mid + 1; else hi = mid; }
  return lo - 1;
}

// the per-point loops end their functions (see raw-points-columns.ts on on-stack replacement)

/** out[j] = x[j] / divisor: the correctly rounded quotient decodeIntColumn gives (x itself at 1). */
function divide(x: Float64Array, out: Float64Array, m: number, divisor: number): void {
  if (divisor === 1) out.set(x.subarray(0, m));
  else for (let j = 0; j < m; j++) out[j] = x[j] / divisor;
}

function copyNumbers(x: Float64Array, out: Uint32Array | Int32Array | Uint8Array, m: number): void {
  for (let j = 0; j < m; j++) out[j] = x[j];
}
