// The columnar layout of GET /raw in JSON (`layout=columns`, Accept: application/json):
//
//   "points": {"ts_ns": [T, ...], "value": [V, ...], "quality": [Q, ...]}
//
// Times are JSON integers written digit-exact (as everywhere in our JSON: parse them with a
// lossless int64 path), values as in the rows layout except enums, which are bare ordinals
// (the page's enum_set names their set once). Without the per-point member names a plant
// point takes ~31 bytes instead of ~64, which is what a JSON client pays to read it.
//
// The three arrays follow each other in the body but the scan yields points run by run.
// The times, first, go straight into the body; values and qualities go to per-worker text
// buffers as the runs arrive and are copied in after the times (a memcpy of ~10 bytes a
// point instead of ~30). `count` precedes the arrays, as in msgpack, so a client can size
// them from the head: a field of COUNT_WIDTH bytes is kept for it before the scan, and
// once the count is known its digits go there and the text after them moves back over the
// bytes left over, so the body is plain JSON (`"count":3`, not `"count":       3`). The
// move is one memmove of the page (copyWithin: ~3 ms for 28 MB, a full 1M-point page,
// against ~70 ms to write it; bench:json, 2026-11-27). A caller that bounds the count from
// the chunk headers keeps only the bound's digits, and a count as long as its bound (most
// pages) moves nothing: on a fleet read every page moved, 95 MB per hour of 950 attributes.
// The time digits are the same carried-seconds scheme as the rows writer
// (raw-points-json.ts), kept inline there: the shared object tried first cost that writer
// ~30 % (bench:json, A/B, 2026-11-21).
import type { PointColumns } from '../storage/encoding/chunk-types.js';
import { BodySink } from '../body-sink.js';
import { splitBase, writeInt64At, writeTime } from '../json/digits.js';
import { putDoubleFast, putNine, putUint31, putUint53, QUADS32 } from '../json/fast-digits.js';

/**
 * Column text kept between requests (bytes per column): a 1M-point page (the route's
 * largest limit) fits, as its typed columns do in raw-points-columns.ts; larger buffers are dropped.
 */
const RETAIN_BYTES = 32 * 2 ** 20;
const INITIAL_BYTES = 1 << 16;
/** A time's text and its comma. */
const TIME_MAX = 21;
/** Longest value text and its comma: a double in V8's shortest form, an int64, an ordinal. */
const VALUE_MAX = 28;
/** A quality (uint32) and its comma. */
const QUALITY_MAX = 11;

/** Characters kept for the page's count: MAX_RAW_LIMIT has 8 digits. */
export const COUNT_WIDTH = 8;
const OPEN_VALUE = Buffer.from('],"value":[', 'latin1');
const OPEN_QUALITY = Buffer.from('],"quality":[', 'latin1');
const CLOSE = Buffer.from(']}', 'latin1');

/**
 * Keeps `width` bytes (at most COUNT_WIDTH) at the sink's position for putCount; returns
 * where they are. A caller that knows a bound on the count keeps the bound's digits: a
 * count with as many digits (the common case) then fills the field and nothing moves.
 */
export function reserveCount(sink: BodySink, width = COUNT_WIDTH): number {
  if (width > COUNT_WIDTH) width = COUNT_WIDTH;
  sink.reserve(width);
  const at = sink.pos;
  sink.buf.fill(32, at, at + width);
  sink.pos += width;
  return at;
}

/** Digits of a count (n >= 0) in decimal. */
export const countDigits = (n: number): number => String(n).length;

/**
 * Writes n at `at`, where reserveCount kept its field of `width` bytes, and, when n has
 * fewer digits, moves what the sink holds after the field back to follow them: everything
 * written since keeps its text, `width - digits` bytes earlier.
 */
export function putCount(sink: BodySink, at: number, n: number, width = COUNT_WIDTH): void {
  if (width > COUNT_WIDTH) width = COUNT_WIDTH;
  const digits = String(n);
  if (digits.length > width) throw new Error(`BUG: a page of ${n} points overflows its count field of ${width}`);
  const b = sink.buf;
  for (let i = 0; i < digits.length; i++) b[at + i] = digits.charCodeAt(i);
  if (digits.length === width) return;
  const end = at + digits.length;
  b.copyWithin(end, at + width, sink.pos);
  sink.pos -= width - digits.length;
}

