// The server's reading of a CollectorMessage { batch } (proto/collector.proto), by hand: the
// message a collector sends thousands of times a second. proto-loader's generic path
// decodes a message object, then converts it (toObject) into a second one, giving each of
// the eight bytes fields an empty Buffer of its own when absent (defaults) and each 64-bit
// integer a Long first; per batch that was more work than checking its thousand points.
// Here the fields are read once into the WireBatch the session takes, the columns as views
// of the message bytes (no copy), absent columns as one shared empty Buffer.
// Only the plain shape is read this way: one `batch` field filling the message, every
// DataBatch field with its declared wire type, enum values the contract names, integers
// that fit. Anything else (open, watermark, heartbeat, unknown fields, a malformed or
// surprising message) returns null and goes to the generic decoder, so the values, defaults
// and errors the server sees are the generic decoder's whenever this one is not sure.
import type { WireBatch } from './batch-columns.js';

const EMPTY = Buffer.alloc(0);
const LANES = ['LANE_UNSPECIFIED', 'LIVE', 'BACKFILL'];
/** The wire type each DataBatch field must have (index: field number): 0 varint, 2 length-delimited. */
const WIRE = [-1, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 0, 2];
/** Bytes fields by field number (ts_ns .. quality and streams, except str). */
const BYTES_FIELD: Array<keyof WireBatch | null> = [null, null, null, null, null, 'ts_ns', 'f64', 'i64', 'bool', 'enum_ordinal', null, 'quality', null, 'streams'];

/** Varint reader state: the position after the last read, -1 once the input is not plain. */
let at = 0;
/** The high bits (above 32) of the last varint read by readVarint64. */
let high = 0;

/** A varint below 2^32 (5 bytes at most); sets `at` to -1 if it is longer or runs past `end`. */
function readVarint32(buf: Buffer, end: number): number {
  let v = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (at >= end) { at = -1; return 0; }
    const b = buf[at++];
    if (shift === 28) {
      if (b > 15) { at = -1; return 0; } // above 2^32, or a longer varint
      return (v + b * 2 ** 28) >>> 0;
    }
    v |= (b & 127) << shift;
    if (b < 128) return v >>> 0;
  }
  at = -1;
  return 0;
}

/** A varint of up to 64 bits: returns the low 32 bits, `high` the rest; `at` -1 when not plain. */
function readVarint64(buf: Buffer, end: number): number {
  let lo = 0, hi = 0;
  for (let i = 0; i < 10; i++) {
    if (at >= end) { at = -1; return 0; }
    const b = buf[at++];
    const bits = b & 127;
    if (i < 4) lo |= bits << (7 * i);
    else if (i === 4) { lo |= (bits & 15) << 28; hi = bits >> 4; }
    else hi |= bits << (7 * i - 32);
    if (b < 128) {
      if (i === 9 && b > 1) { at = -1; return 0; }
      high = hi >>> 0;
      return lo >>> 0;
    }
  }
  at = -1;
  return 0;
}

/** An unsigned 64-bit varint (`lo`, `high`) as its decimal string, as proto-loader gives it (longs: String). */
function uint64String(lo: number, hi: number): string {
  if (hi < 0x200000) return String(hi * 2 ** 32 + lo);
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** A signed 64-bit varint (two's complement) as its decimal string. */
function int64String(lo: number, hi: number): string {
  if (hi < 0x200000) return String(hi * 2 ** 32 + lo);
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/**
 * The batch of a CollectorMessage whose only field is `batch`, or null when the message has
 * another shape or anything this reader does not take as plain (then decode it generically).
 */
export function decodeBatchMessage(buf: Buffer): WireBatch | null {
  const total = buf.length;
  if (total < 2 || buf[0] !== ((2 << 3) | 2)) return null;
  at = 1;
  const len = readVarint32(buf, total);
  if (at < 0 || at + len !== total) return null;
  const b: WireBatch = {
    stream: 0, lane: 'LANE_UNSPECIFIED', seq: '0', count: 0,
    ts_ns: EMPTY, f64: EMPTY, i64: EMPTY, bool: EMPTY, enum_ordinal: EMPTY, str: [], quality: EMPTY,
    collector_receipt_ns: '0', streams: EMPTY,
  };
  let str: string[] | null = null;
  while (at < total) {
    const tag = readVarint32(buf, total);
    if (at < 0) return null;
    const field = tag >>> 3, wire = tag & 7;
    if (field < 1 || field > 13 || WIRE[field] !== wire) return null;
    if (wire === 2) {
      const n = readVarint32(buf, total);
      if (at < 0 || at + n > total) return null;
      if (field === 10) (str ??= []).push(buf.toString('utf8', at, at + n));
      else (b as unknown as Record<string, Buffer>)[BYTES_FIELD[field] as string] = buf.subarray(at, at + n);
      at += n;
      continue;
    }
    const lo = readVarint64(buf, total);
    if (at < 0) return null;
    const hi = high;
    switch (field) {
      // uint32 fields take the low 32 bits of a longer varint, as protobufjs does; keep it plain
      case 1: if (hi !== 0) return null; b.stream = lo; break;
      case 2: if (hi !== 0 || lo > 2) return null; b.lane = LANES[lo]; break;
      case 3: b.seq = uint64String(lo, hi); break;
      case 4: if (hi !== 0) return null; b.count = lo; break;
      case 12: b.collector_receipt_ns = int64String(lo, hi); break;
    }
  }
  if (str !== null) b.str = str;
  return b;
}
