// The chunk header: what a sealed chunk says about itself, readable in O(1) and protected
// by its own CRC32 so a header-only reader (render, rollups, chunk listings) never trusts a
// damaged header without paying for a checksum of the whole chunk. Versions 1 and 2 have
// the fixed 100-byte header below (still read); versions 3, 4 and 5 the compact one of
// chunk-header-v3.ts (version 4 has the same header and more integer-column and float
// layouts, version 5, written since 2026-11-26, one more integer-column layout). Byte
// layouts drawn in FORMAT.md ("Header").

import { crc32 } from 'node:zlib';
import { ChunkCorruptError, type ChunkHeader, type PointColumns, type ValueType } from './chunk-types.js';
import { FIRST_TS_AT, RAW_SLOTS, V3_TAG, V3Header, V4_TAG, V5_TAG } from './chunk-header-v3.js';

export const FORMAT_VERSION = 5;
/** Versions parseHeader accepts: 1 (no summary section), 2, 3, 4 and 5. */
export const OLDEST_VERSION = 1;
/** The fixed header of versions 1 and 2. */
export const HEADER_BYTES = 100;
export const HEADER_CRC_AT = 96;
export const TRAILER_BYTES = 4;
/** Smallest chunk of versions 1 and 2. */
const V2_MIN_BYTES = HEADER_BYTES + TRAILER_BYTES;
/**
 * The fixed bytes of a version 3 chunk, which chunk fitting (chunk-fit.ts, open-head.ts)
 * subtracts to learn a series' bytes per point: a typical header with its CRCs, summary
 * and the sections' own fixed bytes (~50-60; the smallest chunk is V3_MIN_BYTES plus its
 * sections). Measured on the fleet (bench:storage-engine): 32 took 1.60 seal encodes per
 * chunk, 48 1.57, 60 1.46 (version 2 with 104: 1.51).
 */
export const MIN_CHUNK_BYTES = 60;

/** The version of a chunk from byte 0: 1 to 5, or 0 for anything else. Versions 3, 4 and 5 share the compact header. */
export function chunkVersion(bytes: Uint8Array): number {
  const b0 = bytes[0];
  if (b0 === 1 || b0 === 2) return b0;
  const tag = b0 & 0xf0;
  return tag === V5_TAG ? 5 : tag === V4_TAG ? 4 : tag === V3_TAG ? 3 : 0;
}

/** Byte 0 of a chunks-table entry that refers to a chunk kept in a tail pack (storage/tail-packs.ts). */
export const PACKED_TAIL_TAG = 0xa0;

/** Why byte 0 is no chunk version; a packed-tail reference reaches a decoder only when its pack did not resolve. */
export function unknownVersion(b0: number): string {
  return b0 === PACKED_TAIL_TAG ? 'a packed-tail reference whose pack is missing or shorter than it says' : `unknown format version ${b0}`;
}

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

/**
 * Versions 1 and 2: where a header-only reader finds the header CRC and what it covers: version 1, bytes
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
  if (bytes.length === 0) corrupt(bytes, 'empty');
  const version = chunkVersion(bytes);
  if (version >= 3) return parseV3(bytes, version);
  if (version === 0) corrupt(bytes, unknownVersion(bytes[0]));
  return parseV2(bytes);
}

const v3 = new V3Header();

function parseV3(bytes: Uint8Array, version: number): ChunkHeader {
  const why = v3.read(bytes, true);
  if (why !== null) corrupt(bytes, why);
  const v = viewOf(bytes);
  const type = TYPE_CODES[v3.typeCode];
  const firstTs = v.getBigInt64(FIRST_TS_AT, true);
  const isString = type === 'string';
  const dv = new DataView(bytes.buffer);
  return {
    formatVersion: version,
    type,
    count: v3.count,
    firstTs,
    lastTs: firstTs + BigInt(v3.lastOff),
    min: isString ? NaN : v3.num(bytes, dv, 0),
    max: isString ? NaN : v3.num(bytes, dv, 1),
    minTs: firstTs + BigInt(v3.minOff),
    maxTs: firstTs + BigInt(v3.maxOff),
    first: isString ? NaN : v3.num(bytes, dv, 2),
    last: isString ? NaN : v3.num(bytes, dv, 3),
    goodCount: v3.count - v3.uncertain - v3.bad,
    uncertainCount: v3.uncertain,
    badCount: v3.bad,
    byteLength: bytes.length,
  };
}

function parseV2(bytes: Uint8Array): ChunkHeader {
  if (bytes.length < V2_MIN_BYTES) corrupt(bytes, `shorter than the ${V2_MIN_BYTES}-byte minimum`);
  const v = viewOf(bytes);
  const version = v.getUint8(Off.version);
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

/** Where a chunk's summary and sections lie (a header reader may keep them for later reads). */
export interface ChunkSections {
  timesAt: number;
  valuesAt: number;
  qualityAt: number;
  /** The summary is [summaryAt, summaryEnd): its content and 0-3 zero bytes; empty (0, 0) in version 1. */
  summaryAt: number;
  summaryEnd: number;
}

/**
 * Section offsets of a chunk whose header parseHeader (or an equivalent check) accepted.
 * The summary is [summaryAt, summaryEnd): empty (both 0) in version 1. A version 3 header
 * is parsed again (no CRC: the caller checked it); damaged bytes behind a forged checksum
 * give ChunkCorruptError.
 */
export function sectionOffsets(bytes: Uint8Array): ChunkSections & { end: number } {
  if (chunkVersion(bytes) >= 3) {
    const why = v3.read(bytes, false);
    if (why !== null) corrupt(bytes, why);
    return { timesAt: v3.timesAt, valuesAt: v3.valuesAt, qualityAt: v3.qualityAt, summaryAt: v3.summaryAt, summaryEnd: v3.crcAt, end: bytes.length - TRAILER_BYTES };
  }
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
  if (h.formatVersion >= 3) {
    // parseHeader left v3 filled from these bytes.
    if (v3.k !== RAW_SLOTS) return { min: BigInt(v3.xMin), max: BigInt(v3.xMax), first: BigInt(v3.xFirst), last: BigInt(v3.xLast) };
    const at = v3.slotsAt;
    return { min: v.getBigInt64(at, true), max: v.getBigInt64(at + 8, true), first: v.getBigInt64(at + 16, true), last: v.getBigInt64(at + 24, true) };
  }
  return {
    min: v.getBigInt64(Off.min, true),
    max: v.getBigInt64(Off.max, true),
    first: v.getBigInt64(Off.first, true),
    last: v.getBigInt64(Off.last, true),
  };
}
