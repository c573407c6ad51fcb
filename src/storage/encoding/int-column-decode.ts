// Decoding of the integer column (layouts in int-column.ts and FORMAT.md).
//
// This is the decode hot path: a chunk's times and numeric values both pass through it.
// Each consumer's final arithmetic is fused into the bit-unpacking loop instead of a
// second pass over the column: plain values, values divided by 10^k (decimal floats),
// running sums (FOR_DELTA) with or without that division, and grid times
// (r + i*P) * unit. The kernels repeat the same streaming unpack on purpose: V8 does not
// inline a per-value callback reliably, and each variant measured ~1.5 ns/value faster
// than unpack-then-transform (bench/codec.ts, 2026-11-21). Runs (RLE) and constant blocks
// (width 0) go through the sink once per run: a steady decimal series otherwise paid a
// division per point after filling.

import type { ChunkReader } from './byte-io.js';
import { BLOCK, FRAME_MAX_WIDTH, IntMode, wordsFor } from './int-column.js';
import { readRice } from './int-column-rice.js';
import { readRiceDelta } from './int-column-rice-delta.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

/** 2^32, local to the module: a constant imported across modules can cost a getter per use. */
const TWO_32 = 4294967296;

/** What happens to each decoded integer x_i before it is stored at out[i]. */
const Sink = { Plain: 0, Scale: 1, Grid: 2 } as const;
type Sink = (typeof Sink)[keyof typeof Sink];

/** Decodes n values into out[0..n), each divided by `divisor` when it is not 1. */
export function decodeIntColumn(r: ChunkReader, n: number, out: Float64Array, divisor = 1): void {
  decodeInto(r, n, out, divisor === 1 ? Sink.Plain : Sink.Scale, divisor, 0);
}

/** Decodes grid-time residuals straight into offsets: out[i] = (x_i + i*period) * unit. */
export function decodeGridColumn(r: ChunkReader, n: number, out: Float64Array, period: number, unit: number): void {
  decodeInto(r, n, out, period === 0 && unit === 1 ? Sink.Plain : Sink.Grid, period, unit);
}

function decodeInto(r: ChunkReader, n: number, out: Float64Array, sink: Sink, a: number, b: number): void {
  const mode = r.u8('integer column mode');
  if (mode === IntMode.Rle) {
    readRle(r, n, out, sink, a, b);
  } else if (mode === IntMode.For) {
    readFor(r, n, out, sink, a, b);
  } else if (mode === IntMode.Frame) {
    readFrame(r, n, out, sink, a, b);
  } else if (mode === IntMode.ForDelta) {
    readForDelta(r, n, out, sink, a, b);
  } else if (mode === IntMode.FrameDelta) {
    readFrameDelta(r, n, out, sink, a, b);
  } else if (mode === IntMode.Rice) {
    readRice(r, n, out);
    if (sink !== Sink.Plain) finish(out, 0, n, sink, a, b);
  } else if (mode === IntMode.RiceDelta) {
    readRiceDelta(r, n, out, sink === Sink.Scale ? a : 1);
    if (sink === Sink.Grid) finish(out, 0, n, sink, a, b);
  } else r.fail(`unknown integer column mode ${mode}`);
}

/** The columns integers decode into: the float column, or a narrow one (Sink.Plain only). */
type IntOut = Float64Array | Uint32Array | Int32Array | Uint8Array;

/** out[s..e) = x, a constant integer, through the sink: one division per run, not per point. */
function fillSunk(out: IntOut, s: number, e: number, x: number, sink: Sink, a: number, b: number): void {
  if (sink === Sink.Grid) for (let i = s; i < e; i++) out[i] = (x + i * a) * b;
  else out.fill(sink === Sink.Scale ? x / a : x, s, e);
}

/** Applies the sink to out[s..s+len) holding plain integers. */
function finish(out: Float64Array, s: number, len: number, sink: Sink, a: number, b: number): void {
  const e = s + len;
  if (sink === Sink.Scale) for (let i = s; i < e; i++) out[i] = out[i] / a;
  else if (sink === Sink.Grid) for (let i = s; i < e; i++) out[i] = (out[i] + i * a) * b;
}

