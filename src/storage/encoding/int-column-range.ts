// Reading parts of an integer column without decoding the rest (layouts in int-column.ts
// and FORMAT.md). Used by render for the directory groups around a pixel-column boundary
// and for single points (the time of a group's min or max).
//
// IntColumnIndex.parse walks the column's layout once per chunk (RLE runs, or FOR block
// headers with each block's payload word), leaving the reader at the column's end; then
// range() unpacks only the blocks that overlap [from, to), and at() reads one value:
// O(1) bit extraction for FOR, a binary search of runs for RLE. FOR_DELTA needs one known
// value x[accIndex] at or before the range (the summary's group first value) and sums
// the differences from there (at most one group). A FRAME is read as FOR blocks that
// share one minimum and width: block k's 128 values start at word 4 * width * k. A RICE
// column has no random access (its codes have no fixed width): parse() decodes it whole. A
// RICE_DELTA column decodes from the checkpoint at or before the anchor, like FOR_DELTA.

import type { ChunkReader } from './byte-io.js';
import { BLOCK, FRAME_MAX_WIDTH, IntMode, wordsFor } from './int-column.js';
import { readRice } from './int-column-rice.js';
import { unpackSpan } from './int-column-decode.js';
import { RiceDeltaIndex } from './int-column-rice-delta.js';

const TWO_32 = 4294967296;

export class IntColumnIndex {
  /** RLE, FOR, FOR_DELTA, RICE or RICE_DELTA: FRAME columns are parsed into FOR's block tables. */
  private mode = 0;
  private n = 0;
  private words: Uint32Array = new Uint32Array(0);
  /** FOR / FOR_DELTA: per block its minimum, width and first payload word. */
  private blocks = 0;
  private mins = new Float64Array(128);
  private widths = new Uint8Array(128);
  private wordAt = new Int32Array(128);
  /** RLE: run k covers [runStart[k], runStart[k+1]) with runValue[k]. */
  private runs = 0;
  private runStart = new Int32Array(128);
  private runValue = new Float64Array(128);
  /** RICE: every value, decoded at parse(). */
  private all = new Float64Array(0);
  /** RICE_DELTA: decoded from the checkpoint before the anchor. */
  private readonly riceDelta = new RiceDeltaIndex();
  private readonly tmp = new Float64Array(BLOCK);

  /** Reads the layout of an n-value column at r (leaving r at its end). */
  parse(r: ChunkReader, n: number): void {
    this.n = n;
    this.words = r.words;
    const mode = r.u8('integer column mode');
    this.mode = mode === IntMode.Frame ? IntMode.For : mode === IntMode.FrameDelta ? IntMode.ForDelta : mode;
    if (mode === IntMode.Rle) this.parseRuns(r, n);
    else if (mode === IntMode.For) this.parseBlocks(r, n);
    else if (mode === IntMode.Frame) this.parseFrame(r, n);
    else if (mode === IntMode.Rice) {
      if (this.all.length < n) this.all = new Float64Array(n);
      readRice(r, n, this.all);
    } else if (mode === IntMode.RiceDelta) {
      this.riceDelta.parse(r, n);
    } else if (mode === IntMode.ForDelta || mode === IntMode.FrameDelta) {
      r.svarint('first value');
      if (mode === IntMode.ForDelta) this.parseBlocks(r, n - 1);
      else this.parseFrame(r, n - 1);
    } else r.fail(`unknown integer column mode ${mode}`);
  }

  /** A FRAME of m values as FOR blocks of 128 with one minimum and width (128 * width bits = 4 * width words each). */
  private parseFrame(r: ChunkReader, m: number): void {
    const width = r.u8('frame width');
    if (width > FRAME_MAX_WIDTH) r.fail(`frame width ${width} > ${FRAME_MAX_WIDTH}`);
    const min = r.svarint('frame minimum');
    const at = r.takeWords(wordsFor(m, width), 'packed frame words');
    const blocks = m > 0 ? Math.ceil(m / BLOCK) : 0;
    if (this.mins.length < blocks) { this.mins = new Float64Array(blocks); this.widths = new Uint8Array(blocks); this.wordAt = new Int32Array(blocks); }
    for (let k = 0; k < blocks; k++) {
      this.mins[k] = min;
      this.widths[k] = width;
      this.wordAt[k] = at + 4 * width * k;
    }
    this.blocks = blocks;
  }

