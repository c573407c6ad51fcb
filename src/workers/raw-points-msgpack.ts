// The `points` array of a raw read as msgpack, written from decoded chunk columns
// straight into a BodySink: per point a fixmap of 3, {ts_ns: int64 (0xd3), value,
// quality: uint}. Same shape as the JSON body. The hot loop of GET /raw with
// Accept: application/x-msgpack: one reserve per run, then constant stores and DataView
// writes through locals; times come from the chunk base's two 32-bit words plus the
// exact double offset, without BigInt.
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import type { BodySink } from '../body-sink.js';
import { mpString, splitWords } from './msgpack-bytes.js';
import type { EnumMemberText } from './enum-member-text.js';

const TWO32 = 4294967296;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('BUG: raw msgpack writers assume a little-endian host');

// fixmap(3) + fixstr "ts_ns" + 0xd3 (int64 follows)
const TS = [0x83, 0xa5, 116, 115, 95, 110, 115, 0xd3];
const VALUE = [0xa5, 118, 97, 108, 117, 101]; // fixstr "value"
const QUALITY = [0xa7, 113, 117, 97, 108, 105, 116, 121]; // fixstr "quality"
const ENUM_SET = [0xa8, 101, 110, 117, 109, 95, 115, 101, 116]; // fixstr "enum_set"
const ORDINAL = [0xa7, 111, 114, 100, 105, 110, 97, 108]; // fixstr "ordinal"

/** Bytes of one point besides its value: 8 + 8 (time) + 6 + 8 + 5 (uint32 quality). */
const POINT_FRAME = 35;

function putConst(b: Uint8Array, p: number, c: number[]): number {
  for (let i = 0; i < c.length; i++) b[p + i] = c[i];
  return p + c.length;
}

/** A non-negative integer below 2^32 in its smallest msgpack form. */
function putUint(b: Uint8Array, dv: DataView, p: number, n: number): number {
  if (n < 128) { b[p] = n; return p + 1; }
  if (n < 256) { b[p] = 0xcc; b[p + 1] = n; return p + 2; }
  if (n < 65536) { b[p] = 0xcd; dv.setUint16(p + 1, n); return p + 3; }
  b[p] = 0xce; dv.setUint32(p + 1, n); return p + 5;
}

/** A signed int32 in its smallest msgpack form. */
function putInt(b: Uint8Array, dv: DataView, p: number, n: number): number {
  if (n >= 0) return putUint(b, dv, p, n);
  if (n >= -32) { b[p] = n & 0xff; return p + 1; }
  b[p] = 0xd2; dv.setInt32(p + 1, n); return p + 5;
}

/**
 * Appends points i0..i1-1 of cols (the caller wrote the array header). `enumSetId` is the
 * enum set id (enum series only; its msgpack string is encoded once per run); `members`,
 * when given, writes each enum point's whole value with its "member" name from bytes
 * encoded once per ordinal.
 */