/** Decodes into a narrower typed column: runs fill it directly, packed layouts go through scratch. */
export function decodeIntColumnTo(r: ChunkReader, n: number, out: Uint32Array | Int32Array | Uint8Array): void {
  if (r.pos < r.end && r.bytes[r.pos] === IntMode.Rle) {
    r.pos++;
    readRle(r, n, out, Sink.Plain, 1, 0);
    return;
  }
  const tmp = scratchColumn(ScratchSlot.IntTyped, n);
  decodeIntColumn(r, n, tmp);
  out.set(tmp.subarray(0, n));
}

/**
 * RLE into out, each run through the sink: x / 10^k is one double for the whole run, so a
 * steady decimal column costs a division per run. Narrow columns (quality, ordinals) only
 * ever take Sink.Plain.
 */
function readRle(r: ChunkReader, n: number, out: IntOut, sink: Sink, a: number, b: number): void {
  const runs = r.varint('run count');
  let pos = 0;
  let v = 0;
  for (let k = 0; k < runs; k++) {
    v += r.svarint('run value');
    const len = r.varint('run length');
    if (len === 0 || pos + len > n) r.fail(`run of ${len} points overflows ${n} points`);
    fillSunk(out, pos, pos + len, v, sink, a, b);
    pos += len;
  }
  if (pos !== n) r.fail(`runs cover ${pos} of ${n} points`);
}

/** Reads the block headers of n values; returns the word index of the first payload word. */
function readBlockHeaders(r: ChunkReader, n: number, meta: Float64Array): number {
  const blocks = Math.ceil(n / BLOCK);
  let totalWords = 0;
  let prevMin = 0;
  for (let k = 0; k < blocks; k++) {
    const width = r.u8('block width');
    if (width > 53) r.fail(`block width ${width} > 53`);
    prevMin += r.svarint('block minimum');
    meta[2 * k] = prevMin;
    meta[2 * k + 1] = width;
    totalWords += wordsFor(Math.min(BLOCK, n - k * BLOCK), width);
  }
  return r.takeWords(totalWords, 'packed block words');
}

function readFor(r: ChunkReader, n: number, out: Float64Array, sink: Sink, a: number, b: number): void {
  const meta = scratchColumn(ScratchSlot.BlockMeta, Math.ceil(n / BLOCK) * 2);
  let at = readBlockHeaders(r, n, meta);
  const words = r.words;
  for (let s = 0, k = 0; s < n; s += BLOCK, k++) {
    const len = Math.min(BLOCK, n - s);
    const min = meta[2 * k];
    const width = meta[2 * k + 1];
    if (width === 0) fillSunk(out, s, s + len, min, sink, a, b);
    else if (width > 31) {
      if (width === 32) for (let j = 0; j < len; j++) out[s + j] = min + words[at + j];
      else unpackWide(words, at, out, s, len, min, width);
      finish(out, s, len, sink, a, b);
    } else if (sink === Sink.Plain) unpackSpan(words, at, 0, len, width, min, out, s);
    else if (sink === Sink.Grid) unpackGrid(words, at, out, s, len, min, width, a, b);
    else unpackScale(words, at, out, s, len, min, width, a);
    at += wordsFor(len, width);
  }
}

// The frame readFrameHeader last read (module-level: the decoders are synchronous).
let frameMin = 0;
let frameWidth = 0;

/** Reads a frame's width and minimum (into frameWidth, frameMin); returns the word index of its payload. */
function readFrameHeader(r: ChunkReader, n: number): number {
  const width = r.u8('frame width');
  if (width > FRAME_MAX_WIDTH) r.fail(`frame width ${width} > ${FRAME_MAX_WIDTH}`);
  frameMin = r.svarint('frame minimum');
  frameWidth = width;
  return r.takeWords(wordsFor(n, width), 'packed frame words');
}

