// Hand-written msgpack for bulk read bodies: the same shapes as the JSON bodies, with
// times as msgpack int64 (0xd3) and values as float64 (0xcb) or int64, written straight
// into a BodySink. msgpackr is not used here: per-point objects would allocate, and its
// default handling of non-Uint8 typed arrays corrupts them (STACK-NOTES §9).
import { utf8Into, type BodySink } from '../body-sink.js';

const TWO32 = 4294967296;

export function mpMapHeader(sink: BodySink, n: number): void {
  sink.reserve(5);
  if (n < 16) { sink.buf[sink.pos++] = 0x80 | n; return; }
  sink.buf[sink.pos++] = 0xdf;
  sink.view.setUint32(sink.pos, n);
  sink.pos += 4;
}

export function mpArrayHeader(sink: BodySink, n: number): void {
  sink.reserve(5);
  if (n < 16) { sink.buf[sink.pos++] = 0x90 | n; return; }
  sink.buf[sink.pos++] = 0xdd;
  sink.view.setUint32(sink.pos, n);
  sink.pos += 4;
}

/**
 * A whole string (str8/16/32 by UTF-8 length). Short ASCII strings (batch ids, states,
 * units: what string series hold) are copied char by char after a fixstr byte: going
 * through Buffer.from cost ~10x as much per string (a Buffer per call), which made the
 * fleet's string series 30 % of a columnar read's time for 5 % of its points.
 */
/**
 * An array32 header whose length is not known yet: returns where its 4 length bytes are,
 * for `sink.view.setUint32(at, n)` once the items are written.
 */
export function mpArray32Reserved(sink: BodySink): number {
  sink.reserve(5);
  sink.buf[sink.pos] = 0xdd;
  const at = sink.pos + 1;
  sink.pos += 5;
  return at;
}

export function mpString(sink: BodySink, s: string): void {
  const len = s.length;
  if (len < 32) {
    sink.reserve(1 + len);
    const b = sink.buf;
    const p = sink.pos + 1;
    let i = 0;
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      b[p + i] = c;
    }
    if (i === len) {
      b[sink.pos] = 0xa0 | len;
      sink.pos = p + len;
      return;
    }
  }
  mpStringUtf8(sink, s);
}

function mpStringUtf8(sink: BodySink, s: string): void {
  const n = Buffer.byteLength(s, 'utf8');
  sink.reserve(5 + n);
  if (n < 32) sink.buf[sink.pos++] = 0xa0 | n;
  else if (n < 256) { sink.buf[sink.pos++] = 0xd9; sink.buf[sink.pos++] = n; }
  else if (n < 65536) { sink.buf[sink.pos++] = 0xda; sink.view.setUint16(sink.pos, n); sink.pos += 2; }
  else { sink.buf[sink.pos++] = 0xdb; sink.view.setUint32(sink.pos, n); sink.pos += 4; }
  sink.pos += utf8Into(sink.buf, sink.pos, s);
}

/**
 * Pre-encoded msgpack of a constant string (a member name), made once per name: body
 * writers call it per request, and encoding it each time (a Buffer per call) was 3 % of a
 * columnar page's worker time (profiled). Only constant names come here, so the map stays small.
 */
export function mpKey(s: string): Uint8Array {
  let k = keys.get(s);
  if (k === undefined) { k = encodeKey(s); keys.set(s, k); }
  return k;
}
const keys = new Map<string, Uint8Array>();

function encodeKey(s: string): Uint8Array {
  const b = Buffer.from(s, 'utf8');
  if (b.byteLength >= 32) throw new Error(`BUG: msgpack key ${s} longer than a fixstr`);
  const out = new Uint8Array(1 + b.byteLength);
  out[0] = 0xa0 | b.byteLength;
  out.set(b, 1);
  return out;
}

export function mpNil(sink: BodySink): void { sink.reserve(1); sink.buf[sink.pos++] = 0xc0; }
export function mpBool(sink: BodySink, b: boolean): void { sink.reserve(1); sink.buf[sink.pos++] = b ? 0xc3 : 0xc2; }

export function mpFloat64(sink: BodySink, v: number): void {
  sink.reserve(9);
  sink.buf[sink.pos++] = 0xcb;
  sink.view.setFloat64(sink.pos, v);
  sink.pos += 8;
}

/** A non-negative integer below 2^32 in its smallest form. */
export function mpUint(sink: BodySink, n: number): void {
  sink.reserve(5);
  if (n < 128) { sink.buf[sink.pos++] = n; return; }
  if (n < 256) { sink.buf[sink.pos++] = 0xcc; sink.buf[sink.pos++] = n; return; }
  if (n < 65536) { sink.buf[sink.pos++] = 0xcd; sink.view.setUint16(sink.pos, n); sink.pos += 2; return; }
  sink.buf[sink.pos++] = 0xce;
  sink.view.setUint32(sink.pos, n);
  sink.pos += 4;
}

/** An int64 always as 0xd3 + 8 bytes, from a bigint (off the hot path). */
export function mpInt64Big(sink: BodySink, v: bigint): void {
  sink.reserve(9);
  sink.buf[sink.pos++] = 0xd3;
  sink.view.setBigInt64(sink.pos, v);
  sink.pos += 8;
}

/** Splits a base time into signed high and unsigned low 32-bit words (as doubles). */
export function splitWords(base: bigint): [number, number] {
  return [Number(BigInt.asIntN(64, base) >> 32n), Number(base & 0xffffffffn)];
}

/** base + offset (offset an exact double < 2^53) as msgpack int64, without BigInt. */
export function mpTime(sink: BodySink, words: [number, number], offset: number): void {
  sink.reserve(9);
  const lo = words[1] + offset;
  if (lo >= 2 ** 53) { mpInt64Big(sink, BigInt.asIntN(64, ((BigInt(words[0]) << 32n) | BigInt(words[1])) + BigInt(offset))); return; } // would round: exact through BigInt
  const carry = Math.floor(lo / TWO32);
  sink.buf[sink.pos++] = 0xd3;
  sink.view.setInt32(sink.pos, words[0] + carry);
  sink.view.setUint32(sink.pos + 4, lo - carry * TWO32);
  sink.pos += 8;
}
