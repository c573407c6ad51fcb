// The `points` array of a raw read as JSON, written from decoded chunk columns straight
// into a BodySink: `{"ts_ns":T,"value":V,"quality":Q}` per point. This is the hot loop of
// GET /raw (bench/storage.ts): one reserve per run of points, then plain stores through a
// local buffer and position, so nothing is called per constant fragment and nothing is
// allocated per point (strings excepted: they are strings already).
//
// Times: the chunk's base is split once into seconds and nanoseconds (two exact doubles);
// per point only the nine nanosecond digits are computed, in int32 arithmetic with a
// two-digit table, while the seconds digits are cached and re-used as long as the
// second does not change (plant data: about ten points per second at most). Values go
// through the same exact rules as digits.ts (src/json) (fixed decimals as scaled integers, else
// V8's shortest form), with the digit loops inlined.
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import type { BodySink } from '../body-sink.js';
import { splitBase, writeDouble, writeInt64At, writeTime } from '../json/digits.js';
import { putConst, putDoubleFast, putNine, putUint31, putUint53, QUADS32 } from '../json/fast-digits.js';
import type { EnumMemberText } from './enum-member-text.js';

const TS = [123, 34, 116, 115, 95, 110, 115, 34, 58]; // {"ts_ns":
const VALUE = [44, 34, 118, 97, 108, 117, 101, 34, 58]; // ,"value":
const QUALITY = [44, 34, 113, 117, 97, 108, 105, 116, 121, 34, 58]; // ,"quality":
const ENUM_SET = [123, 34, 101, 110, 117, 109, 95, 115, 101, 116, 34, 58]; // {"enum_set":
const ORDINAL = [44, 34, 111, 114, 100, 105, 110, 97, 108, 34, 58]; // ,"ordinal":

/**
 * Bytes one point may take besides its value text and any enum set id: `{"ts_ns":` 9,
 * time 20, `,"value":` 9, `,"quality":` 11, quality 10, `}` 1, comma 1 = 61.
 */
const POINT_FRAME = 64;
/** Longest text of a finite double (V8 shortest form, e.g. -2.2250738585072014e-308) plus margin. */
const DOUBLE_MAX = 26;
/** Longest int64 in decimal (-9223372036854775808). */
const INT64_MAX_DIGITS = 20;

/** Digits of seconds / 10^4, rewritten when the low four digits wrap (every 2.8 hours of data). */
const highDigits = new Uint8Array(24);

/**
 * Appends points i0..i1-1 of cols as JSON objects separated by commas; `first` says
 * whether no point precedes them in the array. `enumJson` is the enum set id as a JSON
 * string (used for enum series only); `members`, when given, writes each enum point's
 * whole value with its `"member"` name from bytes encoded once per ordinal.
 */
