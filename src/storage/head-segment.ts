// Head segments: the write-ahead copies of the points commits appended to a series' open
// head (table `head-segments`, key uuid16 + seq; head-record.ts keeps the records that list
// them). A segment is a packed segment (byte 0 = 0x81; written for every type but string
// since 2026-11-28: varints, head-packed.ts); a raw segment (byte 0 = 0x80; written from
// 2026-11-21 to 2026-11-28, still read): the head's columns nearly as they sit in memory, and
// a CRC32; or an encoded chunk (byte 0 = 1, 2, 0x30.. or 0x40..: the chunk codec; string
// heads, and every segment written before raw segments existed). FORMAT.md "Head segments".
//
// Raw segment, little-endian (time of point i = tsBase + offset i):
//     byte 0       0x80 (raw segment version 1)
//     byte 1       value type (chunk codes: 0 float64, 1 int64, 2 boolean, 4 enum)
//     byte 2       flags: bit 0 = times as 32-bit steps, bit 1 = one quality for all points,
//                  bit 2 = times as 16-bit steps of 10^e ns, bit 3 = one value for all points
//     byte 3       e (0..9) with bit 2, else 0
//     bytes 4-7    count n >= 1, uint32
//     bytes 8-15   tsBase = time of point 0, int64 ns
//     16 ..        times (offset i = sum of steps 0..i, step 0 = 0): n uint16 steps x 10^e
//                  (bit 2) when every step is such a multiple below 65,536 x 10^e (a 1 s
//                  collector stamping in ms: e = 6), else n uint32 steps (bit 0) when every
//                  step fits 32 bits (4.29 s), else n float64 offsets (exact integers)
//     ..           values: float64 / int64 8 B, enum int32 4 B, boolean 1 B; one (bit 3:
//                  every value has the same bits) or n
//     ..           qualities: one uint32 (bit 1) or n uint32
//     last 4       CRC32 (zlib) of every byte before it
// Why raw: a segment is a write-ahead copy of points the seal encodes within a few commits,
// so it needs to be exact and cheap, not small; encoding every commit's points with the
// chunk codec (and again at the seal) was a fifth of the ingest thread's time. The 16-bit
// steps and the one value (2026-11-22) cost a pass each and take a 1 s float64 tag from 12
// to 10 bytes a point, a setpoint or state from 12 or 5 to 2: less to commit and a lower
// high-water mark for the pages LMDB lists as free once the heads are sealed.
import { crc32 } from 'node:zlib';
import { ServiceError } from '../errors.js';
import type { PointColumns } from './encoding/chunk-types.js';
import { encodeChunk } from './encoding/chunk.js';
import { slicePointColumns, valueBytes } from './encoding/point-columns.js';
import { TYPE_CODES, typeCode } from './encoding/chunk-header.js';
import { decodeColumns } from './chunk-access.js';
import { uuidOf } from './keys.js';
import { allocColumns, timeAt, valueAt, type PointValue } from './point-runs.js';
import { PACKED_SEGMENT, decodePackedSegment, encodePackedSegment, sameValues, valueColumn } from './head-packed.js';

export const RAW_SEGMENT = 0x80;
const RAW_HEADER = 16;
const TIME_DELTAS = 1, ONE_QUALITY = 2, TIME_STEPS16 = 4, ONE_VALUE = 8;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** Raw columns are copied as host memory: only on a little-endian host (every platform Node ships for). */
const HOST_LE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function bytesOf(a: ArrayBufferView, from: number, n: number, width: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset + from * width, n * width);
}

/**
 * One buffer reused by every raw segment the writer builds: a fresh 10-40 KB buffer per
 * commit and series was garbage the collector chased (lmdb-js copies a value into its page
 * inside putSync, so the bytes are free again when the next segment is built).
 */
let scratch = Buffer.alloc(0);
function scratchOf(n: number): Buffer {
  if (scratch.length < n) scratch = Buffer.from(new ArrayBuffer(Math.max(n, 2 * scratch.length, 65536)));
  return scratch.subarray(0, n);
}

/**
 * Points [from, from+n) of the head's columns as one segment: a packed segment
 * (head-packed.ts), or the chunk codec for strings (their values need encoding anyway). A
 * packed segment lives in a buffer the next call reuses: store it before building another.
 */
