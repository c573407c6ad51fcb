// The compact chunk header of format versions 3 and 4 (FORMAT.md "Header, version 3"; version
// 4 has the same header and differs only in the column layouts it may hold): the same
// facts as the 100-byte header of versions 1 and 2 in ~25-45 bytes. Times are varint
// offsets from firstTs in 10^e ns, min/max/first/last are integers of the value column's
// own domain (value = x / 10^k) unless the chunk's values are float-split or wide int64,
// section offsets are lengths, and the good count is implied.
//
// V3Header.read is the one parser of these bytes: parseHeader (chunk-header.ts), render's
// HeaderView and the section/summary lookups all use it. It allocates nothing and throws
// nothing, so render can run it over thousands of headers: it returns why the bytes are
// refused, or null.

import { crc32 } from 'node:zlib';
import type { ChunkWriter } from './byte-io.js';
import type { HeaderStats } from './chunk-header.js';
import type { PointColumns } from './chunk-types.js';

/** Byte 0 of a version 3 chunk is V3_TAG | type code (versions 1 and 2 have 1 or 2, raw head segments 0x80). */
export const V3_TAG = 0x30;
/** Byte 0 of a version 4 chunk (written 2026-11-21 to 2026-11-26): the version 3 header, more column layouts. */
export const V4_TAG = 0x40;
/** Byte 0 of a version 5 chunk (written since 2026-11-26): version 4 and the RICE_DELTA column layout. */
export const V5_TAG = 0x50;
/** The k nibble that says the four value slots are raw 8-byte f64 (float64) or i64 (int64). */
export const RAW_SLOTS = 15;
const STRING_CODE = 3;
const INT64_CODE = 1;
/** firstTs sits at bytes 1..8; the varint W (timesAt = 4W) follows. */
export const FIRST_TS_AT = 1;
const FIELDS_AT = 9;
/**
 * Smallest possible version 3 chunk before its sections: tag, firstTs, seven one-byte
 * varints and the form byte (a string chunk has no min/max or slots), the 3-byte summary,
 * padding to 24, the header CRC and the trailer.
 */
export const V3_MIN_BYTES = 32;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/** The fields of one version 3 header; refilled by read(). Times are ns offsets from firstTs. */
export class V3Header {
  typeCode = 0;
  timesAt = 0; valuesAt = 0; qualityAt = 0; byteLength = 0;
  count = 0; uncertain = 0; bad = 0;
  /** Time fields in units of 10^e ns. */
  e = 0;
  /** Value slots: x / 10^k, or RAW_SLOTS (8-byte slots at slotsAt: min, max, first, last). */
  k = 0;
  lastOff = 0; minOff = 0; maxOff = 0;
  xMin = 0; xMax = 0; xFirst = 0; xLast = 0;
  slotsAt = 0;
  /** The summary (FORMAT.md "Summary section") is [summaryAt, crcAt): its content, then 0-3 zero bytes. */
  summaryAt = 0;
  crcAt = 0;

