// The RICE and RICE_DELTA layouts of the integer column (format versions 4 and 5; FORMAT.md
// "Integer column"): each value's distance v from the column's minimum (or, descending, from
// its maximum) as a Golomb-Rice code: v >> k in unary (that many 0 bits, then a 1 bit), then
// the k low bits. RICE_DELTA codes the column's differences the same way, or zigzagged
// around their rounded mean.
//
// It is for columns whose values crowd at one end of their range with geometrically fewer
// further away. The case that made it: the biased exponents of a float-split chunk. Values
// spread evenly between -A and A have half their magnitudes in the top binade, a quarter
// in the next, and so on, so the exponent's drop below the chunk's largest exponent costs
// ~1.9 bits in unary (vibration: entropy 1.9 bits) where FOR pays the block's width, 4-5
// bits whenever the signal passes near zero.

import { svarintLen, varintLen, type ChunkReader, type ChunkWriter } from './byte-io.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

/** Largest k: the low bits go through 32-bit integer operations. */
const MAX_K = 31;
/** The form byte's flag: distances are measured down from the base (the column's maximum). */
export const DESCENDING = 128;
/**
 * The form byte's flag (RICE_DELTA only): values are zigzagged around the base, v = 2d for
 * d = x - base >= 0 and -2d - 1 below, for differences spread on both sides of a centre.
 */
export const ZIGZAG = 32;
const TWO_32 = 4294967296;
const TWO_31 = 2147483648;

/** A RICE coding sized by sizeRice or sizeRiceDelta: size in bytes (Infinity: none), k, base, how values map to distances, payload words. */
export interface RiceChoice {
  size: number;
  k: number;
  base: number;
  descending: boolean;
  zigzag: boolean;
  words: number;
}

export const newRiceChoice = (): RiceChoice => ({ size: Infinity, k: 0, base: 0, descending: false, zigzag: false, words: 0 });

/** The distance v >= 0 a RICE code carries for x under a choice's base and mapping. */
function distance(x: number, base: number, descending: boolean, zigzag: boolean): number {
  if (zigzag) {
    const d = x - base;
    return d >= 0 ? 2 * d : -2 * d - 1;
  }
  return descending ? base - x : x - base;
}

/**
 * Sizes the RICE layout of x[0..n) (min, max, sum: of the column) into `choice`, trying it
 * only where it can pay: when the mean distance from one end is under a quarter of the
 * range (a skewed column), at the three k around log2 of that mean, in one pass. A column
 * spread evenly over its range (jitter, noise) costs no pass at all.
 */
export function sizeRice(choice: RiceChoice, x: Float64Array, n: number, min: number, max: number, sum: number): void {
  choice.size = Infinity;
  const range = max - min;
  if (range === 0) return;
  const up = sum / n - min, down = max - sum / n;
  const descending = down < up;
  const mean = descending ? down : up;
  if (!(mean < range / 4)) return;
  sizeAround(choice, x, n, min, max, descending ? max : min, descending, false, mean);
}

/** The three k around log2(mean) for distances from `base` under a mapping: their sizes in one pass, the smallest kept in `choice`. */
export function sizeAround(choice: RiceChoice, x: Float64Array, n: number, min: number, max: number, base: number, descending: boolean, zigzag: boolean, mean: number): void {
  // k0 - 1, k0 and k0 + 1 (k0 >= 1): the unary parts' bits of all three in one pass.
  const k = Math.max(1, Math.min(MAX_K - 1, Math.floor(Math.log2(Math.max(1, mean))))) - 1;
  const p0 = 2 ** k, p1 = p0 * 2, p2 = p0 * 4;
  let q0 = 0, q1 = 0, q2 = 0;
  const spread = zigzag ? 2 * Math.max(Math.abs(min - base), Math.abs(max - base)) + 1 : max - min;
  if (zigzag && spread < TWO_31 && k + 2 < 32) {
    // the usual cases: shifts of 32-bit integers instead of three float divisions a value
    // (zigzagged differences lie within 2^30 of the base: d fits an int32)
    for (let i = 0; i < n; i++) {
      const d = (x[i] - base) | 0;
      const v = ((d << 1) ^ (d >> 31)) >>> 0;
      q0 += v >>> k;
      q1 += v >>> (k + 1);
      q2 += v >>> (k + 2);
    }
  } else if (!zigzag && spread < TWO_32 && k + 2 < 32) {
    const sign = descending ? -1 : 1;
    for (let i = 0; i < n; i++) {
      const v = sign * (x[i] - base);
      q0 += v >>> k;
      q1 += v >>> (k + 1);
      q2 += v >>> (k + 2);
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = distance(x[i], base, descending, zigzag);
      q0 += Math.floor(v / p0);
      q1 += Math.floor(v / p1);
      q2 += Math.floor(v / p2);
    }
  }
  for (let j = 0; j < 3; j++) {
    const words = Math.ceil((n * (1 + k + j) + (j === 0 ? q0 : j === 1 ? q1 : q2)) / 32);
    const size = 1 + svarintLen(base) + varintLen(words) + 4 * words;
    if (size < choice.size) {
      choice.size = size;
      choice.k = k + j;
      choice.base = base;
      choice.descending = descending;
      choice.zigzag = zigzag;
      choice.words = words;
    }
  }
}