/** One FOR block as long as the column: a single kernel call over all n values. */
function readFrame(r: ChunkReader, n: number, out: Float64Array, sink: Sink, a: number, b: number): void {
  const at = readFrameHeader(r, n);
  const min = frameMin;
  const width = frameWidth;
  const words = r.words;
  if (width === 0) fillSunk(out, 0, n, min, sink, a, b);
  else if (width === 32) {
    for (let j = 0; j < n; j++) out[j] = min + words[at + j];
    finish(out, 0, n, sink, a, b);
  } else if (sink === Sink.Plain) unpackSpan(words, at, 0, n, width, min, out, 0);
  else if (sink === Sink.Grid) unpackGrid(words, at, out, 0, n, min, width, a, b);
  else unpackScale(words, at, out, 0, n, min, width, a);
}

function readFrameDelta(r: ChunkReader, n: number, out: Float64Array, sink: Sink, a: number, b: number): void {
  let acc = r.svarint('first value');
  out[0] = acc;
  const m = n - 1;
  const at = readFrameHeader(r, m);
  const min = frameMin;
  const width = frameWidth;
  const words = r.words;
  if (m > 0) {
    if (width === 0 || width === 32) {
      for (let i = 1; i < n; i++) {
        acc += width === 0 ? min : min + words[at + i - 1];
        out[i] = sink === Sink.Scale ? acc / a : acc;
      }
    } else if (sink === Sink.Scale) unpackSumScale(words, at, out, 1, m, min, width, acc, a);
    else unpackSum(words, at, out, 1, m, min, width, acc);
  }
  if (sink === Sink.Grid) finish(out, 0, n, sink, a, b);
  else if (sink === Sink.Scale) out[0] = out[0] / a;
}

function readForDelta(r: ChunkReader, n: number, out: Float64Array, sink: Sink, a: number, b: number): void {
  let acc = r.svarint('first value');
  out[0] = acc;
  if (n > 1) {
    const m = n - 1;
    const meta = scratchColumn(ScratchSlot.BlockMeta, Math.ceil(m / BLOCK) * 2);
    let at = readBlockHeaders(r, m, meta);
    const words = r.words;
    for (let s = 0, k = 0; s < m; s += BLOCK, k++) {
      const len = Math.min(BLOCK, m - s);
      const min = meta[2 * k];
      const width = meta[2 * k + 1];
      // Differences land at out[1 + s + j]; the running sum is carried across blocks.
      if (width === 0 || width > 31) {
        if (width === 0) out.fill(min, 1 + s, 1 + s + len);
        else if (width === 32) for (let j = 0; j < len; j++) out[1 + s + j] = min + words[at + j];
        else unpackWide(words, at, out, 1 + s, len, min, width);
        const e = 1 + s + len;
        if (sink === Sink.Scale) {
          for (let i = 1 + s; i < e; i++) {
            acc += out[i];
            out[i] = acc / a;
          }
        } else {
          for (let i = 1 + s; i < e; i++) {
            acc += out[i];
            out[i] = acc;
          }
        }
      } else if (sink === Sink.Scale) acc = unpackSumScale(words, at, out, 1 + s, len, min, width, acc, a);
      else acc = unpackSum(words, at, out, 1 + s, len, min, width, acc);
      at += wordsFor(len, width);
    }
  }
  // Grid times over differences (irregular series) apply the grid to the finished sums.
  if (sink === Sink.Grid) finish(out, 0, n, sink, a, b);
  else if (sink === Sink.Scale) out[0] = out[0] / a;
}

// Kernels for widths 1..31. Each streams the payload through one 32-bit register `buf`
// holding `avail` unread bits: a value either fits in buf or takes its high bits from the
// next word. out[o + j] receives value j of the block; min is the block's minimum.

/**
 * Values first..first+len-1 of a FOR block of `width` bits (0..31) from word index `at`,
 * plus min, into out[o..o+len). The decoder starts at value 0; a range read
 * (int-column-range.ts) at the first value its window wants.
 */