  /**
   * Reads the header of `b` (byte 0 already known to be a version 3, 4 or 5 tag). With checkCrc the
   * header CRC is verified before any field is believed. Returns null, or why the bytes are
   * refused; every read is bounded by the header, so damaged bytes cannot crash or hang it.
   */
  read(b: Uint8Array, checkCrc: boolean): string | null {
    const len = b.length;
    if (len < V3_MIN_BYTES) return `shorter than the ${V3_MIN_BYTES}-byte minimum`;
    const typeCode = b[0] & 15;
    if (typeCode > 4) return `unknown value type code ${typeCode}`;
    this.typeCode = typeCode;
    pos = FIELDS_AT;
    end = len - 4;
    if (!varints(b, 1)) return 'time section offset out of bounds';
    // Offsets and counts are made int32 (| 0, after their range checks): they end in the
    // fields of ChunkReader and render's header view, which V8 keeps as small integers only
    // while no double is stored there (a double made every later ChunkReader slower).
    if (F[0] * 4 > len - 4) return 'time section offset out of bounds';
    const timesAt = (F[0] * 4) | 0;
    if (timesAt < pos + 4) return 'time section offset out of bounds';
    const crcAt = timesAt - 4;
    this.crcAt = crcAt;
    this.timesAt = timesAt;
    if (checkCrc && crc32(b.subarray(0, crcAt)) !== ((b[crcAt] | (b[crcAt + 1] << 8) | (b[crcAt + 2] << 16) | (b[crcAt + 3] << 24)) >>> 0)) {
      return 'header checksum mismatch';
    }
    end = crcAt;
    // Section lengths and counts, then the form byte.
    if (!varints(b, 6)) return 'header fields run past the header checksum';
    const sum = timesAt + F[0] + F[1] + F[2] + 4;
    if (sum !== len) return `header says ${sum} bytes (truncated or padded)`;
    const valuesAt = (timesAt + F[0]) | 0, qualityAt = (valuesAt + F[1]) | 0;
    this.valuesAt = valuesAt; this.qualityAt = qualityAt; this.byteLength = len;
    if (F[3] > 0x7fffffff) return `count ${F[3]} out of range`;
    const count = F[3] | 0, uncertain = F[4], bad = F[5];
    if (count === 0 || uncertain + bad > count) return `count ${count} disagrees with quality counts`;
    this.count = count; this.uncertain = uncertain | 0; this.bad = bad | 0;
    if (pos >= end) return 'header fields run past the header checksum';
    const form = b[pos++];
    const e = form & 15, k = form >> 4;
    if (e > 9 || (k > 9 && k !== RAW_SLOTS) || (typeCode === STRING_CODE && k !== RAW_SLOTS) || (k !== RAW_SLOTS && k > 0 && typeCode !== 0) ||
      (k === RAW_SLOTS && typeCode !== 0 && typeCode !== INT64_CODE && typeCode !== STRING_CODE)) {
      return `unknown value/time scale ${form}`;
    }
    this.e = e; this.k = k;
    const u = POW10[e];
    let lastOff = 0, minOff = 0, maxOff = 0;
    if (typeCode === STRING_CODE) {
      if (!varints(b, 1)) return 'header fields run past the header checksum';
      lastOff = F[0] * u;
    } else if (k !== RAW_SLOTS) {
      // Times, then first (zigzag), first - min, max - first, last - first (zigzag).
      if (!varints(b, 7)) return 'header fields run past the header checksum';
      lastOff = F[0] * u; minOff = F[1] * u; maxOff = F[2] * u;
      const first = unzigzag(F[3]);
      const lo = first - F[4], hi = first + F[5], last = first + unzigzag(F[6]);
      this.xFirst = first; this.xMin = lo; this.xMax = hi; this.xLast = last;
      if (!(lo <= last && last <= hi)) return 'last value outside the chunk\'s min and max';
    } else {
      if (!varints(b, 3)) return 'header fields run past the header checksum';
      lastOff = F[0] * u; minOff = F[1] * u; maxOff = F[2] * u;
      this.slotsAt = pos;
      pos += 32;
      if (pos > end) return 'header fields run past the header checksum';
    }
    this.lastOff = lastOff; this.minOff = minOff; this.maxOff = maxOff;
    if (minOff > lastOff || maxOff > lastOff || (count === 1 && lastOff !== 0)) return 'times of min/max/last out of the chunk';
    this.summaryAt = pos;
    return null;
  }

  /** The numeric view of a value slot (0 min, 1 max, 2 first, 3 last) of a non-string chunk. */
  num(b: Uint8Array, dv: DataView, slot: number): number {
    if (this.k !== RAW_SLOTS) {
      const x = slot === 0 ? this.xMin : slot === 1 ? this.xMax : slot === 2 ? this.xFirst : this.xLast;
      return this.k === 0 ? x : x / POW10[this.k];
    }
    const at = b.byteOffset + this.slotsAt + slot * 8;
    if (this.typeCode === INT64_CODE) return dv.getInt32(at + 4, true) * 4294967296 + dv.getUint32(at, true);
    return dv.getFloat64(at, true);
  }
}

// The parse position of V3Header.read and the varints it last decoded: module-level, not
// fields, so the decoding loop below stays small and monomorphic (render parses thousands
// of headers per request).
let pos = 0;
let end = 0;
const F = new Float64Array(8);

