// The chunk summary (format versions 2 and 3): what render needs from a chunk without decoding
// its columns, beyond the fixed header. Layout in FORMAT.md ("Summary section").
//
// - nonGoodNs and the last point's quality class: a whole chunk's contribution to the
//   time-weighted percent good, so a chunk with a quality fault inside one pixel column is
//   answered from its header like any other (in v1 such chunks were decoded).
// - A group directory: per 256 points, the first point's time and value and the group's
//   min and max with their index. A chunk that straddles a pixel-column boundary then
//   decodes only the group around the boundary and answers the other groups from here.
//   Written only when the value section is one integer column (decimal floats, int64
//   within +-2^51, booleans, enums) and the chunk has more than one group.
// The section lies right after the header fields and the header CRC covers both, so a
// header-only reader checks it with one CRC of ~50-300 bytes, without a checksum of the
// whole chunk.

import { ChunkReader, type ChunkWriter } from './byte-io.js';
import { GOOD_QUALITY } from './chunk-header.js';

/** log2 of the points per directory group: 256 (two integer-column blocks). Measured in bench/render.ts. */
export const GROUP_SHIFT = 8;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const MAX_GROUPS = 16384 >> 1;

/**
 * Writes the summary of points [0, n): rel = time offsets from the first point, q = quality,
 * x = the value column's integers (value = x / 10^k) when k >= 0, unit = the time column's unit.
 */
export function encodeSummary(w: ChunkWriter, rel: Float64Array, q: ArrayLike<number>, x: Float64Array, k: number, valueRle: boolean, unit: number, n: number): void {
  let nonGood = 0;
  for (let i = 0; i + 1 < n; i++) if (q[i] < GOOD_QUALITY) nonGood += rel[i + 1] - rel[i];
  w.varint(nonGood);
  w.u8(q[n - 1] >= GOOD_QUALITY ? 1 : 0);
  const G = 1 << GROUP_SHIFT;
  // Run-length values (setpoints, states) would pay ~4 B per group for little: render
  // decodes such straddling chunks whole (their values cost nothing to decode).
  if (k < 0 || valueRle || n <= G) {
    w.u8(0);
  } else {
    w.u8(GROUP_SHIFT);
    w.u8(k);
    w.varint(unit);
    const groups = Math.ceil(n / G);
    const stride = Math.round((rel[(groups - 1) * G] / unit) / (groups - 1));
    w.varint(stride);
    let prevU = 0, prevX = 0;
    for (let g = 0; g < groups; g++) {
      const s = g * G, e = Math.min(n, s + G);
      const u = rel[s] / unit;
      if (g > 0) w.svarint(u - prevU - stride);
      prevU = u;
      let minI = s, maxI = s;
      for (let i = s + 1; i < e; i++) {
        if (x[i] < x[minI]) minI = i;
        else if (x[i] > x[maxI]) maxI = i;
      }
      w.svarint(x[s] - prevX);
      prevX = x[s];
      // When the first point holds the min (max), its index is 0 and is not written.
      w.varint(x[s] - x[minI]);
      w.varint(x[maxI] - x[s]);
      if (x[minI] !== x[s]) w.u8(minI - s);
      if (x[maxI] !== x[s]) w.u8(maxI - s);
    }
  }
  // The zero padding to a multiple of 4 and the header CRC follow (assembleV3).
}

/**
 * A parsed summary, reused across chunks (typed arrays grow on demand). Group g holds
 * points [g*G, min(count, (g+1)*G)); its times are ns offsets from the chunk's first time
 * and its values the numeric view.
 */
