// The fixed 100-byte chunk header (format version 1): what a sealed chunk says about
// itself, readable in O(1) and protected by its own CRC32 so a header-only reader
// (render, rollups, chunk listings) never trusts a damaged header without paying for a
// checksum of the whole chunk. Byte layout drawn in FORMAT.md ("Header").

import { crc32 } from 'node:zlib';
import { ChunkCorruptError, type ChunkHeader, type PointColumns, type ValueType } from './chunk-types.js';
import type { ChunkWriter } from './byte-io.js';

export const FORMAT_VERSION = 2;
/** Versions parseHeader accepts: 1 (no summary section) and 2. */
export const OLDEST_VERSION = 1;
export const HEADER_BYTES = 100;
export const HEADER_CRC_AT = 96;
export const TRAILER_BYTES = 4;
export const MIN_CHUNK_BYTES = HEADER_BYTES + TRAILER_BYTES;

export const Off = {
  version: 0, type: 1, reserved: 2, count: 4,
  firstTs: 8, lastTs: 16, minTs: 24, maxTs: 32,
  min: 40, max: 48, first: 56, last: 64,
  good: 72, uncertain: 76, bad: 80,
  byteLength: 84, valuesAt: 88, qualityAt: 92,
  /** Version 2: where the time section starts (version 1: the header CRC). */
  timesAt: 96,
} as const;

export const TYPE_CODES: readonly ValueType[] = ['float64', 'int64', 'boolean', 'string', 'enum'];
export const typeCode = (t: ValueType): number => TYPE_CODES.indexOf(t);

/** Quality classes, OPC DA style (ARCHITECTURE "Time and numbers"). */
export const GOOD_QUALITY = 192;
export const UNCERTAIN_QUALITY = 64;

export interface HeaderStats {
  minIdx: number;
  maxIdx: number;
  good: number;
  uncertain: number;
  bad: number;
}

/** Index of the first minimum and first maximum in the numeric (or exact int64) view, and quality counts. */
export function computeStats(cols: PointColumns, n: number, out: HeaderStats): void {
  let minIdx = 0;
  let maxIdx = 0;
  if (cols.type === 'int64') {
    const v = cols.i64 as BigInt64Array;
    for (let i = 1; i < n; i++) {
      if (v[i] < v[minIdx]) minIdx = i;
      else if (v[i] > v[maxIdx]) maxIdx = i;
    }
  } else if (cols.type !== 'string') {
    const v = (cols.type === 'float64' ? cols.f64 : cols.type === 'boolean' ? cols.u8 : cols.ord) as ArrayLike<number>;
    for (let i = 1; i < n; i++) {
      if (v[i] < v[minIdx]) minIdx = i;
      else if (v[i] > v[maxIdx]) maxIdx = i;
    }
  }
  let good = 0;
  let uncertain = 0;
  const q = cols.quality;
  for (let i = 0; i < n; i++) {
    if (q[i] >= GOOD_QUALITY) good++;
    else if (q[i] >= UNCERTAIN_QUALITY) uncertain++;
  }
  out.minIdx = minIdx;
  out.maxIdx = maxIdx;
  out.good = good;
  out.uncertain = uncertain;
  out.bad = n - good - uncertain;
}

function writeValueSlot(view: DataView, at: number, cols: PointColumns, i: number): void {
  switch (cols.type) {
    case 'float64': return view.setFloat64(at, (cols.f64 as Float64Array)[i], true);
    case 'int64': return view.setBigInt64(at, (cols.i64 as BigInt64Array)[i], true);
    case 'boolean': return view.setFloat64(at, (cols.u8 as Uint8Array)[i], true);
    case 'enum': return view.setFloat64(at, (cols.ord as Int32Array)[i], true);
    case 'string': return view.setFloat64(at, NaN, true);
  }
}

