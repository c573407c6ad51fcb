// Packed head segments (byte 0 = 0x81, since 2026-11-28): what the writer stores for every
// commit's new head points of any type but string (head-segment.ts keeps the older raw form
// and the encoded-chunk form readable). Why packed: with 16 KiB pages a series' chunk holds
// ~13,000 points, so a bulk load of 10,000 points a series sat whole in head segments; at
// 10-12 B a point (raw) they took ten times the pages the sealed chunks need, and LMDB never
// gives a high-water mark back (data.mdb stayed 10x its live pages until a repack). One pass
// of varints takes a 1 s decimal tag to ~2 B a point without the chunk codec's size search.
//
// Layout, little-endian (time of point i = tsBase + offset i, offset 0 = 0):
//     byte 0       0x81
//     byte 1       value type (chunk codes: 0 float64, 1 int64, 2 boolean, 4 enum)
//     byte 2       flags: bit 0 = one quality for all points, bit 1 = one value for all
//                  points, bit 2 = float64 values as decimals (value = x / 10^k), bit 3 =
//                  times bit-packed, bit 4 = decimal values bit-packed (bits 3-4 since
//                  2026-11-28 02:00 UTC; without them every number is a varint), bit 5 =
//                  the packed sections in blocks (since 2026-11-28 04:00 UTC, see below)
//     byte 3       e (bits 0-3: times in units of 10^e ns, 0..9), k (bits 4-7: 0..9, with bit 2)
//     bytes 4-7    count n >= 1, uint32
//     bytes 8-15   tsBase = time of point 0, int64 ns
//     16, 17       with bit 3 or 4: the widths wt, wv (0..24 bits) of the packed sections
//     ..           times: n-1 numbers zigzag(step i - step i-1), steps in units of 10^e,
//                  step 0 = 0, as unsigned varints (7 bits a byte, low first); with bit 3
//                  the first is a varint and the others wt bits each, low bits first, the
//                  last byte padded with zeros (a steady cadence: wt = 0, no byte)
//     ..           values: bit 1: one value, raw (8 B float64/int64, 4 B enum, 1 B boolean);
//                  bit 2: n numbers zigzag(x i - x i-1), x -1 = 0, |x| <= 2^50, varints,
//                  or with bit 4 the first a varint and the others wv bits each; else n
//                  raw values
//     ..           qualities: one uint32 (bit 0) or n uint32
//     last 4       CRC32 (zlib) of every byte before it
// With bit 5 (what the writer stores now) there are no width bytes 16-17, and a packed
// section is written in blocks: times (bit 3) as a varint m = the smallest step (units of
// 10^e) and the n-1 numbers step i - m; decimal values (bit 4) as a varint zigzag(x 0) and the
// n-1 numbers zigzag(x i - x i-1). The numbers go in blocks of BLOCK = 64 (the last one
// shorter), each a width byte w (0..24) and its numbers at w bits, low bits first, the block
// padded to a byte. Why: one width per segment is the width of its largest number, so one
// jump (a late sample, a step in a setpoint) set it for 1,000 points; a width per 64 numbers
// and steps measured from the smallest (not from the step before: that doubles a jitter)
// take the shared dataset's segments from 1.75 to ~1.4 bytes a point, and with them the
// pages a bulk load's open heads hold at their peak (the data file's high-water mark).
import { crc32 } from 'node:zlib';
import type { PointColumns } from './encoding/chunk-types.js';
import { valueBytes } from './encoding/point-columns.js';
import { TYPE_CODES, typeCode } from './encoding/chunk-header.js';
import { allocColumns } from './point-runs.js';

export const PACKED_SEGMENT = 0x81;
const HEADER = 16;
const ONE_QUALITY = 1, ONE_VALUE = 2, DECIMAL = 4, TIMES_PACKED = 8, VALUES_PACKED = 16, BLOCKED = 32;
/** Numbers of a packed section per width byte (with BLOCKED). */
const BLOCK = 64;
/** Widest bit-packed number: the bit buffer then stays inside 31 bits. Wider: varints. */
const MAX_PACKED_WIDTH = 24;
const PACKED_LIMIT = 2 ** MAX_PACKED_WIDTH;
/** Most points of a segment with bit-packed times (a head holds at most a chunk and a batch). */
const MAX_PACKED_POINTS = 2 ** 24;