export function encodeSegment(c: PointColumns, from: number, n: number): Buffer {
  if (c.type === 'string' || !HOST_LE) {
    const bytes = encodeChunk(slicePointColumns(c, from, n));
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return encodePackedSegment(c, from, n);
}

/**
 * The raw segment layout the writer stored from 2026-11-21 to 2026-11-28 (top of this file):
 * stores written then still hold such segments, and the tests write them to check they read.
 * A raw segment lives in a buffer the next call reuses: store it before building another.
 */
export function encodeRawSegment(c: PointColumns, from: number, n: number): Buffer {
  if (c.type === 'string' || !HOST_LE) throw new Error('BUG: raw segments hold no strings and are written on little-endian hosts only');
  const off = c.tsOffset, q = c.quality, end = from + n;
  // the largest step and the largest power of ten dividing every step (steps are exact
  // integers, so round(s / p) * p === s exactly when p divides s; a float % is a libm call)
  let maxStep = 0, e = 9, p = POW10[9], inv = 1 / p;
  for (let i = from + 1; i < end; i++) {
    const s = off[i] - off[i - 1];
    if (s > maxStep) maxStep = s;
    while (e > 0 && Math.round(s * inv) * p !== s) { e--; p = POW10[e]; inv = 1 / p; }
  }
  const unit = POW10[e];
  const timeForm = maxStep / unit <= 0xffff ? TIME_STEPS16 : maxStep <= 0xffffffff ? TIME_DELTAS : 0;
  let oneQuality = true;
  const q0 = q[from];
  for (let i = from + 1; i < end; i++) if (q[i] !== q0) { oneQuality = false; break; }
  const w = valueBytes(c.type);
  const oneValue = sameValues(valueColumn(c), from, n, w);
  const valuesAt = RAW_HEADER + timeBytes(timeForm) * n, qualityAt = valuesAt + (oneValue ? w : w * n), crcAt = qualityAt + (oneQuality ? 4 : 4 * n);
  const b = scratchOf(crcAt + 4);
  b[0] = RAW_SEGMENT; b[1] = typeCode(c.type); b[2] = timeForm | (oneQuality ? ONE_QUALITY : 0) | (oneValue ? ONE_VALUE : 0);
  b[3] = timeForm === TIME_STEPS16 ? e : 0;
  b.writeUInt32LE(n, 4);
  // tsBase is point 0's time (the head's own base may lie outside int64 after a slice)
  const o0 = off[from];
  b.writeBigInt64LE(c.tsBase + BigInt(o0), 8);
  // step i is time(i) - time(i-1), step 0 is 0; the scratch starts 8-aligned
  if (timeForm === TIME_STEPS16) {
    const steps = new Uint16Array(b.buffer, b.byteOffset + RAW_HEADER, n);
    steps[0] = 0;
    for (let i = 1; i < n; i++) steps[i] = (off[from + i] - off[from + i - 1]) / unit;
  } else if (timeForm === TIME_DELTAS) {
    const steps = new Uint32Array(b.buffer, b.byteOffset + RAW_HEADER, n);
    steps[0] = 0;
    for (let i = 1; i < n; i++) steps[i] = off[from + i] - off[from + i - 1];
  } else {
    const offsets = new Float64Array(b.buffer, b.byteOffset + RAW_HEADER, n);
    for (let i = 0; i < n; i++) offsets[i] = off[from + i] - o0;
  }
  b.set(bytesOf(valueColumn(c), from, oneValue ? 1 : n, w), valuesAt);
  if (oneQuality) b.writeUInt32LE(q0, qualityAt); else b.set(bytesOf(q, from, n, 4), qualityAt);
  b.writeUInt32LE(crc32(b.subarray(0, crcAt)), crcAt);
  return b;
}

function timeBytes(form: number): number {
  return form === TIME_STEPS16 ? 2 : form === TIME_DELTAS ? 4 : 8;
}

function corruptSegment(series: Buffer, why: string, bytes: Uint8Array): never {
  throw new ServiceError('chunk-corrupt', `series ${uuidOf(series)} head segment: ${why}`, {
    series: uuidOf(series), chunk_start_ns: null, byte_length: bytes.byteLength,
  });
}

/** A raw segment's columns (fresh arrays; the LMDB buffer is reused), checked against its CRC and layout. */
interface RawLayout {
  type: PointColumns['type']; n: number; w: number; timeForm: number; e: number;
  oneQuality: boolean; oneValue: boolean; valuesAt: number; qualityAt: number; crcAt: number;
}

/** A raw segment's layout, checked against its CRC and its length. */
function rawLayout(series: Buffer, bytes: Buffer): RawLayout {
  if (!HOST_LE) corruptSegment(series, 'raw segments are read on little-endian hosts only', bytes);
  if (bytes.length < RAW_HEADER + 4) corruptSegment(series, 'shorter than its header', bytes);
  const type = TYPE_CODES[bytes[1]], flags = bytes[2];
  const n = bytes.readUInt32LE(4);
  const w = type === undefined ? 0 : valueBytes(type);
  const timeForm = flags & (TIME_DELTAS | TIME_STEPS16), e = bytes[3];
  const oneQuality = (flags & ONE_QUALITY) !== 0, oneValue = (flags & ONE_VALUE) !== 0;
  const valuesAt = RAW_HEADER + timeBytes(timeForm) * n, qualityAt = valuesAt + (oneValue ? w : w * n), crcAt = qualityAt + (oneQuality ? 4 : 4 * n);
  const badForm = flags > 15 || timeForm === (TIME_DELTAS | TIME_STEPS16) || (timeForm === TIME_STEPS16 ? e > 9 : e !== 0);
  if (w === 0 || n === 0 || badForm || bytes.length !== crcAt + 4) corruptSegment(series, `type ${bytes[1]}, flags ${flags}, e ${e}, ${n} points do not fit ${bytes.length} bytes`, bytes);
  if (crc32(bytes.subarray(0, crcAt)) !== bytes.readUInt32LE(crcAt)) corruptSegment(series, 'checksum mismatch', bytes);
  return { type, n, w, timeForm, e, oneQuality, oneValue, valuesAt, qualityAt, crcAt };
}

/**
 * The last point of a stored segment, without decoding the others: a raw segment is read
 * in place (checked like decodeRawSegment; its time is the sum of its steps), an encoded
 * one is decoded. For the latest point of a series (readSnapshot).
 */
export function lastPointOfSegment(series: Buffer, bytes: Buffer): { ts: bigint; value: PointValue; quality: number } {
  if (bytes[0] !== RAW_SEGMENT) {
    const c = decodeSegment(series, bytes);
    const i = c.count - 1;
    return { ts: timeAt(c, i), value: valueAt(c, i), quality: c.quality[i] };
  }
  const { type, n, w, timeForm, e, oneQuality, oneValue, valuesAt, qualityAt } = rawLayout(series, bytes);
  let off = 0;
  if (timeForm === TIME_STEPS16) {
    const unit = POW10[e];
    for (let i = 0, at = RAW_HEADER; i < n; i++, at += 2) off += (bytes[at] | (bytes[at + 1] << 8)) * unit;
  } else if (timeForm === TIME_DELTAS) {
    for (let i = 0, at = RAW_HEADER; i < n; i++, at += 4) off += bytes.readUInt32LE(at);
  } else {
    off = bytes.readDoubleLE(RAW_HEADER + 8 * (n - 1));
  }
  const at = valuesAt + (oneValue ? 0 : w * (n - 1));
  const value: PointValue = type === 'float64' ? bytes.readDoubleLE(at) : type === 'int64' ? bytes.readBigInt64LE(at) : type === 'boolean' ? bytes[at] === 1 : bytes.readInt32LE(at);
  const quality = bytes.readUInt32LE(oneQuality ? qualityAt : qualityAt + 4 * (n - 1));
  return { ts: bytes.readBigInt64LE(8) + BigInt(off), value, quality };
}

function decodeRawSegment(series: Buffer, bytes: Buffer): PointColumns {
  const { type, n, w, timeForm, e, oneQuality, oneValue, valuesAt, qualityAt, crcAt } = rawLayout(series, bytes);
  const c = allocColumns(type, n, bytes.readBigInt64LE(8));
  if (timeForm === TIME_STEPS16) {
    const steps = new Uint16Array(n), unit = POW10[e];
    bytesOf(steps, 0, n, 2).set(bytes.subarray(RAW_HEADER, valuesAt));
    let t = 0;
    for (let i = 0; i < n; i++) { t += steps[i] * unit; c.tsOffset[i] = t; }
  } else if (timeForm === TIME_DELTAS) {
    const steps = new Uint32Array(n);
    bytesOf(steps, 0, n, 4).set(bytes.subarray(RAW_HEADER, valuesAt));
    let t = 0;
    for (let i = 0; i < n; i++) { t += steps[i]; c.tsOffset[i] = t; }
  } else {
    bytesOf(c.tsOffset, 0, n, 8).set(bytes.subarray(RAW_HEADER, valuesAt));
  }
  const values = bytesOf(valueColumn(c), 0, n, w);
  values.set(bytes.subarray(valuesAt, qualityAt));
  // one value: doubled in place by byte copies, exact for any bits
  if (oneValue) for (let filled = w; filled < n * w; filled *= 2) values.copyWithin(filled, 0, Math.min(filled, n * w - filled));
  if (oneQuality) c.quality.fill(bytes.readUInt32LE(qualityAt), 0, n); else bytesOf(c.quality, 0, n, 4).set(bytes.subarray(qualityAt, crcAt));
  c.count = n;
  return c;
}

/** A stored segment's points, raw or encoded. */
export function decodeSegment(series: Buffer, bytes: Buffer): PointColumns {
  if (bytes[0] === PACKED_SEGMENT) {
    if (!HOST_LE) corruptSegment(series, 'packed segments are read on little-endian hosts only', bytes);
    const c = decodePackedSegment(bytes);
    return typeof c === 'string' ? corruptSegment(series, c, bytes) : c;
  }
  return bytes[0] === RAW_SEGMENT ? decodeRawSegment(series, bytes) : decodeColumns(series, null, bytes);
}
