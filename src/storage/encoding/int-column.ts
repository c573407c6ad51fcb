// One integer column codec shared by times, decimal-scaled floats, float parts, int64
// fast path, booleans, enum ordinals, string dictionary indexes and quality.
//
// Input: integers held in a Float64Array, |x| < 2^52 (so every intermediate below stays
// an exact double). The encoder measures the exact size of every layout and writes the
// smallest:
//   RLE          runs of equal values: cheap for setpoints, states, enums, quality.
//   FOR          blocks of 128 values, each stored as (value - block min) bit-packed at
//                the block's width: values whose spread changes along the column.
//   FRAME        one block for the whole column (one width, one min, widths up to 32):
//                jittered timestamps around a grid, steady noise, where FOR's 2-3 bytes
//                of header per 128 values buy nothing (format version 4).
//   FOR_DELTA    FOR over first differences: cheap for wandering analog values and
//   FRAME_DELTA  counters (and FRAME over them). Allowed only when |x| < 2^51 so
//                differences stay exact.
//   RICE         Golomb-Rice codes of the distance from the minimum or the maximum, for
//                columns crowded at one end (float exponents; int-column-rice.ts).
//   RICE_DELTA   the same codes over first differences, or over differences zigzagged
//                around their mean: fine-resolution plant values and counters, whose
//                differences crowd around one value (format version 5;
//                int-column-rice-delta.ts).
// Layouts are drawn in FORMAT.md ("Integer column"); decoding is in int-column-decode.ts.

import { ChunkWriter, svarintLen, varintLen } from './byte-io.js';
import { newRiceChoice, sizeRice, writeRice } from './int-column-rice.js';
import { sizeRiceDelta } from './int-column-rice-delta.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

/** 2^32, local to the module: a constant imported across modules can cost a getter per use. */
const TWO_32 = 4294967296;

export const INT_COLUMN_LIMIT = 2 ** 52;
const DELTA_LIMIT = 2 ** 51;
export const BLOCK = 128;

export const IntMode = { Rle: 0, For: 1, ForDelta: 2, Frame: 3, FrameDelta: 4, Rice: 5, RiceDelta: 6 } as const;

/** Widest FRAME: its payload is one plane of words (FOR's wide split is not worth a second form). */
export const FRAME_MAX_WIDTH = 32;

function bitWidth(range: number): number {
  if (range < TWO_32) return 32 - Math.clz32(range);
  return 64 - Math.clz32(Math.floor(range / TWO_32));
}

export function wordsFor(len: number, w: number): number {
  return w <= 32 ? Math.ceil((len * w) / 32) : len + Math.ceil((len * (w - 32)) / 32);
}

/** Bytes of a FRAME of n values within [min, max] (width byte, min, payload; padding excluded), or Infinity above 32 bits. */
function frameSize(min: number, max: number, n: number): number {
  const width = bitWidth(max - min);
  return width > FRAME_MAX_WIDTH ? Infinity : 1 + svarintLen(min) + 4 * wordsFor(n, width);
}

/** Bytes of the FOR block headers and payload for src[s..s+n), excluding padding. */
function forSize(src: Float64Array, s: number, n: number): number {
  let size = 0;
  let prevMin = 0;
  for (let b = 0; b < n; b += BLOCK) {
    const len = Math.min(BLOCK, n - b);
    let min = src[s + b];
    let max = min;
    for (let j = 1; j < len; j++) {
      const v = src[s + b + j];
      if (v < min) min = v;
      else if (v > max) max = v;
    }
    size += 1 + svarintLen(min - prevMin) + 4 * wordsFor(len, bitWidth(max - min));
    prevMin = min;
  }
  return size;
}

/** Bytes of the RLE layout of x[0..n), or Infinity as soon as they pass `limit` (a noisy column stops early). */
function rleSize(x: Float64Array, n: number, limit: number): number {
  let size = 0;
  let runs = 0;
  let prev = 0;
  let i = 0;
  while (i < n) {
    const v = x[i];
    let j = i + 1;
    while (j < n && x[j] === v) j++;
    size += svarintLen(v - prev) + varintLen(j - i);
    if (size > limit) return Infinity;
    runs++;
    prev = v;
    i = j;
  }
  return size + varintLen(runs);
}

const riceChoice = newRiceChoice();
const riceDeltaChoice = newRiceChoice();