/** Writes the header into w at offset 0; section offsets and length are patched by finishHeader. */
export function writeHeader(w: ChunkWriter, cols: PointColumns, n: number, firstTs: bigint, s: HeaderStats): void {
  w.ensure(HEADER_BYTES);
  w.bytes.fill(0, 0, HEADER_BYTES);
  const v = w.view;
  const o = cols.tsOffset;
  const at = (i: number): bigint => cols.tsBase + BigInt(o[i]);
  v.setUint8(Off.version, FORMAT_VERSION);
  v.setUint8(Off.type, typeCode(cols.type));
  v.setUint32(Off.count, n, true);
  v.setBigInt64(Off.firstTs, firstTs, true);
  v.setBigInt64(Off.lastTs, at(n - 1), true);
  // Strings have no order: their min/max times are the first time, values NaN.
  const isString = cols.type === 'string';
  v.setBigInt64(Off.minTs, isString ? firstTs : at(s.minIdx), true);
  v.setBigInt64(Off.maxTs, isString ? firstTs : at(s.maxIdx), true);
  writeValueSlot(v, Off.min, cols, s.minIdx);
  writeValueSlot(v, Off.max, cols, s.maxIdx);
  writeValueSlot(v, Off.first, cols, 0);
  writeValueSlot(v, Off.last, cols, n - 1);
  v.setUint32(Off.good, s.good, true);
  v.setUint32(Off.uncertain, s.uncertain, true);
  v.setUint32(Off.bad, s.bad, true);
  w.pos = HEADER_BYTES;
}

/**
 * Assembles a version 2 chunk: the 100-byte header from w, the summary (whose length is a
 * multiple of 4, its last 4 bytes left for the header CRC), then the sections w holds
 * after its header, which move by the summary's length (a multiple of 4 keeps the
 * payload words aligned). Offsets are those of the sections inside w.
 */
export function assembleChunk(w: ChunkWriter, summary: Uint8Array, valuesAt: number, qualityAt: number): Uint8Array {
  const shift = summary.length;
  const total = w.pos + shift + TRAILER_BYTES;
  const out = new Uint8Array(total);
  out.set(w.bytes.subarray(0, HEADER_BYTES), 0);
  out.set(summary, HEADER_BYTES);
  out.set(w.bytes.subarray(HEADER_BYTES, w.pos), HEADER_BYTES + shift);
  const v = viewOf(out);
  const timesAt = HEADER_BYTES + shift;
  v.setUint32(Off.byteLength, total, true);
  v.setUint32(Off.valuesAt, valuesAt + shift, true);
  v.setUint32(Off.qualityAt, qualityAt + shift, true);
  v.setUint32(Off.timesAt, timesAt, true);
  v.setUint32(timesAt - 4, crc32(out.subarray(0, timesAt - 4)), true);
  v.setUint32(total - TRAILER_BYTES, crc32(out.subarray(0, total - TRAILER_BYTES)), true);
  return out;
}

/**
 * Where a header-only reader finds the header CRC and what it covers: version 1, bytes
 * 0..95 with the CRC at 96; version 2, bytes 0..timesAt-5 (header and summary) with the
 * CRC at timesAt-4. Returns the CRC's offset, or -1 when timesAt is out of bounds.
 */
export function headerCrcAt(bytes: Uint8Array): number {
  if (bytes[0] === 1) return HEADER_CRC_AT;
  const timesAt = (bytes[96] | (bytes[97] << 8) | (bytes[98] << 16) | (bytes[99] << 24)) >>> 0;
  if (timesAt < MIN_TIMES_AT || timesAt > bytes.length - TRAILER_BYTES || (timesAt & 3) !== 0) return -1;
  return timesAt - 4;
}

/** A version 2 summary holds at least its 3 fixed bytes and the CRC. */
const MIN_TIMES_AT = HEADER_BYTES + 8;