/** Bits needed for z (0 for 0). */
function bitWidth(z: number): number {
  return z === 0 ? 0 : 32 - Math.clz32(z);
}

/** Writes zs[from, end) as w-bit numbers (w <= 24) at p; returns the next position (the last byte padded). */
function putPacked(b: Uint8Array, p: number, zs: Float64Array, from: number, end: number, w: number): number {
  if (w === 0) return p;
  let acc = 0, bits = 0;
  for (let i = from; i < end; i++) {
    acc |= zs[i] << bits;
    bits += w;
    while (bits >= 8) { b[p++] = acc & 0xff; acc >>>= 8; bits -= 8; }
  }
  if (bits > 0) b[p++] = acc & 0xff;
  return p;
}

/** A section of count numbers at p: varints (width -1), or the first a varint and the rest width bits each. */
function putZigzags(b: Uint8Array, p: number, zs: Float64Array, count: number, width: number): number {
  if (count === 0) return p;
  if (width < 0) { for (let i = 0; i < count; i++) p = putVarint(b, p, zs[i]); return p; }
  return putPacked(b, putVarint(b, p, zs[0]), zs, 1, count, width);
}

/**
 * Reads a section putZigzags wrote into out; returns the position after it, or -1 when its
 * packed part would run past `end` (varints stop at `end`: the caller's length check refuses them).
 */
function readZigzags(bytes: Buffer, at: number, end: number, count: number, width: number, out: Float64Array): number {
  if (count === 0) return at;
  const varints = width < 0 ? count : 1;
  let i = 0;
  for (; i < varints; i++) {
    let z = 0, mul = 1, byte: number;
    do { byte = bytes[at++]; z += (byte & 0x7f) * mul; mul *= 128; } while (byte & 0x80 && at < end);
    out[i] = z;
  }
  if (width < 0) return at;
  if (at + Math.ceil(((count - 1) * width) / 8) > end) return -1;
  const mask = width === 0 ? 0 : 2 ** width - 1;
  let acc = 0, bits = 0;
  for (; i < count; i++) {
    while (bits < width) { acc |= bytes[at++] << bits; bits += 8; }
    out[i] = acc & mask;
    acc >>>= width; bits -= width;
  }
  return at;
}

/** Writes zs[from, from+count) in blocks (see the top of this file) at p; returns the next position. */
function putBlocks(b: Uint8Array, p: number, zs: Float64Array, from: number, count: number): number {
  for (let i = from, end = from + count; i < end; i += BLOCK) {
    const e = Math.min(end, i + BLOCK);
    let max = 0;
    for (let j = i; j < e; j++) if (zs[j] > max) max = zs[j];
    const w = bitWidth(max);
    b[p++] = w;
    p = putPacked(b, p, zs, i, e, w);
  }
  return p;
}

/**
 * Reads count numbers putBlocks wrote into out[from, from+count); returns the position after
 * them, or -1 when a width is above MAX_PACKED_WIDTH or a block runs past `end`.
 */
function readBlocks(bytes: Buffer, at: number, end: number, count: number, out: Float64Array, from: number): number {
  for (let i = from, last = from + count; i < last; i += BLOCK) {
    const e = Math.min(last, i + BLOCK);
    if (at >= end) return -1;
    const w = bytes[at++];
    if (w > MAX_PACKED_WIDTH) return -1;
    if (w === 0) { out.fill(0, i, e); continue; }
    if (at + Math.ceil(((e - i) * w) / 8) > end) return -1;
    const mask = 2 ** w - 1;
    let acc = 0, bits = 0;
    for (let j = i; j < e; j++) {
      while (bits < w) { acc |= bytes[at++] << bits; bits += 8; }
      out[j] = acc & mask;
      acc >>>= w; bits -= w;
    }
  }
  return at;
}

/** One unsigned varint at `at` (it stops at `end`): the value; the next position in varintEnd. */
let varintEnd = 0;
function readVarint(bytes: Buffer, at: number, end: number): number {
  let z = 0, mul = 1, byte: number;
  do { byte = bytes[at++]; z += (byte & 0x7f) * mul; mul *= 128; } while (byte & 0x80 && at < end);
  varintEnd = at;
  return z;
}

