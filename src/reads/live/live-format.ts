// JSON of live-update points, written as bytes straight into a BodySink: a commit group of
// a busy series carries thousands of points, and text built as a string per point (then
// joined, framed, and encoded to UTF-8 again by the socket write) cost the HTTP thread more
// than the socket writes themselves, most of it in GC. Output matches the lossless JSON
// writer (src/json/): int64 values and ns times as bare digits, strings JSON-escaped, and
// every double as String(v) prints it (its shortest round-trip decimal).
//
// A subscription's filters apply here: points below its quality floor are left out and
// numeric values pass through its unit conversion (exact ratios, rounded once, as the
// resolved reads do: src/workers/resolved-points.ts).
import type { ValueType } from '../../storage/encoding/chunk-types.js';
import type { ValueConverter } from '../../workers/resolved-points.js';
import { BodySink } from '../../body-sink.js';
import { putDoubleFast, putNine, putUint31, putUint53, QUADS32 } from '../../json/fast-digits.js';
import type { LiveColumns } from './commit-source.js';

/** What a subscription asks of its points. */
export interface PointFilter {
  /** Lowest quality kept (0: all; 64: not bad; 192: good only). */
  minQuality: number;
  convert: ValueConverter | null;
}

export const NO_FILTER: PointFilter = { minQuality: 0, convert: null };

/**
 * A finite double's text at p as String(v) prints it; returns the new position, or -1 when
 * the caller must print String(v). The fast form (putDoubleFast: integers, and at most six
 * decimals whose scaled integer divides back to exactly v) is the shortest one below 1e9,
 * where doubles lie closer than 1e-6 apart so no shorter decimal rounds to the same one;
 * from 1e9 on a shorter decimal may, and -0 prints as 0 here (String(-0)), not as the
 * lossless writer's -0. fast-check compares it with String(v) (test/reads/live-format.test.ts).
 */
export function putLiveDouble(b: Uint8Array, p: number, v: number): number {
  if (v === 0) { b[p] = 48; return p + 1; }
  if (v < 1e9 && v > -1e9) return putDoubleFast(b, p, v);
  if (Number.isInteger(v) && v <= 9007199254740992 && v >= -9007199254740992) return putDoubleFast(b, p, v);
  return -1;
}

/** Room one point takes besides its value: `{"ts_ns":` 9, time 20, `,"value":` 9, `,"quality":` 11, quality 10, `}` 1, comma 1. */
const POINT_FRAME = 64;
/** Room of a number's or a boolean's text (-2.2250738585072014e-308, -9223372036854775808, false). */
const NUMBER_ROOM = 26;

/** Digits of the seconds part of the times being written, kept while the second does not change. */
const secDigits = new Uint8Array(24);

/**
 * Writes `[{"ts_ns":…,"value":…,"quality":…}, …]` of the columns' points that pass the
 * filter into `sink` at its position, leaving out index `skip` (-1: none); returns how
 * many points it wrote.
 *
 * Times: the column's first time is split once into seconds and nanoseconds; each point's
 * time is then that plus its distance from the first (one BigInt subtraction, an exact
 * double up to 2^52), printed as the cached seconds digits and nine nanosecond digits.
 * Times before 1970 or farther than 2^52 ns (52 days) from the first print through BigInt.
 */
export function writePoints(sink: BodySink, cols: LiveColumns, type: ValueType | null, enumSet: string | null, filter: PointFilter = NO_FILTER, skip = -1): number {
  const { times, values, quality } = cols;
  const { minQuality, convert } = filter;
  const n = times.length;
  // a float64 column's values need no call per point
  const f64 = type === 'float64' && values instanceof Float64Array ? values : null;
  const enumHead = type === 'enum' ? Buffer.from(`{"enum_set":${JSON.stringify(enumSet)},"ordinal":`, 'utf8') : null;
  sink.reserve(2);
  sink.buf[sink.pos++] = 91; // [
  if (n === 0) { sink.buf[sink.pos++] = 93; return 0; }
  const base = times[0];
  const split = base >= 0n;
  const sec0 = split ? Number(base / 1_000_000_000n) : 0, ns0 = split ? Number(base % 1_000_000_000n) : 0;
  // the seconds' digits of the time being written, kept while the second does not change;
  // today's ten as two words and a half word (little-endian ASCII)
  let cachedSec = -1, secLength = 0, s03 = 0, s47 = 0, s89 = 0;
  let b = sink.buf, dv = sink.view, p = sink.pos;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const q = quality[i];
    if (q < minQuality || i === skip) continue;
    const room = POINT_FRAME + (f64 !== null ? NUMBER_ROOM : valueRoom(values[i], type, enumHead));
    if (p + room > b.length) { sink.pos = p; sink.reserve(room); b = sink.buf; dv = sink.view; p = sink.pos; }
    if (count > 0) b[p++] = 44;
    count++;
    // {"ts_ns": as little-endian words of its ASCII (as raw-points-json.ts)
    dv.setUint32(p, 0x7374227b, true); dv.setUint32(p + 4, 0x22736e5f, true); b[p + 8] = 58;
    p += 9;
    const d = split ? Number(times[i] - base) : NaN;
    if (d <= 4503599627370496 && d >= -4503599627370496) {
      let ns = ns0 + d, s = sec0;
      if (ns >= 1e9 || ns < 0) { const c = Math.floor(ns / 1e9); s += c; ns -= c * 1e9; }
      if (s > 0) {
        if (s !== cachedSec) {
          cachedSec = s;
          secLength = putUint53(secDigits, 0, s);
          s03 = secDigits[0] | (secDigits[1] << 8) | (secDigits[2] << 16) | (secDigits[3] << 24);
          s47 = secDigits[4] | (secDigits[5] << 8) | (secDigits[6] << 16) | (secDigits[7] << 24);
          s89 = secDigits[8] | (secDigits[9] << 8);
        }
        if (secLength === 10) {
          dv.setInt32(p, s03, true); dv.setInt32(p + 4, s47, true); dv.setUint16(p + 8, s89, true);
          p += 10;
        } else {
          for (let k = 0; k < secLength; k++) b[p + k] = secDigits[k];
          p += secLength;
        }
        const ms = (ns / 1e6) | 0;
        if (ns === ms * 1e6) {
          // whole milliseconds (most collectors): three digits, then six zeros
          dv.setUint32(p, (QUADS32[ms] >>> 8) | 0x30000000, true); dv.setUint32(p + 4, 0x30303030, true); b[p + 8] = 48;
          p += 9;
        } else p = putNine(b, p, ns);
      } else if (s === 0) p = putUint31(b, p, ns);
      else p = putAscii(b, p, times[i].toString());
    } else p = putAscii(b, p, times[i].toString());
    // ,"value":
    dv.setUint32(p, 0x6176222c, true); dv.setUint32(p + 4, 0x2265756c, true); b[p + 8] = 58;
    p += 9;
    if (f64 !== null) p = putNumber(b, p, convert === null ? f64[i] : convert.apply(f64[i]));
    else {
      p = putValue(sink, b, p, values, i, type, enumHead, convert);
      // a string's JSON may have grown the sink: room for the rest of the point
      if (p + 32 > sink.buf.length) { sink.pos = p; sink.reserve(32); }
      b = sink.buf; dv = sink.view;
    }
    // ,"quality":
    dv.setUint32(p, 0x7571222c, true); dv.setUint32(p + 4, 0x74696c61, true); b[p + 8] = 121; b[p + 9] = 34; b[p + 10] = 58;
    if (q === 192) { dv.setUint32(p + 11, 0x7d323931, true); p += 15; } // `192}`: good (OPC DA), most points
    else { p = q < 2147483648 ? putUint31(b, p + 11, q) : putUint53(b, p + 11, q); b[p++] = 125; }
  }
  b[p++] = 93; // ] (in the last point's room, or the two reserved first)
  sink.pos = p;
  return count;
}