/** Gathers a page's points as three JSON arrays, run by run: times into the body, the rest aside. */
export class JsonColumnPage {
  count = 0;
  /** The body: set by begin, after `{"ts_ns":[` was written to it. */
  private ts: BodySink | null = null;
  private value = new BodySink(INITIAL_BYTES);
  private quality = new BodySink(INITIAL_BYTES);
  /** Digits of seconds / 10^4 of the run being written. */
  private readonly high = new Uint8Array(24);

  /** Starts a page whose times go to `body` (positioned inside the `ts_ns` array). */
  begin(body: BodySink): void {
    this.count = 0;
    this.ts = body;
    this.value.reset();
    this.quality.reset();
  }

  /** After the body is written (or the read failed): drops buffers beyond what is kept between requests. */
  end(): void {
    this.count = 0;
    this.ts = null;
    if (this.value.buf.byteLength > RETAIN_BYTES) this.value = new BodySink(INITIAL_BYTES);
    if (this.quality.buf.byteLength > RETAIN_BYTES) this.quality = new BodySink(INITIAL_BYTES);
  }

  /** Appends points i0..i1-1 of decoded chunk columns (of the page's type). */
  append(cols: PointColumns, i0: number, i1: number): void {
    if (i1 <= i0) return;
    const first = this.count === 0;
    this.writeTimes(cols, i0, i1, first);
    writeValues(this.value, cols, i0, i1, first);
    writeQualities(this.quality, cols.quality, i0, i1, first);
    this.count += i1 - i0;
  }

  /** Closes the times and writes the value and quality arrays and the points object's end: `],"value":[...],"quality":[...]}`. */
  finish(): void {
    const sink = this.ts!;
    sink.bytes(OPEN_VALUE);
    sink.bytes(this.value.buf.subarray(0, this.value.pos));
    sink.bytes(OPEN_QUALITY);
    sink.bytes(this.quality.buf.subarray(0, this.quality.pos));
    sink.bytes(CLOSE);
  }

  /**
   * Times of a run: seconds carried forward from the previous point (offsets ascend), their
   * digits above the low four cached until those wrap; nanoseconds as nine digits.
   */
  private writeTimes(cols: PointColumns, i0: number, i1: number, first: boolean): void {
    const sink = this.ts!;
    const offs = cols.tsOffset;
    // offsets past what the writer makes (< 2^50) would round in the carried sum: the general path
    const base = splitBase(cols.tsBase);
    const split = base !== null && base[1] + offs[i1 - 1] < 2 ** 53 ? base : null;
    let prevOff = offs[i0];
    let ns = split === null ? 0 : split[1] + prevOff; // exact: < 2^53 (checked above)
    let s = split === null ? 0 : split[0];
    if (ns >= 1e9 || ns < 0) { const c = Math.floor(ns / 1e9); s += c; ns -= c * 1e9; }
    if (split === null || s < 10000) {
      // before 1970-01-01T02:46:40: the general writer (BigInt per point), rare
      const safe = split !== null && split[0] * 1e9 + split[1] + offs[i0] >= 0 ? split : null;
      for (let i = i0; i < i1; i++) {
        sink.reserve(TIME_MAX);
        if (!first || i > i0) sink.buf[sink.pos++] = 44;
        writeTime(sink, safe, cols.tsBase, offs[i]);
      }
      return;
    }
    sink.reserve((i1 - i0) * TIME_MAX);
    const b = sink.buf, dv = sink.view, digits = this.high;
    let p = sink.pos;
    let high = Math.floor(s / 10000), low = s - high * 10000;
    let highLength = putUint53(digits, 0, high);
    // the six high digits of today's times as two words (see raw-points-json.ts)
    let h03 = digits[0] | (digits[1] << 8) | (digits[2] << 16) | (digits[3] << 24), h45 = digits[4] | (digits[5] << 8);
    for (let i = i0; i < i1; i++) {
      if (!first || i > i0) b[p++] = 44;
      const off = offs[i];
      ns += off - prevOff;
      prevOff = off;
      if (ns >= 1e9) {
        if (ns < 2e9) { ns -= 1e9; s += 1; low += 1; } else { const c = Math.floor(ns / 1e9); ns -= c * 1e9; s += c; low += c; }
        if (low >= 10000) {
          high = Math.floor(s / 10000); low = s - high * 10000; highLength = putUint53(digits, 0, high);
          h03 = digits[0] | (digits[1] << 8) | (digits[2] << 16) | (digits[3] << 24); h45 = digits[4] | (digits[5] << 8);
        }
      }
      if (highLength === 6) {
        dv.setInt32(p, h03, true); dv.setUint16(p + 4, h45, true);
        p += 6;
      } else {
        for (let k = 0; k < highLength; k++) b[p + k] = digits[k];
        p += highLength;
      }
      dv.setUint32(p, QUADS32[low], true);
      p += 4;
      const n = ns | 0;
      const ms = (n / 1000000) | 0;
      if (n === ms * 1000000) {
        // whole milliseconds: three digits and six zeros (see raw-points-json.ts)
        dv.setUint32(p, (QUADS32[ms] >>> 8) | 0x30000000, true); dv.setUint32(p + 4, 0x30303030, true); b[p + 8] = 48;
        p += 9;
      } else p = putNine(b, p, n);
    }
    sink.pos = p;
  }
}