/** Zigzag numbers of one section, built before it is written (widths are known first). */
let zigzags = new Float64Array(0);
function zigzagsOf(n: number): Float64Array {
  if (zigzags.length < n) zigzags = new Float64Array(Math.max(n, 2 * zigzags.length, 4096));
  return zigzags;
}
/** The decimal values' zigzags (decimalZigzags), kept apart from the times' while both are built. */
let valueZigzags = new Float64Array(0);
function valueZigzagsOf(n: number): Float64Array {
  if (valueZigzags.length < n) valueZigzags = new Float64Array(Math.max(n, 2 * valueZigzags.length, 4096));
  return valueZigzags;
}
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** Largest |x| of a decimal value: deltas stay below 2^51 and their zigzag below 2^53 (exact). */
const MAX_DECIMAL = 2 ** 50;

export function valueColumn(c: PointColumns): ArrayBufferView {
  switch (c.type) {
    case 'float64': return c.f64!;
    case 'int64': return c.i64!;
    case 'boolean': return c.u8!;
    case 'enum': return c.ord!;
    case 'string': throw new Error('BUG: string heads have no raw column');
  }
}

function bytesOf(a: ArrayBufferView, from: number, n: number, width: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset + from * width, n * width);
}

/** One buffer reused by every segment the writer builds (lmdb-js copies a value inside putSync). */
let scratch = Buffer.alloc(0);
function scratchOf(n: number): Buffer {
  if (scratch.length < n) scratch = Buffer.from(new ArrayBuffer(Math.max(n, 2 * scratch.length, 65536)));
  return scratch;
}

/** Writes v (an integer 0 <= v < 2^53) as a varint at p; returns the next position. */
function putVarint(b: Uint8Array, p: number, v: number): number {
  // & keeps the low bits of any integer below 2^53 (ToInt32 is modulo 2^32)
  while (v > 0x7fffffff) { b[p++] = (v & 0x7f) | 0x80; v = Math.floor(v / 128); }
  while (v >= 0x80) { b[p++] = (v & 0x7f) | 0x80; v >>>= 7; }
  b[p++] = v;
  return p;
}

const zigzag = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/** The largest zigzag delta of the values decimalZigzags last accepted (the first number excluded). */
let decimalMaxZigzag = 0;

/**
 * The smallest k (0..9) at which every value of f[from, end) is x / 10^k exactly (|x| <=
 * MAX_DECIMAL), -1 when none; with k, out[0, n) holds zigzag(x i - x i-1) (x -1 = 0) and
 * decimalMaxZigzag the largest of them after the first. One pass in the common case: the
 * values met before k last grew were checked at a smaller k and are checked again at the
 * final one (beyond it a value may not round to its own x, or exceed MAX_DECIMAL).
 */
function decimalZigzags(f: Float64Array, from: number, end: number, out: Float64Array): number {
  let k = 0, p = 1, checkedFrom = from;
  for (let i = from; i < end; i++) {
    const v = f[i];
    if (v === 0 && 1 / v < 0) return -1; // -0 would read back as 0
    let x = Math.round(v * p);
    if (x / p !== v || Math.abs(x) > MAX_DECIMAL) {
      do {
        if (k === 9) return -1;
        p = POW10[++k];
        x = Math.round(v * p);
      } while (x / p !== v || Math.abs(x) > MAX_DECIMAL);
      checkedFrom = i;
    }
    out[i - from] = x;
  }
  for (let i = from; i < checkedFrom; i++) {
    const x = Math.round(f[i] * p);
    if (x / p !== f[i] || Math.abs(x) > MAX_DECIMAL) return -1;
    out[i - from] = x;
  }
  let prev = 0, maxZ = 0;
  for (let j = 0, n = end - from; j < n; j++) {
    const x = out[j], z = zigzag(x - prev);
    out[j] = z;
    if (z > maxZ && j > 0) maxZ = z; // the first is written apart, as a varint
    prev = x;
  }
  decimalMaxZigzag = maxZ;
  return k;
}