/**
 * A column's figures, kept as doubles in typed arrays: V8 then compiles the chooser below
 * once. With the loops inline, a seal's first columns (small values) taught it int32
 * compares, a time column's values past 2^31 threw that code away, and the loop's
 * on-stack-replaced code (entered again on every call) bailed out again at each layout
 * its first columns had never chosen: 65 bailouts and 5-9 compilations a bulk load.
 */
const stats = new Float64Array(4); // maxAbs, min, max, sum
const deltaStats = new Float64Array(4); // dMin, dMax, dSum, dAbs

function measureColumn(x: Float64Array, n: number): void {
  let maxAbs = 0;
  let min = x[0];
  let max = min;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
    if (v < min) min = v;
    else if (v > max) max = v;
    sum += v;
  }
  stats[0] = maxAbs; stats[1] = min; stats[2] = max; stats[3] = sum;
}

/** deltas[i - 1] = x[i] - x[i - 1] for 1 <= i < n (n >= 2), and their figures. */
function measureDeltas(x: Float64Array, n: number, deltas: Float64Array): void {
  let dMin = x[1] - x[0];
  let dMax = dMin;
  let dSum = 0;
  let dAbs = 0;
  for (let i = 1; i < n; i++) {
    const d = x[i] - x[i - 1];
    deltas[i - 1] = d;
    dSum += d;
    dAbs += Math.abs(d);
    if (d < dMin) dMin = d;
    else if (d > dMax) dMax = d;
  }
  deltaStats[0] = dMin; deltaStats[1] = dMax; deltaStats[2] = dSum; deltaStats[3] = dAbs;
}

/** Encodes x[0..n) (n >= 1) as the smallest layout (ties: RLE, FRAME, FOR, FRAME_DELTA, FOR_DELTA, RICE, RICE_DELTA). */
export function encodeIntColumn(w: ChunkWriter, x: Float64Array, n: number): void {
  measureColumn(x, n);
  const maxAbs = stats[0], min = stats[1], max = stats[2], sum = stats[3];
  if (!(maxAbs < INT_COLUMN_LIMIT)) throw new Error(`BUG: integer column value ${maxAbs} outside +-2^52`);
  // Padding before the payload words is at most 3 bytes; count it fully so ties favour RLE.
  let best: number = IntMode.Frame;
  let bestSize = frameSize(min, max, n) + 3;
  const forBytes = forSize(x, 0, n) + 3;
  if (forBytes < bestSize) {
    best = IntMode.For;
    bestSize = forBytes;
  }
  let deltas: Float64Array | null = null;
  if (maxAbs < DELTA_LIMIT) {
    const rle = rleSize(x, n, bestSize);
    if (rle <= bestSize) {
      best = IntMode.Rle;
      bestSize = rle;
    }
    if (n > 1) {
      deltas = scratchColumn(ScratchSlot.IntDeltas, n);
      measureDeltas(x, n, deltas);
      const first = svarintLen(x[0]) + 3;
      const f = first + frameSize(deltaStats[0], deltaStats[1], n - 1);
      if (f < bestSize) {
        best = IntMode.FrameDelta;
        bestSize = f;
      }
      const d = first + forSize(deltas, 0, n - 1);
      if (d < bestSize) {
        best = IntMode.ForDelta;
        bestSize = d;
      }
    }
    sizeRice(riceChoice, x, n, min, max, sum);
    if (riceChoice.size + 3 < bestSize) {
      best = IntMode.Rice;
      bestSize = riceChoice.size + 3;
    }
    if (deltas !== null) {
      sizeRiceDelta(riceDeltaChoice, deltas, n - 1, deltaStats[0], deltaStats[1], deltaStats[2], deltaStats[3], bestSize - svarintLen(x[0]) - 3);
      const size = svarintLen(x[0]) + riceDeltaChoice.size + 3;
      if (size < bestSize) {
        best = IntMode.RiceDelta;
        bestSize = size;
      }
    }
  }
  w.u8(best);
  writeLayout(w, x, n, best, deltas);
}

/**
 * Writes the chosen layout. The cases are the IntMode numbers as literals: V8 turns a switch
 * over literal small integers into a jump table that needs no type feedback, where a chain
 * of `best === IntMode.X` bailed out at each compare the first columns never reached.
 */