export function writeJsonPoints(sink: BodySink, cols: PointColumns, i0: number, i1: number, first: boolean, enumJson: string, members: EnumMemberText | null = null): void {
  if (i1 <= i0) return;
  const split = splitBase(cols.tsBase);
  if (split === null || split[1] + cols.tsOffset[i1 - 1] >= 2 ** 53) {
    // a base before 1970, or offsets past what the writer makes (< 2^50) that would round
    // in the carried sum below: the general writers (BigInt per point), rare
    writeGeneralPoints(sink, cols, i0, i1, first, enumJson, null, members);
    return;
  }
  // The time of point i is s seconds + ns nanoseconds, carried forward from point i - 1
  // (offsets ascend): usually one compare and one subtraction instead of divisions. The
  // seconds print as highDigits (cached) then `low` as four digits from QUADS.
  const offs = cols.tsOffset, quality = cols.quality;
  let prevOff = offs[i0];
  let ns = split[1] + prevOff; // exact: < 2^53 (checked above)
  let s = split[0];
  if (ns >= 1e9 || ns < 0) { const c = Math.floor(ns / 1e9); s += c; ns -= c * 1e9; }
  if (s < 10000) {
    // before 1970-01-01T02:46:40 (no four full low digits): the general writers, rare
    writeGeneralPoints(sink, cols, i0, i1, first, enumJson, splitFor(cols, i0), members);
    return;
  }
  // strings reserve their own room point by point (below)
  const valueMax = cols.type === 'enum' ? (members === null ? 12 + enumJson.length + 11 + 11 + 1 : members.maxBytes) : cols.type === 'int64' ? INT64_MAX_DIGITS : cols.type === 'string' ? 0 : DOUBLE_MAX;
  sink.reserve((i1 - i0) * (POINT_FRAME + valueMax));
  let b = sink.buf; // re-read after any sink call (none grows it: room was reserved above)
  let dv = sink.view;
  let p = sink.pos;
  let high = Math.floor(s / 10000), low = s - high * 10000;
  let highLength = putUint53(highDigits, 0, high);
  // the six high digits of today's times (seconds 1e9..1e10) as locals: no loop per point
  // (packed little-endian: digits 0-3 as a word, 4-5 as a half word)
  let h03 = highDigits[0] | (highDigits[1] << 8) | (highDigits[2] << 16) | (highDigits[3] << 24), h45 = highDigits[4] | (highDigits[5] << 8);
  const type = cols.type;
  const f64 = cols.f64, u8 = cols.u8, ord = cols.ord, i64 = cols.i64, str = cols.str;
  const words = i64 ? new Int32Array(i64.buffer, i64.byteOffset, i64.length * 2) : null;
  for (let i = i0; i < i1; i++) {
    if (!first || i > i0) b[p++] = 44;
    // {"ts_ns": as constant stores, four bytes at a time (little-endian words of the ASCII):
    // faster than a loop over a fragment or TypedArray.set, and ~10 % faster over the whole
    // writer than nine byte stores (bench:json, A/B alternated, 2026-11-21)
    dv.setUint32(p, 0x7374227b, true); dv.setUint32(p + 4, 0x22736e5f, true); b[p + 8] = 58;
    p += 9;
    const off = offs[i];
    ns += off - prevOff;
    prevOff = off;
    if (ns >= 1e9) {
      if (ns < 2e9) { ns -= 1e9; s += 1; low += 1; } else { const c = Math.floor(ns / 1e9); ns -= c * 1e9; s += c; low += c; }
      if (low >= 10000) {
        high = Math.floor(s / 10000); low = s - high * 10000; highLength = putUint53(highDigits, 0, high);
        h03 = highDigits[0] | (highDigits[1] << 8) | (highDigits[2] << 16) | (highDigits[3] << 24); h45 = highDigits[4] | (highDigits[5] << 8);
      }
    }
    if (highLength === 6) {
      dv.setInt32(p, h03, true); dv.setUint16(p + 4, h45, true);
      p += 6;
    } else {
      for (let k = 0; k < highLength; k++) b[p + k] = highDigits[k];
      p += highLength;
    }
    dv.setUint32(p, QUADS32[low], true);
    p += 4;
    {
      const n = ns | 0;
      const ms = (n / 1000000) | 0;
      if (n === ms * 1000000) {
        // whole milliseconds (most collectors): three digits and six zeros
        // (the last three digits of the quad, then a '0', as one word)
        dv.setUint32(p, (QUADS32[ms] >>> 8) | 0x30000000, true); dv.setUint32(p + 4, 0x30303030, true); b[p + 8] = 48;
        p += 9;
      } else p = putNine(b, p, n);
    }
    // ,"value":
    dv.setUint32(p, 0x6176222c, true); dv.setUint32(p + 4, 0x2265756c, true); b[p + 8] = 58;
    p += 9;
    switch (type) {
      case 'float64': {
        const v = f64![i];
        const q = putDoubleFast(b, p, v);
        if (q >= 0) p = q;
        else { sink.pos = p; sink.ascii(String(v)); b = sink.buf; dv = sink.view; p = sink.pos; }
        break;
      }
      case 'int64': {
        // below 2^53 in magnitude the two 32-bit halves give the value as an exact double
        const hi = words![2 * i + 1];
        if (hi >= -0x200000 && hi < 0x200000) {
          const n = hi * 4294967296 + (words![2 * i] >>> 0);
          if (n < 0) { b[p++] = 45; p = putUint53(b, p, -n); } else p = putUint53(b, p, n);
        } else { sink.pos = p; sink.ascii(i64![i].toString()); b = sink.buf; dv = sink.view; p = sink.pos; }
        break;
      }
      case 'boolean':
        if (u8![i] === 1) { b[p] = 116; b[p + 1] = 114; b[p + 2] = 117; b[p + 3] = 101; p += 4; }
        else { b[p] = 102; b[p + 1] = 97; b[p + 2] = 108; b[p + 3] = 115; b[p + 4] = 101; p += 5; }
        break;
      case 'enum':
        if (members !== null) { const m = members.valueOf(ord![i]); b.set(m, p); p += m.length; break; } // one copy: 60-100 bytes, faster than a byte loop (bench:json)
        p = putConst(b, p, ENUM_SET);
        for (let k = 0; k < enumJson.length; k++) b[p + k] = enumJson.charCodeAt(k);
        p = putConst(b, p + enumJson.length, ORDINAL);
        { const o = ord![i]; if (o < 0) { b[p++] = 45; p = putUint53(b, p, -o); } else p = putUint31(b, p, o); } // -(-2^31) is past int32
        b[p++] = 125;
        break;
      case 'string': {
        // JSON text of a string takes at most 6 bytes a UTF-16 unit (\uXXXX) plus quotes; the
        // rest of the run's room is kept reserved after it
        const v = str![i];
        sink.pos = p;
        sink.reserve(v.length * 6 + 2 + (i1 - i) * POINT_FRAME);
        sink.jsonString(v);
        b = sink.buf; dv = sink.view; p = sink.pos;
        break;
      }
    }
    // ,"quality":
    dv.setUint32(p, 0x7571222c, true); dv.setUint32(p + 4, 0x74696c61, true); b[p + 8] = 121; b[p + 9] = 34; b[p + 10] = 58;
    const q = quality[i];
    if (q === 192) { dv.setUint32(p + 11, 0x7d323931, true); p += 15; } // `192}`: good (OPC DA), most points
    else { p = q < 1000 ? putUint31(b, p + 11, q) : putUint53(b, p + 11, q); b[p++] = 125; }
  }
  sink.pos = p;
}