/** Whether values [from, from+n) of a column of w-byte values all have the same bits (-0 is not 0). */
export function sameValues(col: ArrayBufferView, from: number, n: number, w: number): boolean {
  if (w === 1) {
    const a = new Uint8Array(col.buffer, col.byteOffset + from, n), a0 = a[0];
    for (let i = 1; i < n; i++) if (a[i] !== a0) return false;
    return true;
  }
  // typed arrays of 4- and 8-byte values start 4-byte aligned: compare them as 32-bit words
  const words = w >> 2, a = new Int32Array(col.buffer, col.byteOffset + from * w, n * words);
  for (let i = words; i < n * words; i += words) {
    for (let k = 0; k < words; k++) if (a[i + k] !== a[k]) return false;
  }
  return true;
}

/**
 * Points [from, from+n) of a head's columns (not string) as one packed segment. The bytes
 * live in a buffer the next call reuses: store them before building another. blocked false
 * writes the form stored before 2026-11-28 04:00 UTC (one width a section; tests read it).
 */
export function encodePackedSegment(c: PointColumns, from: number, n: number, blocked = true): Buffer {
  const off = c.tsOffset, q = c.quality, end = from + n;
  const e = stepExponent(off, from, end);
  const unit = POW10[e];
  const q0 = q[from], oneQuality = sameFrom(q, from, end);
  const w = valueBytes(c.type), col = valueColumn(c);
  const oneValue = sameValues(col, from, n, w);
  const vz = valueZigzagsOf(n);
  const k = !oneValue && c.type === 'float64' ? decimalZigzags(c.f64!, from, end, vz) : -1;
  // bound: 8 bytes a varint (< 2^53), raw values, qualities, header and CRC
  const b = scratchOf(HEADER + 8 * n + Math.max(w, 8) * n + 4 * n + 4);
  b[0] = PACKED_SEGMENT; b[1] = typeCode(c.type);
  b[2] = (oneQuality ? ONE_QUALITY : 0) | (oneValue ? ONE_VALUE : 0) | (k >= 0 ? DECIMAL : 0);
  b[3] = e | ((k >= 0 ? k : 0) << 4);
  b.writeUInt32LE(n, 4);
  b.writeBigInt64LE(c.tsBase + BigInt(off[from]), 8);
  // times: the steps (units of 10^e) first; in blocks they are written above the smallest,
  // bit-packed when the spread fits MAX_PACKED_WIDTH bits, else (and in the one-width form)
  // as zigzags of step i - step i-1 (step 0 = 0)
  const tz = zigzagsOf(n);
  fillSteps(off, from, end, unit, tz);
  const minStep = stepRange[0], maxStep = stepRange[1];
  let timesPacked = n <= MAX_PACKED_POINTS && (n < 2 || maxStep - minStep < PACKED_LIMIT);
  if (!blocked || !timesPacked) {
    const maxT = zigzagSteps(tz, n - 1);
    if (!blocked) timesPacked = n <= MAX_PACKED_POINTS && maxT < PACKED_LIMIT;
    if (!blocked && timesPacked) b[16] = bitWidth(maxT);
  }
  const valuesPacked = k >= 0 && decimalMaxZigzag < PACKED_LIMIT;
  if (timesPacked) b[2] |= TIMES_PACKED;
  if (valuesPacked) b[2] |= VALUES_PACKED;
  const inBlocks = blocked && (timesPacked || valuesPacked);
  if (inBlocks) b[2] |= BLOCKED;
  let at = HEADER;
  if ((timesPacked || valuesPacked) && !inBlocks) {
    if (!timesPacked) b[16] = 0;
    b[17] = valuesPacked ? bitWidth(decimalMaxZigzag) : 0;
    at = HEADER + 2;
  }
  if (inBlocks && timesPacked) {
    if (n > 1) {
      lowerSteps(tz, n - 1, minStep);
      at = putBlocks(b, putVarint(b, at, minStep), tz, 0, n - 1);
    }
  } else {
    at = putZigzags(b, at, tz, n - 1, timesPacked ? b[16] : -1);
  }
  if (oneValue) {
    at = putRaw(b, at, col, from, 1, w);
  } else if (k >= 0) {
    if (inBlocks && valuesPacked) at = putBlocks(b, putVarint(b, at, vz[0]), vz, 1, n - 1);
    else at = putZigzags(b, at, vz, n, valuesPacked ? b[17] : -1);
  } else {
    at = putRaw(b, at, col, from, n, w);
  }
  if (oneQuality) { b.writeUInt32LE(q0, at); at += 4; } else at = putRaw(b, at, q, from, n, 4);
  b.writeUInt32LE(crc32(b.subarray(0, at)), at);
  return b.subarray(0, at + 4);
}