/** A finite double as String(v) prints it, else null (JSON has no NaN or infinity). */
function putNumber(b: Uint8Array, p: number, x: number): number {
  if (!Number.isFinite(x)) { b[p] = 110; b[p + 1] = 117; b[p + 2] = 108; b[p + 3] = 108; return p + 4; }
  const e = putLiveDouble(b, p, x);
  return e >= 0 ? e : putAscii(b, p, String(x));
}

/** Room for one value's text other than a float64 column's (a string's escapes take up to 6 bytes a UTF-16 unit). */
function valueRoom(v: unknown, type: ValueType | null, enumHead: Uint8Array | null): number {
  if (type === 'string') return String(v).length * 6 + 2;
  if (enumHead !== null) return enumHead.length + NUMBER_ROOM;
  if (type !== null || typeof v === 'number' || typeof v === 'bigint') return NUMBER_ROOM;
  return String(JSON.stringify(v)).length * 3;
}

/** One point's value other than a float64 column's, by the series' value type, at p (room reserved); returns the new position. */
function putValue(sink: BodySink, b: Uint8Array, p: number, values: LiveColumns['values'], i: number, type: ValueType | null, enumHead: Uint8Array | null, conv: ValueConverter | null): number {
  const v = values[i];
  switch (type) {
    case 'float64': return putNumber(b, p, conv === null ? (v as number) : conv.apply(v as number));
    case 'int64':
      if (conv !== null) return putNumber(b, p, conv.apply(Number(v)));
      return putAscii(b, p, typeof v === 'bigint' ? v.toString() : String(v));
    case 'boolean':
      if (v) { b[p] = 116; b[p + 1] = 114; b[p + 2] = 117; b[p + 3] = 101; return p + 4; }
      b[p] = 102; b[p + 1] = 97; b[p + 2] = 108; b[p + 3] = 115; b[p + 4] = 101; return p + 5;
    case 'enum': {
      b.set(enumHead as Uint8Array, p);
      const e = putAscii(b, p + (enumHead as Uint8Array).length, String(v));
      b[e] = 125; // }
      return e + 1;
    }
    case 'string':
      sink.pos = p;
      sink.jsonString(String(v));
      return sink.pos;
    default:
      // no value type known: as the generic JSON writer would print the value
      if (typeof v === 'number') return putNumber(b, p, v);
      if (typeof v === 'bigint') return putAscii(b, p, v.toString());
      sink.pos = p;
      sink.utf8(String(JSON.stringify(v)));
      return sink.pos;
  }
}

/** An ASCII string (digits, String(double)) at p, room reserved; returns the new position. */
function putAscii(b: Uint8Array, p: number, s: string): number {
  for (let k = 0; k < s.length; k++) b[p + k] = s.charCodeAt(k);
  return p + s.length;
}

const scratch = new BodySink(1 << 12);

/** writePoints as a string (initial values, the dedupe of a first group): the same bytes, decoded. */
export function pointsText(cols: LiveColumns, type: ValueType | null, enumSet: string | null, filter: PointFilter = NO_FILTER, skip = -1): { text: string; count: number } {
  scratch.reset();
  const count = writePoints(scratch, cols, type, enumSet, filter, skip);
  const text = Buffer.from(scratch.buf.buffer, scratch.buf.byteOffset, scratch.pos).toString('utf8');
  if (scratch.buf.byteLength > 1 << 20) scratch.attach(new Uint8Array(1 << 12)); // a big column once: do not keep its room
  return { text, count };
}
