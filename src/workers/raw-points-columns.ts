// The columnar bulk layout of GET /raw (`layout=columns`, msgpack only): the page's points
// as typed columns instead of one map per point, for clients that move millions of points.
//
//   points: { ts_ns: bin (int64 little-endian, 8 bytes a point),
//             value: bin (float64le | int64le | uint8 | int32le), quality: bin (uint8 | uint32le) }
//           string series: { ts_ns, quality, value: array of str }
//   encoding (after points): { ts_ns: 'int64le', value: <one of the names above, or 'string'>, quality: ... }
//
// The columns are gathered straight into the response body. A msgpack bin needs its length
// before its bytes and the page's point count is known only once the range is scanned, so
// the caller first bounds the count from the chunk headers (whole chunk counts: exact when
// the range covers its chunks whole, as a series read whole does) and the page reserves a
// region of that many points per column in the body, behind bin32 headers patched at the
// end. Only a page holding fewer points than its bound (a range or a limit that cuts a
// chunk) moves its value and quality regions down, to close the gaps. The quality column
// and enum ordinals are written one byte each while every value fits, and widened in
// place (to u32 / i32) the first time one does not: the common page is ~17 bytes a float64
// point, written once, where gathering into separate columns and copying them into the
// body cost a fifth of the worker's time on fleet reads (profiled, bench/storage.ts).
// The column stores go through the body's DataView: the regions' offsets follow the body
// bytes before them, so they have no alignment a typed-array view would need.
import type { PointColumns, ValueType } from '../storage/encoding/chunk-types.js';
import { valueBytes } from '../storage/series-store.js';
import type { BodySink } from '../body-sink.js';
import { mpKey, mpMapHeader, mpString, splitWords } from './msgpack-bytes.js';

const INV_TWO32 = 1 / 4294967296;

export type ValueEncoding = 'float64le' | 'int64le' | 'uint8' | 'int32le' | 'string';
export type QualityEncoding = 'uint8' | 'uint32le';

/** Bytes of a fixstr key and a bin32 header in front of a column: 0xa0|len, the key, 0xc6, u32 length. */
const keyed = (key: string) => 1 + key.length + 5;
const TS_HEAD = keyed('ts_ns'), VALUE_HEAD = keyed('value'), QUALITY_HEAD = keyed('quality');

/**
 * The `points` map of one page, gathered into a body: begin (reserves the regions behind
 * the sink's position), append run by run, finish (writes the headers, closes gaps).
 */
export class ColumnPage {
  type: ValueType = 'float64';
  count = 0;
  private sink: BodySink | null = null;
  private bound = 0;
  /** Where the `points` map starts, and where each column's bytes start while gathering. */
  private mapAt = 0;
  private tsAt = 0;
  private valueAt = 0;
  private qualityAt = 0;
  private qualityWide = false;
  private ordWide = false;
  private readonly str: string[] = [];

  /** Starts a page of `type` at the sink's position, with room for `bound` points (the most the scan may give). */
  begin(sink: BodySink, type: ValueType, bound: number): void {
    this.sink = sink;
    this.type = type;
    this.count = 0;
    this.bound = bound;
    this.qualityWide = false;
    this.ordWide = false;
    this.str.length = 0;
    // a point's value region is its column width (enum: int32, room to widen from int8/int16)
    const vw = valueBytes(type);
    sink.reserve(1 + TS_HEAD + 8 * bound + VALUE_HEAD + vw * bound + QUALITY_HEAD + 4 * bound);
    this.mapAt = sink.pos;
    this.tsAt = this.mapAt + 1 + TS_HEAD;
    if (type === 'string') {
      this.qualityAt = this.tsAt + 8 * bound + QUALITY_HEAD;
    } else {
      this.valueAt = this.tsAt + 8 * bound + VALUE_HEAD;
      this.qualityAt = this.valueAt + vw * bound + QUALITY_HEAD;
    }
  }

  /** Appends points i0..i1-1 of decoded chunk columns (of the page's type). */
  append(cols: PointColumns, i0: number, i1: number): void {
    const m = i1 - i0;
    if (m <= 0) return;
    const n = this.count;
    if (n + m > this.bound) throw new Error(`BUG: a columns page bounded at ${this.bound} points got ${n + m}`);
    const sink = this.sink as BodySink;
    const buf = sink.buf, view = sink.view;
    writeTimes(view, cols, i0, i1, this.tsAt + 8 * n);
    this.appendValues(cols, i0, i1, n, buf);
    this.appendQuality(cols, i0, i1, n, buf, view);
    this.count = n + m;
  }