// encodePackedSegment has no loop of its own (they are the functions below): V8 compiled a
// long loop alone (on-stack replacement) before the code after it had ever run, and every
// later call entered that code at the loop and bailed out after it (6 times a load).

/** Whether q[from, end) all equal q[from]. */
function sameFrom(q: Uint32Array, from: number, end: number): boolean {
  const q0 = q[from];
  for (let i = from + 1; i < end; i++) if (q[i] !== q0) return false;
  return true;
}

/** The smallest and largest step fillSteps last met (Infinity and 0 for a single point). */
const stepRange = new Float64Array(2);

/** tz[i - from - 1] = (off[i] - off[i - 1]) / unit for from < i < end, their range in stepRange. */
function fillSteps(off: Float64Array, from: number, end: number, unit: number, tz: Float64Array): void {
  let minStep = Infinity, maxStep = 0;
  for (let i = from + 1; i < end; i++) {
    const step = (off[i] - off[i - 1]) / unit;
    tz[i - from - 1] = step;
    if (step < minStep) minStep = step;
    if (step > maxStep) maxStep = step;
  }
  stepRange[0] = minStep; stepRange[1] = maxStep;
}

/** Steps tz[0, count) become zigzags of step i - step i-1 (step -1 = 0); the largest after the first. */
function zigzagSteps(tz: Float64Array, count: number): number {
  let prevStep = 0, maxT = 0;
  for (let j = 0; j < count; j++) {
    const step = tz[j], z = zigzag(step - prevStep);
    tz[j] = z;
    if (z > maxT && j > 0) maxT = z; // the first is written apart, as a varint
    prevStep = step;
  }
  return maxT;
}

function lowerSteps(tz: Float64Array, count: number, minStep: number): void {
  for (let j = 0; j < count; j++) tz[j] -= minStep;
}

/**
 * The largest e <= 9 such that 10^e divides every step of off[from, end) (steps are exact
 * integers, so round(s / p) * p === s exactly when p divides s; a float % is a libm call).
 * A function of its own, like putRaw: a load whose first heads all had whole-second steps
 * (or one value) never ran the decrement (or the copy), and reaching it later threw away
 * encodePackedSegment's optimized code, ~100 ms of a V8 helper thread each time.
 */
function stepExponent(off: Float64Array, from: number, end: number): number {
  let e = 9, p = POW10[9], inv = 1 / p;
  for (let i = from + 1; i < end && e > 0; i++) {
    const s = off[i] - off[i - 1];
    while (e > 0 && Math.round(s * inv) * p !== s) { e--; p = POW10[e]; inv = 1 / p; }
  }
  return e;
}

/** Copies n w-byte values of col from `from` to b at `at`; the position after them. */
function putRaw(b: Buffer, at: number, col: ArrayBufferView, from: number, n: number, w: number): number {
  b.set(bytesOf(col, from, n, w), at);
  return at + w * n;
}

/** Why a packed segment cannot be read (null: it can): the caller refuses it as corrupt. */
function packedDamage(bytes: Buffer): string | null {
  if (bytes.length < HEADER + 4) return 'shorter than its header';
  const crcAt = bytes.length - 4;
  if (crc32(bytes.subarray(0, crcAt)) !== bytes.readUInt32LE(crcAt)) return 'checksum mismatch';
  const type = TYPE_CODES[bytes[1]], n = bytes.readUInt32LE(4);
  // a point takes at least one byte after the header (a varint or a raw value) unless its
  // time is bit-packed: then at most MAX_PACKED_POINTS, so a forged count allocates little
  const most = (bytes[2] & TIMES_PACKED) !== 0 ? MAX_PACKED_POINTS : bytes.length;
  if (type === undefined || type === 'string' || bytes[2] > 63 || (bytes[3] & 15) > 9 || (bytes[3] >> 4) > 9 || n === 0 || n > most) return `type ${bytes[1]}, flags ${bytes[2]}, form ${bytes[3]}, ${n} points in ${bytes.length} bytes`;
  if ((bytes[2] & DECIMAL) !== 0 && (type !== 'float64' || (bytes[2] & ONE_VALUE) !== 0)) return `flags ${bytes[2]} for ${type}`;
  if ((bytes[2] & VALUES_PACKED) !== 0 && (bytes[2] & DECIMAL) === 0) return `flags ${bytes[2]}: packed values that are not decimals`;
  if ((bytes[2] & BLOCKED) !== 0) {
    if ((bytes[2] & (TIMES_PACKED | VALUES_PACKED)) === 0) return `flags ${bytes[2]}: blocks without a packed section`;
  } else if ((bytes[2] & (TIMES_PACKED | VALUES_PACKED)) !== 0 && (bytes.length < HEADER + 6 || bytes[16] > MAX_PACKED_WIDTH || bytes[17] > MAX_PACKED_WIDTH)) {
    return `section widths ${bytes[16]}, ${bytes[17]}`;
  }
  return null;
}

