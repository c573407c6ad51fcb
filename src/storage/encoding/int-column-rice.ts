// The RICE layout of the integer column (format version 4; FORMAT.md "Integer column"):
// each value's distance v from the column's minimum (or, descending, from its maximum) as a
// Golomb-Rice code: v >> k in unary (that many 0 bits, then a 1 bit), then the k low bits.
//
// It is for columns whose values crowd at one end of their range with geometrically fewer
// further away. The case that made it: the biased exponents of a float-split chunk. Values
// spread evenly between -A and A have half their magnitudes in the top binade, a quarter
// in the next, and so on, so the exponent's drop below the chunk's largest exponent costs
// ~1.9 bits in unary (vibration: entropy 1.9 bits) where FOR pays the block's width, 4-5
// bits whenever the signal passes near zero.

import { svarintLen, varintLen, type ChunkReader, type ChunkWriter } from './byte-io.js';

/** Largest k: the low bits go through 32-bit integer operations. */
const MAX_K = 31;
/** The form byte's flag: distances are measured down from the base (the column's maximum). */
const DESCENDING = 128;


/** The best RICE coding of a column found by riceChoice: size in bytes (Infinity: none), k, direction, payload words. */
export const riceChoice = { size: Infinity, k: 0, descending: false, words: 0 };

/**
 * Sizes the RICE layout of x[0..n) (min, max, sum: of the column) into riceChoice, trying it
 * only where it can pay: when the mean distance from one end is under a quarter of the
 * range (a skewed column), at the three k around log2 of that mean, in one pass. A column
 * spread evenly over its range (jitter, noise) costs no pass at all.
 */
export function sizeRice(x: Float64Array, n: number, min: number, max: number, sum: number): void {
  riceChoice.size = Infinity;
  const range = max - min;
  if (range === 0) return;
  const up = sum / n - min, down = max - sum / n;
  const descending = down < up;
  const mean = descending ? down : up;
  if (!(mean < range / 4)) return;
  const base = descending ? max : min;
  const sign = descending ? -1 : 1;
  // k0 - 1, k0 and k0 + 1 (k0 >= 1): the unary parts' bits of all three in one pass.
  const k = Math.max(1, Math.min(MAX_K - 1, Math.floor(Math.log2(Math.max(1, mean))))) - 1;
  const p0 = 2 ** k, p1 = p0 * 2, p2 = p0 * 4;
  let q0 = 0, q1 = 0, q2 = 0;
  for (let i = 0; i < n; i++) {
    const v = sign * (x[i] - base);
    q0 += Math.floor(v / p0);
    q1 += Math.floor(v / p1);
    q2 += Math.floor(v / p2);
  }
  for (let j = 0; j < 3; j++) {
    const words = Math.ceil((n * (1 + k + j) + (j === 0 ? q0 : j === 1 ? q1 : q2)) / 32);
    const size = 1 + svarintLen(base) + varintLen(words) + 4 * words;
    if (size < riceChoice.size) {
      riceChoice.size = size;
      riceChoice.k = k + j;
      riceChoice.descending = descending;
      riceChoice.words = words;
    }
  }
}

/** Writes the RICE layout riceChoice describes (after the mode byte): form, base, word count, pad4, payload. */
export function writeRice(w: ChunkWriter, x: Float64Array, n: number, min: number, max: number): void {
  const { k, descending, words } = riceChoice;
  const base = descending ? max : min;
  w.u8(k | (descending ? DESCENDING : 0));
  w.svarint(base);
  w.varint(words);
  const at = w.reserveWords(words);
  const out = w.words;
  const pk = 2 ** k;
  // The stream's bits go from the low bit of each word upward, as FOR's payload.
  let wi = at;
  let buf = 0;
  let used = 0;
  for (let i = 0; i < n; i++) {
    const v = descending ? base - x[i] : x[i] - base;
    const q = Math.floor(v / pk);
    const low = v - q * pk;
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
}

/** Decodes a RICE column of n values (the mode byte read) into out[0..n). */
export function readRice(r: ChunkReader, n: number, out: Float64Array): void {
  const form = r.u8('rice form');
  const k = form & 31;
  if ((form & 0x60) !== 0) r.fail(`unknown rice form ${form}`);
  const descending = (form & DESCENDING) !== 0;
  const base = r.svarint('rice base');
  const count = r.varint('rice words');
  const at = r.takeWords(count, 'rice words');
  const end = at + count;
  const words = r.words;
  const pk = 2 ** k;
  const mask = k === 0 ? 0 : (0xffffffff >>> (32 - k));
  let wi = at;
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