function corrupt(bytes: Uint8Array, what: string): never {
  throw new ChunkCorruptError(`chunk corrupt: ${what} (${bytes.length} bytes)`, bytes.length);
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Checks everything the header alone can prove: size, version, its CRC, internal consistency. */
export function parseHeader(bytes: Uint8Array): ChunkHeader {
  if (bytes.length < MIN_CHUNK_BYTES) corrupt(bytes, `shorter than the ${MIN_CHUNK_BYTES}-byte minimum`);
  const v = viewOf(bytes);
  const version = v.getUint8(Off.version);
  if (version !== FORMAT_VERSION && version !== OLDEST_VERSION) corrupt(bytes, `unknown format version ${version}`);
  const crcAt = headerCrcAt(bytes);
  if (crcAt < 0) corrupt(bytes, 'time section offset out of bounds');
  if (crc32(bytes.subarray(0, crcAt)) !== v.getUint32(crcAt, true)) corrupt(bytes, 'header checksum mismatch');
  const byteLength = v.getUint32(Off.byteLength, true);
  if (byteLength !== bytes.length) corrupt(bytes, `header says ${byteLength} bytes (truncated or padded)`);
  const type = TYPE_CODES[v.getUint8(Off.type)];
  if (type === undefined) corrupt(bytes, `unknown value type code ${v.getUint8(Off.type)}`);
  const count = v.getUint32(Off.count, true);
  const good = v.getUint32(Off.good, true);
  const uncertain = v.getUint32(Off.uncertain, true);
  const bad = v.getUint32(Off.bad, true);
  if (count === 0 || good + uncertain + bad !== count) corrupt(bytes, `count ${count} disagrees with quality counts`);
  const valuesAt = v.getUint32(Off.valuesAt, true);
  const qualityAt = v.getUint32(Off.qualityAt, true);
  const timesAt = version === 1 ? HEADER_BYTES : crcAt + 4;
  if (!(timesAt <= valuesAt && valuesAt <= qualityAt && qualityAt <= byteLength - TRAILER_BYTES)) {
    corrupt(bytes, `section offsets ${timesAt}/${valuesAt}/${qualityAt} out of order`);
  }
  const num = (at: number): number => (type === 'int64' ? Number(v.getBigInt64(at, true)) : v.getFloat64(at, true));
  return {
    formatVersion: version,
    type,
    count,
    firstTs: v.getBigInt64(Off.firstTs, true),
    lastTs: v.getBigInt64(Off.lastTs, true),
    min: num(Off.min),
    max: num(Off.max),
    minTs: v.getBigInt64(Off.minTs, true),
    maxTs: v.getBigInt64(Off.maxTs, true),
    first: num(Off.first),
    last: num(Off.last),
    goodCount: good,
    uncertainCount: uncertain,
    badCount: bad,
    byteLength,
  };
}

/**
 * Section offsets of a chunk whose header parseHeader (or an equivalent check) accepted.
 * The summary is [summaryAt, summaryEnd): empty (both 0) in version 1.
 */
export function sectionOffsets(bytes: Uint8Array): { timesAt: number; valuesAt: number; qualityAt: number; summaryAt: number; summaryEnd: number; end: number } {
  const v = viewOf(bytes);
  const v1 = v.getUint8(Off.version) === 1;
  const timesAt = v1 ? HEADER_BYTES : v.getUint32(Off.timesAt, true);
  return {
    timesAt, valuesAt: v.getUint32(Off.valuesAt, true), qualityAt: v.getUint32(Off.qualityAt, true),
    summaryAt: v1 ? 0 : HEADER_BYTES, summaryEnd: v1 ? 0 : timesAt - 4, end: bytes.length - TRAILER_BYTES,
  };
}

/** Verifies the trailing CRC32 over everything before it. */
export function verifyChunkChecksum(bytes: Uint8Array): void {
  const end = bytes.length - TRAILER_BYTES;
  if (crc32(bytes.subarray(0, end)) !== viewOf(bytes).getUint32(end, true)) corrupt(bytes, 'chunk checksum mismatch');
}

/** Exact int64 min/max/first/last of an int64 chunk (the header's numbers round above 2^53). */
export function readInt64Extremes(bytes: Uint8Array): { min: bigint; max: bigint; first: bigint; last: bigint } {
  const h = parseHeader(bytes);
  if (h.type !== 'int64') throw new Error(`BUG: readInt64Extremes on a ${h.type} chunk`);
  const v = viewOf(bytes);
  return {
    min: v.getBigInt64(Off.min, true),
    max: v.getBigInt64(Off.max, true),
    first: v.getBigInt64(Off.first, true),
    last: v.getBigInt64(Off.last, true),
  };
}