  private appendValues(cols: PointColumns, i0: number, i1: number, n: number, buf: Uint8Array): void {
    const m = i1 - i0;
    switch (cols.type) {
      case 'float64': { const v = cols.f64!; buf.set(new Uint8Array(v.buffer, v.byteOffset + 8 * i0, 8 * m), this.valueAt + 8 * n); break; }
      case 'int64': { const v = cols.i64!; buf.set(new Uint8Array(v.buffer, v.byteOffset + 8 * i0, 8 * m), this.valueAt + 8 * n); break; }
      case 'boolean': buf.set(cols.u8!.subarray(i0, i1), this.valueAt + n); break;
      case 'enum': this.appendOrdinals(cols.ord!, i0, i1, n); break;
      case 'string': { const src = cols.str!; for (let i = i0; i < i1; i++) this.str.push(src[i]); break; }
    }
  }

  /** One byte a quality while every quality of the page fits, then four (widened in place once). */
  private appendQuality(cols: PointColumns, i0: number, i1: number, n: number, buf: Uint8Array, view: DataView): void {
    const q = cols.quality;
    let i = i0;
    if (!this.qualityWide) {
      i = qualityBytes(q, i0, i1, buf, this.qualityAt + n - i0);
      if (i < i1) { widenBytes(view, this.qualityAt, n + i - i0, false); this.qualityWide = true; }
    }
    if (this.qualityWide) qualityWords(view, q, i, i1, this.qualityAt + 4 * (n - i0));
  }

  private appendOrdinals(src: Int32Array, i0: number, i1: number, n: number): void {
    const sink = this.sink as BodySink;
    const buf = sink.buf, view = sink.view, at = this.valueAt;
    let i = i0;
    if (!this.ordWide) {
      i = ordinalBytes(src, i0, i1, buf, at + n - i0);
      if (i < i1) { widenBytes(view, at, n + i - i0, true); this.ordWide = true; }
    }
    if (this.ordWide) ordinalWords(view, src, i, i1, at + 4 * (n - i0));
  }

  get valueEncoding(): ValueEncoding {
    switch (this.type) {
      case 'float64': return 'float64le';
      case 'int64': return 'int64le';
      case 'boolean': return 'uint8';
      case 'enum': return this.ordWide ? 'int32le' : 'uint8';
      case 'string': return 'string';
    }
  }

  get qualityEncoding(): QualityEncoding {
    return this.qualityWide ? 'uint32le' : 'uint8';
  }

  /** The page's `encoding` member (msgpack): how to read each column's bytes; after finish(). */
  writeEncodings(sink: BodySink): void {
    sink.bytes(mpKey('encoding'));
    mpMapHeader(sink, 3);
    sink.bytes(mpKey('ts_ns')); mpString(sink, 'int64le');
    sink.bytes(mpKey('value')); mpString(sink, this.valueEncoding);
    sink.bytes(mpKey('quality')); mpString(sink, this.qualityEncoding);
  }

  /** Writes the map and bin headers around the gathered columns, closes the gaps a short page leaves, and moves the sink past the map. */
  finish(): void {
    const sink = this.sink as BodySink;
    const n = this.count;
    const buf = sink.buf;
    buf[this.mapAt] = 0x83;
    let p = columnHead(sink, this.mapAt + 1, 'ts_ns', 8 * n);
    p += 8 * n;
    const qBytes = (this.qualityWide ? 4 : 1) * n;
    if (this.type === 'string') {
      p = columnHead(sink, p, 'quality', qBytes);
      if (p !== this.qualityAt) buf.copyWithin(p, this.qualityAt, this.qualityAt + qBytes);
      sink.pos = p + qBytes;
      sink.reserve(1 + 5 + 5);
      sink.buf[sink.pos++] = 0xa0 | 5;
      sink.ascii('value');
      sink.buf[sink.pos++] = 0xdd;
      sink.view.setUint32(sink.pos, n);
      sink.pos += 4;
      for (let i = 0; i < n; i++) mpString(sink, this.str[i]);
      this.str.length = 0;
    } else {
      const vBytes = (this.type === 'boolean' || (this.type === 'enum' && !this.ordWide) ? 1 : this.type === 'enum' ? 4 : 8) * n;
      p = columnHead(sink, p, 'value', vBytes);
      if (p !== this.valueAt) buf.copyWithin(p, this.valueAt, this.valueAt + vBytes);
      p += vBytes;
      p = columnHead(sink, p, 'quality', qBytes);
      if (p !== this.qualityAt) buf.copyWithin(p, this.qualityAt, this.qualityAt + qBytes);
      sink.pos = p + qBytes;
    }
    this.sink = null;
  }