/**
 * Decodes n LEB128 varints (at most 8 bytes each) from pos into F[0..n) and moves pos past
 * them; false when one runs past `end` or is longer than 8 bytes.
 */
function varints(b: Uint8Array, n: number): boolean {
  let p = pos;
  const e = end;
  for (let j = 0; j < n; j++) {
    if (p >= e) return false;
    let x = b[p++];
    if (x >= 128) {
      let r = x & 127, s = 128;
      for (let i = 1; ; i++) {
        if (p >= e || i === 8) return false;
        x = b[p++];
        r += (x & 127) * s;
        if (x < 128) break;
        s *= 128;
      }
      x = r;
    }
    F[j] = x;
  }
  pos = p;
  return true;
}

const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/**
 * Writes the header fields that follow W (section lengths to the value slots) into w.
 * rel: time offsets from the first point; x: the value column's integers when k >= 0
 * (value = x / 10^k), else the slots are raw f64 / i64 (strings: none).
 */
export function writeV3Fields(
  w: ChunkWriter, cols: PointColumns, n: number, rel: Float64Array, x: Float64Array, k: number, s: HeaderStats,
  timesLen: number, valuesLen: number, qualityLen: number,
): void {
  w.varint(timesLen); w.varint(valuesLen); w.varint(qualityLen);
  w.varint(n); w.varint(s.uncertain); w.varint(s.bad);
  const isString = cols.type === 'string';
  const lastOff = rel[n - 1], minOff = isString ? 0 : rel[s.minIdx], maxOff = isString ? 0 : rel[s.maxIdx];
  // The coarsest power of ten (<= 10^9 ns) that divides all three time offsets.
  let e = 9;
  while (e > 0 && (lastOff % POW10[e] !== 0 || minOff % POW10[e] !== 0 || maxOff % POW10[e] !== 0)) e--;
  const kk = isString || k < 0 ? RAW_SLOTS : k;
  w.u8(e | (kk << 4));
  const u = POW10[e];
  w.varint(lastOff / u);
  if (isString) return;
  w.varint(minOff / u);
  w.varint(maxOff / u);
  if (kk !== RAW_SLOTS) {
    const first = x[0];
    w.svarint(first);
    w.varint(first - x[s.minIdx]);
    w.varint(x[s.maxIdx] - first);
    w.svarint(x[n - 1] - first);
    return;
  }
  for (const i of [s.minIdx, s.maxIdx, 0, n - 1]) {
    if (cols.type === 'int64') w.i64((cols.i64 as BigInt64Array)[i]);
    else w.f64((cols.f64 as Float64Array)[i]);
  }
}

const varintBytes = (v: number): number => (v < 128 ? 1 : v < 16384 ? 2 : 3);

/**
 * Assembles a version 5 chunk (the version 3 header): tag, firstTs, W, the fields and summary (`fields`), zero
 * padding to a multiple of 4, the header CRC, then the sections `body` (written from offset
 * 0 of their writer, so at a multiple of 4 their payload words stay aligned), then the CRC
 * of everything before it.
 */
export function assembleV3(typeCode: number, firstTs: bigint, fields: Uint8Array, body: Uint8Array, tag: number = V5_TAG): Uint8Array {
  let wBytes = 1, timesAt = 0;
  for (;;) {
    timesAt = ((FIELDS_AT + wBytes + fields.length + 3) & ~3) + 4;
    const need = varintBytes(timesAt / 4);
    if (need <= wBytes) break;
    wBytes = need;
  }
  const total = timesAt + body.length + 4;
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  out[0] = tag | typeCode;
  v.setBigInt64(FIRST_TS_AT, firstTs, true);
  let p = FIELDS_AT, wv = timesAt / 4;
  // W in exactly wBytes bytes (a longer form than needed only if the loop overshot: never below 2^21).
  for (let i = 0; i < wBytes; i++) {
    out[p++] = (wv & 127) | (i + 1 < wBytes ? 128 : 0);
    wv = Math.floor(wv / 128);
  }
  out.set(fields, p);
  v.setUint32(timesAt - 4, crc32(out.subarray(0, timesAt - 4)), true);
  out.set(body, timesAt);
  v.setUint32(total - 4, crc32(out.subarray(0, total - 4)), true);
  return out;
}
