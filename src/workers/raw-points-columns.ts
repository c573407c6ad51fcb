// The columnar bulk layout of GET /raw (`layout=columns`, msgpack only): the page's points
// as typed columns instead of one map per point, for clients that move millions of points.
//
//   points: { ts_ns: bin (int64 little-endian, 8 bytes a point),
//             value: bin (float64le | int64le | uint8 | int32le) or array of str,
//             quality: bin (uint8 | uint32le) }
//   encoding: { ts_ns: 'int64le', value: <one of the names above, or 'string'>, quality: ... }
//
// A msgpack bin needs its length before its bytes and the page's point count is known
// only once the range is scanned, so runs are gathered into per-worker typed columns
// (bulk `set` copies for values, two 32-bit stores per time) and written as three bins at
// the end: one memcpy per column. Enum ordinals and quality narrow to one byte when every
// value of the page fits (the common case: ~17 bytes a float64 point instead of 41).
import type { PointColumns, ValueType } from '../storage/encoding/chunk-types.js';
import type { BodySink } from './body-sink.js';
import { mpString, splitWords } from './msgpack-bytes.js';

const TWO32 = 4294967296;
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('BUG: the columnar layout assumes a little-endian host');

/** Column sizes kept between requests (points); a larger page gets one-shot columns. */
export const RETAIN_POINTS = 1 << 20;

export type ValueEncoding = 'float64le' | 'int64le' | 'uint8' | 'int32le' | 'string';
export type QualityEncoding = 'uint8' | 'uint32le';

/** A msgpack bin header for n bytes, then the bytes. */
export function mpBin(sink: BodySink, bytes: Uint8Array): void {
  const n = bytes.byteLength;
  sink.reserve(5 + n);
  const b = sink.buf;
  if (n < 256) { b[sink.pos++] = 0xc4; b[sink.pos++] = n; }
  else if (n < 65536) { b[sink.pos++] = 0xc5; sink.view.setUint16(sink.pos, n); sink.pos += 2; }
  else { b[sink.pos++] = 0xc6; sink.view.setUint32(sink.pos, n); sink.pos += 4; }
  b.set(bytes, sink.pos);
  sink.pos += n;
}

const bytesOf = (a: Float64Array | BigInt64Array | Int32Array | Uint32Array | Uint8Array, n: number, width: number) =>
  new Uint8Array(a.buffer, a.byteOffset, n * width);

/** Gathers a page's points as columns, run by run, then writes them as msgpack. */
export class ColumnPage {
  type: ValueType = 'float64';
  count = 0;
  private capacity = 0;
  /** Time as little-endian int64: [low word, high word] per point. */
  private ts = new Uint32Array(0);
  private f64 = new Float64Array(0);
  private i64 = new BigInt64Array(0);
  private u8 = new Uint8Array(0);
  private ord = new Int32Array(0);
  private str: string[] = [];
  private quality = new Uint32Array(0);
  private qualityMax = 0;
  private ordMin = 0;
  private ordMax = 0;
  /** The page's point limit: columns grow on demand, never beyond it. */
  private limit = 0;

  /** Starts a page of `type` that will hold at most `limit` points. */
  begin(type: ValueType, limit: number): void {
    this.type = type;
    this.count = 0;
    this.qualityMax = 0;
    this.ordMin = 0;
    this.ordMax = 0;
    this.str.length = 0;
    this.limit = limit;
  }

  /** After the body is written (or the read failed): drops string references and columns beyond what is kept between requests. */
  end(): void {
    this.str.length = 0;
    this.count = 0;
    if (this.capacity > RETAIN_POINTS) this.allocate(0);
  }

  /** Grows (or shrinks) the columns, keeping the points gathered so far. */
  private allocate(capacity: number): void {
    const keep = Math.min(this.count, capacity);
    const ts = new Uint32Array(2 * capacity), quality = new Uint32Array(capacity);
    ts.set(this.ts.subarray(0, 2 * keep));
    quality.set(this.quality.subarray(0, keep));
    // One page has one value type: the value views share one buffer of 8 bytes a point.
    const values = new ArrayBuffer(8 * capacity);
    new Uint8Array(values).set(new Uint8Array(this.f64.buffer, 0, Math.min(this.f64.byteLength, values.byteLength)));
    this.ts = ts; this.quality = quality;
    this.f64 = new Float64Array(values); this.i64 = new BigInt64Array(values);
    this.ord = new Int32Array(values, 0, capacity); this.u8 = new Uint8Array(values, 0, capacity);
    this.capacity = capacity;
  }