  private parseRuns(r: ChunkReader, n: number): void {
    const runs = r.varint('run count');
    if (runs > n) r.fail(`${runs} runs for ${n} values`);
    if (this.runStart.length < runs + 1) { this.runStart = new Int32Array(runs + 1); this.runValue = new Float64Array(runs + 1); }
    let pos = 0, v = 0;
    for (let k = 0; k < runs; k++) {
      v += r.svarint('run value');
      const len = r.varint('run length');
      if (len === 0 || pos + len > n) r.fail(`run of ${len} points overflows ${n} points`);
      this.runStart[k] = pos;
      this.runValue[k] = v;
      pos += len;
    }
    if (pos !== n) r.fail(`runs cover ${pos} of ${n} points`);
    this.runStart[runs] = n;
    this.runs = runs;
  }

  private parseBlocks(r: ChunkReader, m: number): void {
    const blocks = m > 0 ? Math.ceil(m / BLOCK) : 0;
    if (this.mins.length < blocks) { this.mins = new Float64Array(blocks); this.widths = new Uint8Array(blocks); this.wordAt = new Int32Array(blocks); }
    let total = 0, prevMin = 0;
    for (let k = 0; k < blocks; k++) {
      const width = r.u8('block width');
      if (width > 53) r.fail(`block width ${width} > 53`);
      prevMin += r.svarint('block minimum');
      this.mins[k] = prevMin;
      this.widths[k] = width;
      this.wordAt[k] = total;
      total += wordsFor(Math.min(BLOCK, m - k * BLOCK), width);
    }
    const at = r.takeWords(total, 'packed block words');
    for (let k = 0; k < blocks; k++) this.wordAt[k] += at;
    this.blocks = blocks;
  }

  /** out[j - from] = x[j] for j in [from, to); x[accIndex] = accValue (accIndex <= from) anchors FOR_DELTA. */
  range(from: number, to: number, out: Float64Array, accIndex: number, accValue: number): void {
    if (this.mode === IntMode.RiceDelta) this.riceDelta.range(from, to, out, accIndex, accValue);
    else if (this.mode === IntMode.Rice) {
      for (let j = from; j < to; j++) out[j - from] = this.all[j];
    } else if (this.mode === IntMode.Rle) {
      for (let k = this.runAt(from), j = from; j < to; k++) {
        const e = this.runStart[k + 1] < to ? this.runStart[k + 1] : to, v = this.runValue[k];
        for (; j < e; j++) out[j - from] = v;
      }
    } else if (this.mode === IntMode.For) {
      for (let k = from >> 7; k < this.blocks && k * BLOCK < to; k++) {
        const s = k * BLOCK;
        const a = from > s ? from : s, b = to < s + BLOCK ? to : s + BLOCK;
        const width = this.widths[k];
        // widths 0..31 stream from the first bit wanted (a raw read's window: most of its points come through here)
        if (width < 32) unpackSpan(this.words, this.wordAt[k], a - s, b - a, width, this.mins[k], out, a - from);
        else {
          this.unpack(k);
          for (let j = a; j < b; j++) out[j - from] = this.tmp[j - s];
        }
      }
    } else {
      // differences d[i] = x[i+1] - x[i] at index i; x[from..to) from x[accIndex]
      let acc = accValue;
      if (accIndex === from) out[0] = acc;
      for (let k = accIndex >> 7; k < this.blocks && k * BLOCK < to - 1; k++) {
        const s = k * BLOCK;
        this.unpack(k);
        const a = accIndex > s ? accIndex : s, b = to - 1 < s + BLOCK ? to - 1 : s + BLOCK;
        for (let j = a; j < b; j++) {
          acc += this.tmp[j - s];
          if (j + 1 >= from) out[j + 1 - from] = acc;
        }
      }
    }
  }