/**
 * splitBase of the run's base for digits.ts' writeTime, or null (BigInt per point)
 * when a point before the base could fall before 1970 (negative offsets, times near 0).
 */
function splitFor(cols: PointColumns, i0: number): [number, number] | null {
  const split = splitBase(cols.tsBase);
  return split !== null && split[0] * 1e9 + split[1] + cols.tsOffset[i0] >= 0 ? split : null;
}

/** Any type through the digits.ts writers (times before 1970 or past 2^52 s). */
function writeGeneralPoints(sink: BodySink, cols: PointColumns, i0: number, i1: number, first: boolean, enumJson: string, split: [number, number] | null, members: EnumMemberText | null): void {
  const words = cols.i64 ? new Int32Array(cols.i64.buffer, cols.i64.byteOffset, cols.i64.length * 2) : null;
  for (let i = i0; i < i1; i++) {
    sink.reserve(POINT_FRAME + 64 + enumJson.length + (members === null ? 0 : members.maxBytes));
    if (!first || i > i0) sink.buf[sink.pos++] = 44;
    sink.pos = putConst(sink.buf, sink.pos, TS);
    writeTime(sink, split, cols.tsBase, cols.tsOffset[i]);
    sink.pos = putConst(sink.buf, sink.pos, VALUE);
    switch (cols.type) {
      case 'float64': writeDouble(sink, cols.f64![i]); break;
      case 'int64': writeInt64At(sink, words!, i, cols.i64!); break;
      case 'boolean': sink.ascii(cols.u8![i] === 1 ? 'true' : 'false'); break;
      case 'enum':
        if (members !== null) sink.bytes(members.valueOf(cols.ord![i]));
        else sink.ascii(`{"enum_set":${enumJson},"ordinal":${cols.ord![i]}}`);
        break;
      case 'string': sink.jsonString(cols.str![i]); break;
    }
    sink.reserve(24);
    sink.pos = putConst(sink.buf, sink.pos, QUALITY);
    sink.pos = putUint53(sink.buf, sink.pos, cols.quality[i]);
    sink.buf[sink.pos++] = 125;
  }
}