  /** Appends points i0..i1-1 of decoded chunk columns (of the page's type). */
  append(cols: PointColumns, i0: number, i1: number): void {
    const m = i1 - i0;
    if (m <= 0) return;
    const n = this.count;
    if (n + m > this.capacity) this.allocate(Math.min(Math.max(n + m, 2 * this.capacity, 4096), Math.max(this.limit, n + m)));
    const ts = this.ts, offs = cols.tsOffset;
    const [hiBase, loBase] = splitWords(cols.tsBase);
    for (let i = i0, k = 2 * n; i < i1; i++, k += 2) {
      let lo = loBase + offs[i]; // < 2^32 + 2^50: exact
      let hi = hiBase;
      if (lo >= TWO32 || lo < 0) { const carry = Math.floor(lo / TWO32); hi += carry; lo -= carry * TWO32; }
      ts[k] = lo; ts[k + 1] = hi; // a negative high word wraps to its two's complement
    }
    switch (cols.type) {
      case 'float64': this.f64.set(cols.f64!.subarray(i0, i1), n); break;
      case 'int64': this.i64.set(cols.i64!.subarray(i0, i1), n); break;
      case 'boolean': this.u8.set(cols.u8!.subarray(i0, i1), n); break;
      case 'enum': {
        const src = cols.ord!, dst = this.ord;
        let lo = this.ordMin, hi = this.ordMax;
        for (let i = i0, k = n; i < i1; i++, k++) { const o = src[i]; dst[k] = o; if (o < lo) lo = o; if (o > hi) hi = o; }
        this.ordMin = lo; this.ordMax = hi;
        break;
      }
      case 'string': { const src = cols.str!; for (let i = i0; i < i1; i++) this.str.push(src[i]); break; }
    }
    const q = cols.quality, dq = this.quality;
    let qMax = this.qualityMax;
    for (let i = i0, k = n; i < i1; i++, k++) { const v = q[i]; dq[k] = v; if (v > qMax) qMax = v; }
    this.qualityMax = qMax;
    this.count = n + m;
  }

  get valueEncoding(): ValueEncoding {
    switch (this.type) {
      case 'float64': return 'float64le';
      case 'int64': return 'int64le';
      case 'boolean': return 'uint8';
      case 'enum': return this.ordMin >= 0 && this.ordMax < 256 ? 'uint8' : 'int32le';
      case 'string': return 'string';
    }
  }

  get qualityEncoding(): QualityEncoding {
    return this.qualityMax < 256 ? 'uint8' : 'uint32le';
  }

  /** The `points` map: {ts_ns: bin, value: bin | array, quality: bin}. */
  writePoints(sink: BodySink): void {
    const n = this.count;
    sink.reserve(1 + 6);
    sink.buf[sink.pos++] = 0x83;
    writeKey(sink, 'ts_ns');
    mpBin(sink, bytesOf(this.ts, n, 8));
    writeKey(sink, 'value');
    switch (this.valueEncoding) {
      case 'float64le': mpBin(sink, bytesOf(this.f64, n, 8)); break;
      case 'int64le': mpBin(sink, bytesOf(this.i64, n, 8)); break;
      case 'int32le': mpBin(sink, bytesOf(this.ord, n, 4)); break;
      case 'uint8':
        if (this.type === 'boolean') mpBin(sink, bytesOf(this.u8, n, 1));
        else narrowBin(sink, this.ord, n);
        break;
      case 'string': {
        sink.reserve(5);
        sink.buf[sink.pos++] = 0xdd;
        sink.view.setUint32(sink.pos, n);
        sink.pos += 4;
        for (let i = 0; i < n; i++) mpString(sink, this.str[i]);
        break;
      }
    }
    writeKey(sink, 'quality');
    if (this.qualityEncoding === 'uint8') narrowBin(sink, this.quality, n);
    else mpBin(sink, bytesOf(this.quality, n, 4));
  }
}

/** A bin of n bytes, each the low byte of a column element known to fit in it. */
function narrowBin(sink: BodySink, col: Int32Array | Uint32Array, n: number): void {
  sink.reserve(5 + n);
  const b = sink.buf;
  let p = sink.pos;
  if (n < 256) { b[p++] = 0xc4; b[p++] = n; }
  else if (n < 65536) { b[p++] = 0xc5; b[p++] = n >>> 8; b[p++] = n & 0xff; }
  else { b[p++] = 0xc6; sink.view.setUint32(p, n); p += 4; }
  for (let i = 0; i < n; i++) b[p + i] = col[i];
  sink.pos = p + n;
}

function writeKey(sink: BodySink, key: string): void {
  sink.reserve(1 + key.length);
  sink.buf[sink.pos++] = 0xa0 | key.length;
  for (let i = 0; i < key.length; i++) sink.buf[sink.pos++] = key.charCodeAt(i);
}
