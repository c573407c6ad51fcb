// The RICE_DELTA layout of the integer column (format version 5; FORMAT.md "Integer
// column"): x[0], then the n - 1 differences as Golomb-Rice codes (int-column-rice.ts), from
// their smallest or largest, or zigzagged around their rounded mean; after the codes, the
// bit length of every 256 codes, so that render can start decoding at any multiple of 256
// (a directory group's first point) instead of at the column's start.
//
// Wandering plant values and counters are why: their differences crowd around one value,
// where FOR_DELTA pays each block's widest difference and this about their entropy (the
// fleet's analog values 0.829 -> 0.802 B a point, counters 0.377 -> 0.365, bench:codec).
// The checkpoints cost ~2 bytes per 256 points; without them, a chunk straddling a pixel
// column decoded its whole column (render of a noisy 10M-point series 11.6-11.9 -> 24.4-24.7
// ms p50; with them 12.4-13.1).

import type { ChunkReader } from './byte-io.js';
import { varintLen } from './byte-io.js';
import { ChunkCorruptError } from './chunk-types.js';
import { CHECKPOINT_SHIFT, checkpointCount, DESCENDING, sizeAround, ZIGZAG, type RiceChoice } from './int-column-rice.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

/** The widest spread of differences the zigzag form is sized for: every zigzagged distance < 2^31. */
const ZIGZAG_SPREAD = 2 ** 30;

/**
 * Sizes RICE_DELTA over the differences d[0..m) (their min, max, sum, and sum of |d|) into
 * `choice`, checkpoints included. Two forms: distances from the smallest (or largest)
 * difference, for a counter's increments of 0..5, a third of them 0 (~2.8 bits where FRAME
 * pays 3); or the differences zigzagged around their rounded mean c, 2|d - c| or one less
 * below c, for wandering values whose differences crowd around 0 with geometrically fewer
 * further away. Only the form with the smaller mean distance is sized (a Rice code's
 * length grows with it): one pass, at three k.
 */
export function sizeRiceDelta(choice: RiceChoice, d: Float64Array, m: number, min: number, max: number, sum: number, absSum: number, limit: number): void {
  choice.size = Infinity;
  if (max === min) return;
  const mean = sum / m;
  const centre = Math.round(mean);
  let zigzagMean = Infinity;
  if (max - min < ZIGZAG_SPREAD) {
    let dev = absSum;
    if (centre !== 0) {
      dev = 0;
      for (let i = 0; i < m; i++) dev += Math.abs(d[i] - centre);
    }
    zigzagMean = (2 * dev) / m;
  }
  const up = mean - min, down = max - mean;
  // No pass where even the best k cannot beat the layout already found (`limit` bytes).
  if ((m * riceBitsBound(Math.min(zigzagMean, up, down))) / 8 >= limit) return;
  if (zigzagMean < up && zigzagMean < down) sizeAround(choice, d, m, min, max, centre, false, true, zigzagMean);
  else if (down < up) sizeAround(choice, d, m, min, max, max, true, false, down);
  else sizeAround(choice, d, m, min, max, min, false, false, up);
  const checkpoints = checkpointCount(m);
  // every checkpoint but the last holds about the mean bits of 256 codes (an estimate: only the choice depends on it)
  if (checkpoints > 0) choice.size += checkpoints * varintLen(Math.ceil(((choice.words * 32) / m) * (1 << CHECKPOINT_SHIFT)));
}

/**
 * A lower bound of the bits a value of Rice codes costs when the mean distance is `mean`:
 * at parameter k a code takes k + 1 + floor(v / 2^k) bits, and the mean of floor(v / 2^k)
 * is at least (mean + 1) / 2^k - 1, so no k does better than min over k of k + (mean + 1) / 2^k.
 */
function riceBitsBound(mean: number): number {
  let best = Infinity;
  for (let k = 0, p = 1; k < 32; k++, p *= 2) {
    const bits = k + (mean + 1) / p;
    if (bits < best) best = bits;
    else break;
  }
  return best;
}

/** The parameters of one RICE_DELTA column, read after its mode byte. */
class RiceDeltaForm {
  first = 0;
  k = 0;
  pk = 1;
  mask = 0;
  zigzag = false;
  sign = 1;
  base = 0;
  words: Uint32Array = new Uint32Array(0);
  from = 0;
  end = 0;
  byteLength = 0;

  read(r: ChunkReader, n: number): void {
    this.first = r.svarint('first value');
    if (n < 2) r.fail(`rice delta column of ${n} values`);
    const form = r.u8('rice form');
    const k = form & 31;
    this.zigzag = (form & ZIGZAG) !== 0;
    if ((form & 0x40) !== 0 || (this.zigzag && (form & DESCENDING) !== 0)) r.fail(`unknown rice form ${form}`);
    this.k = k;
    this.pk = 2 ** k;
    this.mask = k === 0 ? 0 : (0xffffffff >>> (32 - k));
    // asc: d = base + v, desc: d = base - v, zigzag: d = base + unzigzag(v)
    this.sign = (form & DESCENDING) !== 0 ? -1 : 1;
    this.base = r.svarint('rice base');
    const count = r.varint('rice words');
    this.from = r.takeWords(count, 'rice words');
    this.end = this.from + count;
    this.words = r.words;
    this.byteLength = r.bytes.length;
  }
}