export function writeMsgpackPoints(sink: BodySink, cols: PointColumns, i0: number, i1: number, enumSetId: string, members: EnumMemberText | null = null): void {
  if (i1 <= i0) return;
  if (cols.type === 'string') { writeStringPoints(sink, cols, i0, i1); return; }
  let enumBytes: Uint8Array | null = null;
  if (cols.type === 'enum') {
    const start = sink.pos;
    mpString(sink, enumSetId); // encoded once here, copied per point below
    enumBytes = sink.buf.slice(start, sink.pos);
    sink.pos = start;
  }
  const valueMax = enumBytes ? (members === null ? 1 + ENUM_SET.length + enumBytes.length + ORDINAL.length + 5 : members.maxBytes) : 9;
  sink.reserve((i1 - i0) * (POINT_FRAME + valueMax));
  const b = sink.buf, dv = sink.view;
  let p = sink.pos;
  const words = splitWords(cols.tsBase);
  const hiBase = words[0], loBase = words[1];
  const offs = cols.tsOffset, quality = cols.quality;
  // offsets past what the writer makes (< 2^50) would round in loBase + offset: BigInt then
  const exact = loBase + offs[i1 - 1] < 2 ** 53;
  const type = cols.type;
  const f64 = cols.f64, u8 = cols.u8, ord = cols.ord, i64 = cols.i64;
  // little-endian host: word 2k + 1 of the element k is its high half
  const i64Words = i64 ? new Int32Array(i64.buffer, i64.byteOffset, i64.length * 2) : null;
  for (let i = i0; i < i1; i++) {
    // Constant bytes as 32-bit little-endian stores of their bytes and big-endian numbers by
    // DataView: identical bytes, and 1.3-1.7x the points per CPU-s of one store per byte
    // (bench:json writers, A/B alternated, 2026-11-21; loops over fragments were slower still).
    // fixmap(3) fixstr "ts_ns" 0xd3: two little-endian words of those bytes
    dv.setUint32(p, 0x7374a583, true); dv.setUint32(p + 4, 0xd3736e5f, true);
    if (exact) {
      let lo = loBase + offs[i]; // < 2^53: exact
      let hi = hiBase;
      if (lo >= TWO32 || lo < 0) { const carry = Math.floor(lo / TWO32); hi += carry; lo -= carry * TWO32; }
      dv.setInt32(p + 8, hi); dv.setUint32(p + 12, lo); // big-endian
    } else dv.setBigInt64(p + 8, BigInt.asIntN(64, cols.tsBase + BigInt(offs[i])));
    dv.setUint32(p + 16, 0x6c6176a5, true); b[p + 20] = 117; b[p + 21] = 101; // fixstr "value"
    p += 22;
    switch (type) {
      case 'float64':
        b[p] = 0xcb;
        dv.setFloat64(p + 1, f64![i]); // big-endian
        p += 9;
        break;
      case 'int64': {
        b[p] = 0xd3;
        dv.setInt32(p + 1, i64Words![2 * i + 1]); dv.setInt32(p + 5, i64Words![2 * i]); // big-endian: high word first
        p += 9;
        break;
      }
      case 'boolean': b[p++] = u8![i] === 1 ? 0xc3 : 0xc2; break;
      case 'enum':
        if (members !== null) { const m = members.valueOf(ord![i]); b.set(m, p); p += m.length; break; } // one copy: 60-100 bytes, faster than a byte loop (bench:json)
        b[p++] = 0x82;
        p = putConst(b, p, ENUM_SET);
        b.set(enumBytes!, p); p += enumBytes!.length;
        p = putConst(b, p, ORDINAL);
        p = putInt(b, dv, p, ord![i]);
        break;
    }
    dv.setUint32(p, 0x617571a7, true); dv.setUint32(p + 4, 0x7974696c, true); // fixstr "quality"
    p += 8;
    const q = quality[i];
    if (q < 128) b[p++] = q;
    else if (q < 256) { b[p] = 0xcc; b[p + 1] = q; p += 2; }
    else p = putUint(b, dv, p, q);
  }
  sink.pos = p;
}

/** String series: room is reserved point by point from each string's length. */
function writeStringPoints(sink: BodySink, cols: PointColumns, i0: number, i1: number): void {
  const words = splitWords(cols.tsBase);
  for (let i = i0; i < i1; i++) {
    sink.reserve(POINT_FRAME + 9);
    let p = putConst(sink.buf, sink.pos, TS);
    const lo = words[1] + cols.tsOffset[i];
    if (lo < 2 ** 53) {
      const carry = Math.floor(lo / TWO32);
      sink.view.setInt32(p, words[0] + carry);
      sink.view.setUint32(p + 4, lo - carry * TWO32);
    } else sink.view.setBigInt64(p, BigInt.asIntN(64, cols.tsBase + BigInt(cols.tsOffset[i]))); // past what the writer makes: exact through BigInt
    sink.pos = putConst(sink.buf, p + 8, VALUE);
    mpString(sink, cols.str![i]);
    sink.reserve(13);
    p = putConst(sink.buf, sink.pos, QUALITY);
    sink.pos = putUint(sink.buf, sink.view, p, cols.quality[i]);
  }
}