export class ChunkSummary {
  nonGoodNs = 0;
  lastGood = false;
  /** 0 when the chunk has no group directory. */
  groups = 0;
  groupShift = 0;
  /** Section offsets of the chunk the summary was read from (readChunkSummary). */
  timesAt = 0;
  valuesAt = 0;
  qualityAt = 0;
  /** Value divisor 10^k and time unit (ns) of the integer columns. */
  divisor = 1;
  unit = 1;
  /** x (integer domain) of each group's first point: the accumulator to decode from it. */
  firstX = new Float64Array(64);
  firstRel = new Float64Array(64);
  firstV = new Float64Array(64);
  minV = new Float64Array(64);
  maxV = new Float64Array(64);
  minIdx = new Int32Array(64);
  maxIdx = new Int32Array(64);

  private grow(groups: number): void {
    if (this.firstX.length >= groups) return;
    const n = Math.max(groups, this.firstX.length * 2);
    this.firstX = new Float64Array(n); this.firstRel = new Float64Array(n); this.firstV = new Float64Array(n);
    this.minV = new Float64Array(n); this.maxV = new Float64Array(n);
    this.minIdx = new Int32Array(n); this.maxIdx = new Int32Array(n);
  }

  private pending: ChunkReader | null = null;
  private count = 0;

  /**
   * Parses the summary r covers (the header CRC, checked by the caller, covers it) of a
   * chunk of `count` points. The group directory is parsed by loadDirectory(), only for chunks that
   * need it, before the bytes change.
   */
  read(r: ChunkReader, count: number): void {
    const bytes = r.bytes;
    this.nonGoodNs = r.varint('non-good time');
    const flags = r.u8('summary flags');
    if (flags > 1) r.fail(`unknown summary flags ${flags}`);
    this.lastGood = flags === 1;
    const shift = r.u8('group shift');
    this.groupShift = shift;
    this.groups = 0;
    this.pending = null;
    this.count = count;
    if (shift !== 0) {
      if (shift > 8) r.fail(`group shift ${shift} > 8`);
      const groups = Math.ceil(count / (1 << shift));
      if (groups < 2 || groups > MAX_GROUPS) r.fail(`${groups} groups for ${count} points`);
      this.groups = groups;
      this.pending = new ChunkReader(bytes, r.words, r.pos, r.end);
    } else endOfSummary(r);
    r.pos = r.end;
  }

  /** Parses the group directory of the chunk last read (no-op when already parsed or absent). */
  loadDirectory(): void {
    const r = this.pending;
    if (r === null) return;
    this.pending = null;
    const G = 1 << this.groupShift, groups = this.groups, count = this.count;
    const k = r.u8('value scale');
    if (k > 9) r.fail(`value scale ${k} > 9`);
    const div = POW10[k];
    const unit = r.varint('summary time unit');
    if (unit === 0) r.fail('summary time unit 0');
    const stride = r.varint('group stride');
    this.grow(groups);
    this.divisor = div;
    this.unit = unit;
    let u = 0, x = 0;
    for (let g = 0; g < groups; g++) {
      if (g > 0) u += stride + r.svarint('group time');
      x += r.svarint('group first value');
      const dLo = r.varint('group min'), dHi = r.varint('group max');
      const len = Math.min(G, count - g * G);
      const mi = dLo === 0 ? 0 : r.u8('group min index'), ma = dHi === 0 ? 0 : r.u8('group max index');
      if (mi >= len || ma >= len) r.fail(`group ${g} extreme index out of its ${len} points`);
      this.firstX[g] = x;
      this.firstRel[g] = u * unit;
      this.firstV[g] = x / div;
      this.minV[g] = (x - dLo) / div;
      this.maxV[g] = (x + dHi) / div;
      this.minIdx[g] = g * G + mi;
      this.maxIdx[g] = g * G + ma;
    }
    endOfSummary(r);
  }
}

/** Only the zero padding (0..3 bytes) may follow the summary's content. */
function endOfSummary(r: ChunkReader): void {
  if (r.end - r.pos > 3) r.fail(`summary section has ${r.end - r.pos} unread bytes`);
  while (r.pos < r.end) if (r.u8('summary padding') !== 0) r.fail('non-zero summary padding');
}