/**
 * A packed segment's columns (fresh arrays), or the reason it cannot be read: a CRC or
 * layout mismatch, varints running past their section.
 */
export function decodePackedSegment(bytes: Buffer): PointColumns | string {
  const damage = packedDamage(bytes);
  if (damage !== null) return damage;
  const type = TYPE_CODES[bytes[1]], flags = bytes[2], n = bytes.readUInt32LE(4);
  const unit = POW10[bytes[3] & 15], crcAt = bytes.length - 4;
  const c = allocColumns(type, n, bytes.readBigInt64LE(8));
  const off = c.tsOffset;
  const packedT = (flags & TIMES_PACKED) !== 0, packedV = (flags & VALUES_PACKED) !== 0, blocked = (flags & BLOCKED) !== 0;
  let at = (packedT || packedV) && !blocked ? HEADER + 2 : HEADER, step = 0, t = 0;
  off[0] = 0;
  const zs = zigzagsOf(n);
  if (blocked && packedT) {
    if (n > 1) {
      const minStep = readVarint(bytes, at, crcAt);
      at = readBlocks(bytes, varintEnd, crcAt, n - 1, zs, 0);
      if (at < 0) return 'times past the end';
      for (let i = 1; i < n; i++) { t += (minStep + zs[i - 1]) * unit; off[i] = t; }
    }
  } else {
    at = readZigzags(bytes, at, crcAt, n - 1, packedT ? bytes[16] : -1, zs);
    if (at < 0) return 'times past the end';
    for (let i = 1; i < n; i++) {
      step += unzigzag(zs[i - 1]);
      t += step * unit;
      off[i] = t;
    }
  }
  const w = valueBytes(type), values = bytesOf(valueColumn(c), 0, n, w);
  if ((flags & ONE_VALUE) !== 0) {
    if (at + w > crcAt) return 'values past the end';
    values.set(bytes.subarray(at, at + w)); at += w;
    for (let filled = w; filled < n * w; filled *= 2) values.copyWithin(filled, 0, Math.min(filled, n * w - filled));
  } else if ((flags & DECIMAL) !== 0) {
    const f = c.f64!, pk = POW10[bytes[3] >> 4];
    if (blocked && packedV) {
      zs[0] = readVarint(bytes, at, crcAt);
      at = n > 1 ? readBlocks(bytes, varintEnd, crcAt, n - 1, zs, 1) : varintEnd;
    } else {
      at = readZigzags(bytes, at, crcAt, n, packedV ? bytes[17] : -1, zs);
    }
    if (at < 0) return 'values past the end';
    let x = 0;
    for (let i = 0; i < n; i++) {
      x += unzigzag(zs[i]);
      f[i] = x / pk;
    }
  } else {
    if (at + w * n > crcAt) return 'values past the end';
    values.set(bytes.subarray(at, at + w * n)); at += w * n;
  }
  const qBytes = (flags & ONE_QUALITY) !== 0 ? 4 : 4 * n;
  if (at + qBytes !== crcAt) return `sections end at ${at + qBytes}, the checksum is at ${crcAt}`;
  if ((flags & ONE_QUALITY) !== 0) c.quality.fill(bytes.readUInt32LE(at), 0, n); else bytesOf(c.quality, 0, n, 4).set(bytes.subarray(at, crcAt));
  c.count = n;
  return c;
}