export function unpackSpan(words: Uint32Array, at: number, first: number, len: number, width: number, min: number, out: Float64Array, o: number): void {
  if (width === 0) {
    for (let j = 0; j < len; j++) out[o + j] = min;
    return;
  }
  const mask = (1 << width) - 1;
  const bit = first * width;
  let wi = at + (bit >>> 5);
  let buf = words[wi++] >>> (bit & 31);
  let avail = 32 - (bit & 31);
  for (let j = 0; j < len; j++) {
    let v: number;
    if (avail >= width) {
      v = buf & mask;
      buf >>>= width;
      avail -= width;
    } else {
      const next = words[wi++];
      v = (buf | (next << avail)) & mask;
      buf = next >>> (width - avail);
      avail += 32 - width;
    }
    out[o + j] = min + v;
  }
}

function unpackScale(words: Uint32Array, at: number, out: Float64Array, o: number, len: number, min: number, width: number, divisor: number): void {
  const mask = (1 << width) - 1;
  let wi = at;
  let buf = words[wi++];
  let avail = 32;
  for (let j = 0; j < len; j++) {
    let v: number;
    if (avail >= width) {
      v = buf & mask;
      buf >>>= width;
      avail -= width;
    } else {
      const next = words[wi++];
      v = (buf | (next << avail)) & mask;
      buf = next >>> (width - avail);
      avail += 32 - width;
    }
    out[o + j] = (min + v) / divisor;
  }
}

function unpackGrid(words: Uint32Array, at: number, out: Float64Array, o: number, len: number, min: number, width: number, period: number, unit: number): void {
  const mask = (1 << width) - 1;
  let wi = at;
  let buf = words[wi++];
  let avail = 32;
  for (let j = 0; j < len; j++) {
    let v: number;
    if (avail >= width) {
      v = buf & mask;
      buf >>>= width;
      avail -= width;
    } else {
      const next = words[wi++];
      v = (buf | (next << avail)) & mask;
      buf = next >>> (width - avail);
      avail += 32 - width;
    }
    out[o + j] = (min + v + (o + j) * period) * unit;
  }
}

function unpackSum(words: Uint32Array, at: number, out: Float64Array, o: number, len: number, min: number, width: number, acc: number): number {
  const mask = (1 << width) - 1;
  let wi = at;
  let buf = words[wi++];
  let avail = 32;
  for (let j = 0; j < len; j++) {
    let v: number;
    if (avail >= width) {
      v = buf & mask;
      buf >>>= width;
      avail -= width;
    } else {
      const next = words[wi++];
      v = (buf | (next << avail)) & mask;
      buf = next >>> (width - avail);
      avail += 32 - width;
    }
    acc += min + v;
    out[o + j] = acc;
  }
  return acc;
}

function unpackSumScale(words: Uint32Array, at: number, out: Float64Array, o: number, len: number, min: number, width: number, acc: number, divisor: number): number {
  const mask = (1 << width) - 1;
  let wi = at;
  let buf = words[wi++];
  let avail = 32;
  for (let j = 0; j < len; j++) {
    let v: number;
    if (avail >= width) {
      v = buf & mask;
      buf >>>= width;
      avail -= width;
    } else {
      const next = words[wi++];
      v = (buf | (next << avail)) & mask;
      buf = next >>> (width - avail);
      avail += 32 - width;
    }
    acc += min + v;
    out[o + j] = acc / divisor;
  }
  return acc;
}

/** Widths 33..53: a plane of low words, then the high bits packed at width - 32. */
function unpackWide(words: Uint32Array, at: number, out: Float64Array, o: number, len: number, min: number, width: number): void {
  const hiWidth = width - 32;
  const mask = (1 << hiWidth) - 1;
  const hiAt = at + len;
  let bit = 0;
  for (let j = 0; j < len; j++) {
    const wi = hiAt + (bit >>> 5);
    const sh = bit & 31;
    let hi = words[wi] >>> sh;
    if (sh + hiWidth > 32) hi |= words[wi + 1] << (32 - sh);
    out[o + j] = min + (((hi & mask) >>> 0) * TWO_32 + words[at + j]);
    bit += hiWidth;
  }
}