  /**
   * range() into a narrow typed column, anchor-free layouts only: runs fill it directly
   * (a quality column is mostly one run), others pass through `tmp` (at least to - from long).
   */
  rangeInto(from: number, to: number, out: Uint32Array | Int32Array | Uint8Array, tmp: Float64Array): void {
    if (this.mode === IntMode.Rle) {
      for (let k = this.runAt(from), j = from; j < to; k++) {
        const e = this.runStart[k + 1] < to ? this.runStart[k + 1] : to;
        out.fill(this.runValue[k], j - from, e - from);
        j = e;
      }
      return;
    }
    this.range(from, to, tmp, 0, 0);
    for (let j = 0; j < to - from; j++) out[j] = tmp[j];
  }

  /** Whether at() and range() need no anchor (every layout but FOR_DELTA and RICE_DELTA). */
  get anchorFree(): boolean {
    return this.mode !== IntMode.ForDelta && this.mode !== IntMode.RiceDelta;
  }

  get isRle(): boolean {
    return this.mode === IntMode.Rle;
  }

  /**
   * RLE only: indexes of the first min and first max of x[from, to) into out[0], out[1],
   * from the runs alone.
   */
  runExtremes(from: number, to: number, out: Int32Array): void {
    let k = this.runAt(from), lo = k, hi = k;
    for (k++; k < this.runs && this.runStart[k] < to; k++) {
      if (this.runValue[k] < this.runValue[lo]) lo = k;
      else if (this.runValue[k] > this.runValue[hi]) hi = k;
    }
    out[0] = this.runStart[lo] > from ? this.runStart[lo] : from;
    out[1] = this.runStart[hi] > from ? this.runStart[hi] : from;
  }

  /** x[i], anchored like range(). */
  at(i: number, accIndex: number, accValue: number): number {
    if (this.mode === IntMode.RiceDelta) return this.riceDelta.at(i, accIndex, accValue);
    if (this.mode === IntMode.Rice) return this.all[i];
    if (this.mode === IntMode.Rle) return this.runValue[this.runAt(i)];
    if (this.mode === IntMode.For) {
      const k = i >> 7, width = this.widths[k];
      if (width > 32) {
        this.unpack(k);
        return this.tmp[i - k * BLOCK];
      }
      return this.mins[k] + extract(this.words, this.wordAt[k], (i - k * BLOCK) * width, width);
    }
    let acc = accValue;
    for (let j = accIndex; j < i; j++) {
      const k = j >> 7, width = this.widths[k];
      acc += width > 32 ? (this.unpack(k), this.tmp[j - k * BLOCK]) : this.mins[k] + extract(this.words, this.wordAt[k], (j - k * BLOCK) * width, width);
    }
    return acc;
  }

  /** The run holding index i (binary search). */
  private runAt(i: number): number {
    let lo = 0, hi = this.runs - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.runStart[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  /** Block k's values (min + packed) into tmp: the bit layout of FORMAT.md. */
  private unpack(k: number): void {
    const tmp = this.tmp, words = this.words, at = this.wordAt[k], min = this.mins[k], width = this.widths[k];
    const m = this.mode === IntMode.ForDelta ? this.n - 1 : this.n;
    const len = Math.min(BLOCK, m - k * BLOCK);
    if (width === 0) {
      for (let j = 0; j < len; j++) tmp[j] = min;
      return;
    }
    const lowWidth = width <= 32 ? width : 32;
    for (let j = 0; j < len; j++) tmp[j] = min + extract(words, at, j * lowWidth, lowWidth);
    if (width <= 32) return;
    const hiAt = at + len, hiWidth = width - 32;
    for (let j = 0; j < len; j++) tmp[j] += extract(words, hiAt, j * hiWidth, hiWidth) * TWO_32;
  }
}

/** The `width`-bit value (1..32) at stream bit `bit` of the words from word index `at`. */
function extract(words: Uint32Array, at: number, bit: number, width: number): number {
  if (width === 0) return 0;
  const wi = at + (bit >>> 5), sh = bit & 31;
  let v = words[wi] >>> sh;
  if (sh + width > 32) v |= words[wi + 1] << (32 - sh);
  return width === 32 ? v >>> 0 : (v & ((1 << width) - 1)) >>> 0;
}