const form = new RiceDeltaForm();

/**
 * Decodes `count` differences from stream bit `bit` of f's words and writes their running
 * sums from `acc`, each divided by `divisor`, to out[1..count]. Returns the index of the word
 * after the last one read. The zigzag form is undone in 32-bit integers, no branch on a
 * code's parity.
 */
function sumCodes(f: RiceDeltaForm, bit: number, count: number, acc: number, out: Float64Array, divisor: number): number {
  const words = f.words, end = f.end, k = f.k, pk = f.pk, mask = f.mask, zigzag = f.zigzag, sign = f.sign, base = f.base;
  let wi = f.from + (bit >>> 5);
  let buf = 0;
  let avail = 0;
  const sh = bit & 31;
  if (sh !== 0) {
    if (wi >= end) throw corrupt(f, 'a checkpoint past its words');
    buf = words[wi++] >>> sh;
    avail = 32 - sh;
  }
  for (let j = 1; j <= count; j++) {
    let q = 0;
    while (buf === 0) {
      q += avail;
      if (wi >= end) pastWords(f);
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
        if (wi >= end) pastWords(f);
        const next = words[wi++];
        low = ((buf | (next << avail)) & mask) >>> 0;
        buf = next >>> (k - avail);
        avail += 32 - k;
      }
    }
    const v = q * pk + low;
    // The encoder zigzags only differences within 2^30 of the base, so v < 2^31 there.
    acc += zigzag ? base + ((v >>> 1) ^ -(v & 1)) : base + sign * v;
    out[j] = acc / divisor;
  }
  return wi;
}

function corrupt(f: RiceDeltaForm, what: string): ChunkCorruptError {
  return new ChunkCorruptError(`chunk corrupt: ${what}`, f.byteLength);
}

/** Out of the hot loop: a call that throws, not an Error built in it. */
function pastWords(f: RiceDeltaForm): never {
  throw corrupt(f, `rice codes run past their ${f.end - f.from} words`);
}

/**
 * Decodes a RICE_DELTA column of n values (the mode byte read) into out[0..n), each divided
 * by `divisor`: one loop for the codes, the running sum and the scaling (3x faster than
 * decoding the codes, then summing, then scaling). The checkpoints are read past.
 */
export function readRiceDelta(r: ChunkReader, n: number, out: Float64Array, divisor = 1): void {
  const f = form;
  f.read(r, n);
  out[0] = f.first / divisor;
  const stop = sumCodes(f, 0, n - 1, f.first, out, divisor);
  if (stop !== f.end) r.fail(`rice column leaves ${f.end - stop} of its ${f.end - f.from} words unread`);
  const total = (f.end - f.from) * 32;
  let bit = 0;
  for (let j = checkpointCount(n - 1); j > 0; j--) {
    bit += r.varint('rice checkpoint');
    if (bit > total) r.fail('rice checkpoint past its words');
  }
}

/**
 * Random access into a RICE_DELTA column for render (int-column-range.ts): parse() reads its
 * parameters and checkpoints; range() decodes from the checkpoint at or before the anchor
 * (a point whose value the caller knows: a directory group's first point), at most 255
 * codes before it.
 */
export class RiceDeltaIndex {
  private readonly f = new RiceDeltaForm();
  private n = 0;
  /** Stream bit of code 256j. */
  private marks = new Float64Array(64);

  parse(r: ChunkReader, n: number): void {
    const f = this.f;
    f.read(r, n);
    this.n = n;
    const count = checkpointCount(n - 1);
    if (this.marks.length < count + 1) this.marks = new Float64Array(count + 1);
    const total = (f.end - f.from) * 32;
    let bit = 0;
    this.marks[0] = 0;
    for (let j = 1; j <= count; j++) {
      bit += r.varint('rice checkpoint');
      if (bit > total) r.fail('rice checkpoint past its words');
      this.marks[j] = bit;
    }
  }

  /** out[j - from] = x[j] for j in [from, to), knowing x[a] = xa (a <= from). */
  range(from: number, to: number, out: Float64Array, a: number, xa: number): void {
    const f = this.f;
    if (!(a <= from && from < to && to <= this.n)) throw new ChunkCorruptError(`chunk corrupt: points [${from}, ${to}) from ${a} outside a ${this.n}-point column`, f.byteLength);
    // code j is x[j + 1] - x[j]; codes c0..to-2 are decoded, c0 the checkpoint at or before a
    const c0 = (a >> CHECKPOINT_SHIFT) << CHECKPOINT_SHIFT;
    const xs = scratchColumn(ScratchSlot.RiceRange, to - c0);
    xs[0] = 0;
    // xs[j - c0] = x[j] - x[c0], j = c0..to-1
    sumCodes(f, this.marks[c0 >> CHECKPOINT_SHIFT], to - 1 - c0, 0, xs, 1);
    const shift = xa - xs[a - c0];
    for (let j = from; j < to; j++) out[j - from] = xs[j - c0] + shift;
  }

  at(i: number, a: number, xa: number): number {
    this.range(i, i + 1, one, a, xa);
    return one[0];
  }
}
const one = new Float64Array(1);
