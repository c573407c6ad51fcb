// Decoding a range [from, to) of an integer column without decoding the rest (layouts in
// int-column.ts and FORMAT.md). Used by render for the directory group around a pixel
// column boundary. RLE walks its runs; FOR walks the block headers to find the payload
// words and unpacks only the blocks that overlap the range; FOR_DELTA needs one known
// value x[accIndex] at or before `from` (the summary's group first value) and sums the
// differences from there. Every layout leaves the reader at the end of the column, so a
// following column (SLOTS residuals) can be read next.

import type { ChunkReader } from './byte-io.js';
import { BLOCK, IntMode, wordsFor } from './int-column.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

const TWO_32 = 4294967296;

/** out[j - from] = x[j] for j in [from, to); x[accIndex] = accValue (accIndex <= from) anchors FOR_DELTA. */
export function decodeIntRange(r: ChunkReader, n: number, from: number, to: number, out: Float64Array, accIndex: number, accValue: number): void {
  const mode = r.u8('integer column mode');
  if (mode === IntMode.Rle) rleRange(r, n, from, to, out);
  else if (mode === IntMode.For) forRange(r, n, from, to, out, from, 0, false);
  else if (mode === IntMode.ForDelta) {
    r.svarint('first value');
    // Differences d[i] = x[i+1] - x[i] live at index i of an n-1 value FOR column.
    if (n > 1) forRange(r, n - 1, accIndex, to - 1, out, from, accValue, true);
    else out[0] = accValue;
  } else r.fail(`unknown integer column mode ${mode}`);
}

function rleRange(r: ChunkReader, n: number, from: number, to: number, out: Float64Array): void {
  const runs = r.varint('run count');
  let pos = 0, v = 0;
  for (let k = 0; k < runs; k++) {
    v += r.svarint('run value');
    const len = r.varint('run length');
    if (len === 0 || pos + len > n) r.fail(`run of ${len} points overflows ${n} points`);
    const a = pos > from ? pos : from, b = pos + len < to ? pos + len : to;
    for (let j = a; j < b; j++) out[j - from] = v;
    pos += len;
  }
  if (pos !== n) r.fail(`runs cover ${pos} of ${n} points`);
}

/**
 * FOR over m values. Plain: out[j - from] = y[j] for j in [from, to). Sum (FOR_DELTA):
 * y are differences; starting from acc = x[lo], x[j+1] = x[j] + y[j] for j in [lo, to),
 * and out receives x[from..to] shifted by `from` (x[from] itself included).
 */
function forRange(r: ChunkReader, m: number, lo: number, to: number, out: Float64Array, from: number, acc: number, sum: boolean): void {
  const blocks = Math.ceil(m / BLOCK);
  const meta = scratchColumn(ScratchSlot.BlockMeta, blocks * 2);
  let totalWords = 0, prevMin = 0;
  for (let k = 0; k < blocks; k++) {
    const width = r.u8('block width');
    if (width > 53) r.fail(`block width ${width} > 53`);
    prevMin += r.svarint('block minimum');
    meta[2 * k] = prevMin;
    meta[2 * k + 1] = width;
    totalWords += wordsFor(Math.min(BLOCK, m - k * BLOCK), width);
  }
  let at = r.takeWords(totalWords, 'packed block words');
  const words = r.words;
  const tmp = scratchColumn(ScratchSlot.RangeBlock, BLOCK);
  const start = sum ? lo : from;
  if (sum && from === lo) out[0] = acc;
  for (let k = 0, s = 0; k < blocks && s < to; k++, s += BLOCK) {
    const len = Math.min(BLOCK, m - s), width = meta[2 * k + 1];
    if (s + len > start) {
      unpackBlock(words, at, tmp, len, meta[2 * k], width);
      const a = start > s ? start : s, b = to < s + len ? to : s + len;
      if (sum) {
        for (let j = a; j < b; j++) {
          acc += tmp[j - s];
          if (j + 1 >= from) out[j + 1 - from] = acc;
        }
      } else for (let j = a; j < b; j++) out[j - from] = tmp[j - s];
    }
    at += wordsFor(len, width);
  }
}

/** One block's values (min + packed) into tmp[0..len): the bit layout of FORMAT.md. */
function unpackBlock(words: Uint32Array, at: number, tmp: Float64Array, len: number, min: number, width: number): void {
  if (width === 0) {
    for (let j = 0; j < len; j++) tmp[j] = min;
    return;
  }
  const lowWidth = width <= 32 ? width : 32;
  const mask = lowWidth === 32 ? 0xffffffff : (1 << lowWidth) - 1;
  let bit = 0;
  for (let j = 0; j < len; j++) {
    const wi = at + (bit >>> 5), sh = bit & 31;
    let v = words[wi] >>> sh;
    if (sh + lowWidth > 32) v |= words[wi + 1] << (32 - sh);
    tmp[j] = min + ((v & mask) >>> 0);
    bit += lowWidth;
  }
  if (width <= 32) return;
  const hiWidth = width - 32, hiMask = (1 << hiWidth) - 1, hiAt = at + len;
  bit = 0;
  for (let j = 0; j < len; j++) {
    const wi = hiAt + (bit >>> 5), sh = bit & 31;
    let hi = words[wi] >>> sh;
    if (sh + hiWidth > 32) hi |= words[wi + 1] << (32 - sh);
    tmp[j] += ((hi & hiMask) >>> 0) * TWO_32;
    bit += hiWidth;
  }
}