  /** After a failed scan: lets go of the body and the strings gathered so far. */
  release(): void {
    this.sink = null;
    this.str.length = 0;
  }
}

/** Times i0..i1-1 as little-endian int64 from `at`: two 32-bit stores a point, no BigInt on the common path. */
function writeTimes(view: DataView, cols: PointColumns, i0: number, i1: number, at: number): void {
  const offs = cols.tsOffset;
  const [hiBase, loBase] = splitWords(cols.tsBase);
  if (loBase + offs[i1 - 1] >= 2 ** 53) { // beyond what the writer makes (spans < 2^50): exact through BigInt
    for (let i = i0, p = at; i < i1; i++, p += 8) view.setBigInt64(p, BigInt.asIntN(64, cols.tsBase + BigInt(offs[i])), true);
    return;
  }
  for (let i = i0, p = at; i < i1; i++, p += 8) {
    const x = loBase + offs[i]; // >= 0 and < 2^53 (offsets ascend): exact
    const lo = x >>> 0; // x mod 2^32, exact for an integral double
    view.setUint32(p, lo, true);
    view.setInt32(p + 4, hiBase + (x - lo) * INV_TWO32, true);
  }
}

/** Writes a fixstr key and a bin32 header for `bytes` at `at`; returns where the column's bytes go. */
function columnHead(sink: BodySink, at: number, key: string, bytes: number): number {
  const buf = sink.buf;
  buf[at++] = 0xa0 | key.length;
  for (let i = 0; i < key.length; i++) buf[at++] = key.charCodeAt(i);
  buf[at++] = 0xc6;
  sink.view.setUint32(at, bytes);
  return at + 4;
}

// The per-point loops live in functions of their own that end at the loop: a loop inside a
// method is compiled on its own (on-stack replacement) on its first long run, before the code
// after it has ever run, and V8 then left that code on every later call through a
// deoptimization for missing type feedback: ~1,000 a second on fleet reads (--trace-deopt).

/** Writes q[i0..i1) as bytes at dst[i + shift] while each is <= 255; returns where it stopped. */
function qualityBytes(q: Uint32Array, i0: number, i1: number, dst: Uint8Array, shift: number): number {
  let i = i0;
  for (; i < i1; i++) { const v = q[i]; if (v > 255) break; dst[shift + i] = v; }
  return i;
}

/** Writes o[i0..i1) as bytes at dst[i + shift] while each is 0..255; returns where it stopped. */
function ordinalBytes(o: Int32Array, i0: number, i1: number, dst: Uint8Array, shift: number): number {
  let i = i0;
  for (; i < i1; i++) { const v = o[i]; if (v < 0 || v > 255) break; dst[shift + i] = v; }
  return i;
}

/** Writes q[i0..i1) as u32 little-endian, entry i at at + 4 * i. */
function qualityWords(view: DataView, q: Uint32Array, i0: number, i1: number, at: number): void {
  for (let i = i0; i < i1; i++) view.setUint32(at + 4 * i, q[i], true);
}

/** Writes o[i0..i1) as i32 little-endian, entry i at at + 4 * i. */
function ordinalWords(view: DataView, o: Int32Array, i0: number, i1: number, at: number): void {
  for (let i = i0; i < i1; i++) view.setInt32(at + 4 * i, o[i], true);
}

/** Rewrites n one-byte entries at `at` as four-byte little-endian ones (u32, or i32 when signed), in place, last first. */
function widenBytes(view: DataView, at: number, n: number, signed: boolean): void {
  for (let k = n - 1; k >= 0; k--) {
    const v = view.getUint8(at + k);
    if (signed) view.setInt32(at + 4 * k, v, true); else view.setUint32(at + 4 * k, v, true);
  }
}