function writeLayout(w: ChunkWriter, x: Float64Array, n: number, best: number, deltas: Float64Array | null): void {
  switch (best) {
    case 0: // IntMode.Rle
      writeRle(w, x, n);
      return;
    case 1: // IntMode.For
      writeFor(w, x, n);
      return;
    case 2: // IntMode.ForDelta
      w.svarint(x[0]);
      writeFor(w, deltas as Float64Array, n - 1);
      return;
    case 3: // IntMode.Frame
      writeFrame(w, x, n);
      return;
    case 4: // IntMode.FrameDelta
      w.svarint(x[0]);
      writeFrame(w, deltas as Float64Array, n - 1);
      return;
    case 5: // IntMode.Rice
      writeRice(w, x, n, riceChoice);
      return;
    default: // IntMode.RiceDelta
      w.svarint(x[0]);
      writeRice(w, deltas as Float64Array, n - 1, riceDeltaChoice, true);
  }
}

/** One frame: width, min, then the payload words of all n values (the FOR block bit layout). */
function writeFrame(w: ChunkWriter, src: Float64Array, n: number): void {
  let min = src[0];
  let max = min;
  for (let i = 1; i < n; i++) {
    const v = src[i];
    if (v < min) min = v;
    else if (v > max) max = v;
  }
  const width = bitWidth(max - min);
  w.u8(width);
  w.svarint(min);
  const at = w.reserveWords(wordsFor(n, width));
  packBlock(w.words, at, src, 0, n, min, width);
}

function writeRle(w: ChunkWriter, x: Float64Array, n: number): void {
  let runs = 0;
  for (let i = 1; i <= n; i++) if (i === n || x[i] !== x[i - 1]) runs++;
  w.varint(runs);
  let prev = 0;
  let i = 0;
  while (i < n) {
    const v = x[i];
    let j = i + 1;
    while (j < n && x[j] === v) j++;
    w.svarint(v - prev);
    w.varint(j - i);
    prev = v;
    i = j;
  }
}

function writeFor(w: ChunkWriter, src: Float64Array, n: number): void {
  const blocks = Math.ceil(n / BLOCK);
  // Two passes: all block headers first, then the aligned payload words, so the decoder
  // walks headers with a byte cursor and payload with a word cursor.
  let totalWords = 0;
  let prevMin = 0;
  const mins = scratchColumn(ScratchSlot.BlockMeta, blocks * 2);
  for (let k = 0; k < blocks; k++) {
    const s = k * BLOCK;
    const len = Math.min(BLOCK, n - s);
    let min = src[s];
    let max = min;
    for (let j = 1; j < len; j++) {
      const v = src[s + j];
      if (v < min) min = v;
      else if (v > max) max = v;
    }
    const width = bitWidth(max - min);
    mins[2 * k] = min;
    mins[2 * k + 1] = width;
    w.u8(width);
    // Block minimums drift slowly (a series' level, a time grid's phase): store the change.
    w.svarint(min - prevMin);
    prevMin = min;
    totalWords += wordsFor(len, width);
  }
  let at = w.reserveWords(totalWords);
  const words = w.words;
  for (let k = 0; k < blocks; k++) {
    const s = k * BLOCK;
    const len = Math.min(BLOCK, n - s);
    const width = mins[2 * k + 1];
    packBlock(words, at, src, s, len, mins[2 * k], width);
    at += wordsFor(len, width);
  }
}

function packBlock(words: Uint32Array, at: number, src: Float64Array, s: number, len: number, min: number, width: number): void {
  if (width === 0) return;
  const lowWidth = width <= 32 ? width : 32;
  let bit = 0;
  for (let j = 0; j < len; j++) {
    const v = src[s + j] - min;
    const lo = width <= 32 ? v : v % TWO_32;
    const wi = at + (bit >>> 5);
    const sh = bit & 31;
    words[wi] |= lo << sh;
    if (sh + lowWidth > 32) words[wi + 1] |= lo >>> (32 - sh);
    bit += lowWidth;
  }
  if (width <= 32) return;
  // Wide values: a plane of low words (above) then the high bits packed at width - 32.
  const hiWidth = width - 32;
  const hiAt = at + len;
  bit = 0;
  for (let j = 0; j < len; j++) {
    const hi = Math.floor((src[s + j] - min) / TWO_32);
    const wi = hiAt + (bit >>> 5);
    const sh = bit & 31;
    words[wi] |= hi << sh;
    if (sh + hiWidth > 32) words[wi + 1] |= hi >>> (32 - sh);
    bit += hiWidth;
  }
}