/**
 * Writes the RICE layout `choice` describes (after the mode byte, and RICE_DELTA's first
 * value): form, base, word count, pad4, payload; with `checkpoints` (RICE_DELTA) then the
 * bits of every 256 codes but the last, as varints.
 */
export function writeRice(w: ChunkWriter, x: Float64Array, n: number, choice: RiceChoice, checkpoints = false): void {
  const { k, base, descending, zigzag, words } = choice;
  w.u8(k | (descending ? DESCENDING : 0) | (zigzag ? ZIGZAG : 0));
  w.svarint(base);
  w.varint(words);
  const at = w.reserveWords(words);
  const out = w.words;
  const pk = 2 ** k;
  const mask = k === 0 ? 0 : 0xffffffff >>> (32 - k);
  const sign = descending ? -1 : 1;
  // The stream's bits go from the low bit of each word upward, as FOR's payload.
  let wi = at;
  let buf = 0;
  let used = 0;
  const marks = checkpoints ? scratchColumn(ScratchSlot.RiceCheckpoints, (n >> CHECKPOINT_SHIFT) + 1) : null;
  for (let i = 0; i < n; i++) {
    if (marks !== null && (i & CHECKPOINT_MASK) === 0) marks[i >> CHECKPOINT_SHIFT] = (wi - at) * 32 + used;
    // 32-bit integer steps where they are exact (zigzag: every difference within 2^30 of the base)
    let v: number;
    if (zigzag) {
      const d = (x[i] - base) | 0;
      v = ((d << 1) ^ (d >> 31)) >>> 0;
    } else v = sign * (x[i] - base);
    let q: number, low: number;
    if (v < TWO_32) {
      q = v >>> k;
      low = (v & mask) >>> 0;
    } else {
      q = Math.floor(v / pk);
      low = v - q * pk;
    }
    used += q;
    while (used >= 32) {
      out[wi++] = buf;
      buf = 0;
      used -= 32;
    }
    buf |= 1 << used;
    if (++used === 32) {
      out[wi++] = buf;
      buf = 0;
      used = 0;
    }
    if (k > 0) {
      buf |= low << used;
      used += k;
      if (used >= 32) {
        out[wi++] = buf;
        used -= 32;
        buf = used > 0 ? low >>> (k - used) : 0;
      }
    }
  }
  if (used > 0) out[wi++] = buf;
  if (wi !== at + words) throw new Error(`BUG: RICE payload of ${wi - at} words, sized ${words}`);
  if (marks !== null) for (let j = 1; j <= checkpointCount(n); j++) w.varint(marks[j] - marks[j - 1]);
}

/** Codes between two RICE_DELTA checkpoints. */
export const CHECKPOINT_SHIFT = 8;
const CHECKPOINT_MASK = (1 << CHECKPOINT_SHIFT) - 1;

/** Checkpoints of m codes: one at every multiple of 256 after the first code, before the last. */
export const checkpointCount = (m: number): number => (m > 0 ? (m - 1) >> CHECKPOINT_SHIFT : 0);

/** Decodes a RICE column of n values (the mode byte read) into out[0..n). */
export function readRice(r: ChunkReader, n: number, out: Float64Array): void {
  const form = r.u8('rice form');
  const k = form & 31;
  if ((form & 0x60) !== 0) r.fail(`unknown rice form ${form}`);
  const descending = (form & DESCENDING) !== 0;
  const base = r.svarint('rice base');
  const count = r.varint('rice words');
  const from = r.takeWords(count, 'rice words');
  const end = from + count;
  const words = r.words;
  const pk = 2 ** k;
  const mask = k === 0 ? 0 : (0xffffffff >>> (32 - k));
  let wi = from;
  let buf = 0;
  let avail = 0;
  for (let j = 0; j < n; j++) {
    // Unary: the zero bits before the next 1 bit; buf holds `avail` unread bits, zeros above them.
    let q = 0;
    while (buf === 0) {
      q += avail;
      if (wi >= end) r.fail(`rice value ${j} of ${n} runs past its ${count} words`);
      buf = words[wi++];
      avail = 32;
    }
    const tz = 31 - Math.clz32(buf & -buf);
    q += tz;
    buf = tz === 31 ? 0 : buf >>> (tz + 1);
    avail -= tz + 1;
    let low = 0;
    if (k > 0) {
      if (avail >= k) {
        low = (buf & mask) >>> 0;
        buf >>>= k;
        avail -= k;
      } else {
        if (wi >= end) r.fail(`rice value ${j} of ${n} runs past its ${count} words`);
        const next = words[wi++];
        low = ((buf | (next << avail)) & mask) >>> 0;
        buf = next >>> (k - avail);
        avail += 32 - k;
      }
    }
    const v = q * pk + low;
    out[j] = descending ? base - v : base + v;
  }
  if (wi !== end) r.fail(`rice column leaves ${end - wi} of its ${count} words unread`);
}