/** Values of a run in the JSON of their type; enums as bare ordinals. */
function writeValues(sink: BodySink, cols: PointColumns, i0: number, i1: number, first: boolean): void {
  if (cols.type === 'string') {
    const str = cols.str!;
    for (let i = i0; i < i1; i++) {
      sink.reserve(1);
      if (!first || i > i0) sink.buf[sink.pos++] = 44;
      sink.jsonString(str[i]);
    }
    return;
  }
  sink.reserve((i1 - i0) * VALUE_MAX);
  let b = sink.buf, p = sink.pos;
  switch (cols.type) {
    case 'float64': {
      const f64 = cols.f64!;
      for (let i = i0; i < i1; i++) {
        if (!first || i > i0) b[p++] = 44;
        const v = f64[i];
        const q = putDoubleFast(b, p, v);
        if (q >= 0) p = q;
        else { sink.pos = p; sink.ascii(String(v)); b = sink.buf; p = sink.pos; }
      }
      break;
    }
    case 'int64': {
      // below 2^53 in magnitude the two 32-bit halves give the value as an exact double
      const i64 = cols.i64!, words = new Int32Array(i64.buffer, i64.byteOffset, i64.length * 2);
      for (let i = i0; i < i1; i++) {
        if (!first || i > i0) b[p++] = 44;
        const hi = words[2 * i + 1];
        if (hi >= -0x200000 && hi < 0x200000) {
          const n = hi * 4294967296 + (words[2 * i] >>> 0);
          if (n < 0) { b[p++] = 45; p = putUint53(b, p, -n); } else p = putUint53(b, p, n);
        } else { sink.pos = p; writeInt64At(sink, words, i, i64); b = sink.buf; p = sink.pos; }
      }
      break;
    }
    case 'boolean': {
      const u8 = cols.u8!;
      for (let i = i0; i < i1; i++) {
        if (!first || i > i0) b[p++] = 44;
        if (u8[i] === 1) { b[p] = 116; b[p + 1] = 114; b[p + 2] = 117; b[p + 3] = 101; p += 4; }
        else { b[p] = 102; b[p + 1] = 97; b[p + 2] = 108; b[p + 3] = 115; b[p + 4] = 101; p += 5; }
      }
      break;
    }
    case 'enum': {
      const ord = cols.ord!;
      for (let i = i0; i < i1; i++) {
        if (!first || i > i0) b[p++] = 44;
        const o = ord[i];
        if (o < 0) { b[p++] = 45; p = putUint53(b, p, -o); } else p = putUint31(b, p, o); // -(-2^31) is past int32
      }
      break;
    }
  }
  sink.pos = p;
}

function writeQualities(sink: BodySink, quality: Uint32Array, i0: number, i1: number, first: boolean): void {
  sink.reserve((i1 - i0) * QUALITY_MAX);
  const b = sink.buf;
  let p = sink.pos;
  for (let i = i0; i < i1; i++) {
    if (!first || i > i0) b[p++] = 44;
    const q = quality[i];
    if (q === 192) { b[p] = 49; b[p + 1] = 57; b[p + 2] = 50; p += 3; } // good (OPC DA), most points
    else p = putUint53(b, p, q);
  }
  sink.pos = p;
}
