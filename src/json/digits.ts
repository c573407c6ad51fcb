// Writing numbers as JSON text straight into a BodySink without BigInt or string
// allocation on the common paths: int64 nanosecond times split into two exact doubles
// (seconds and nanoseconds), safe integers digit by digit, and fixed-decimal floats
// (plant values) as scaled integers. Anything else falls back to V8's shortest
// round-trip formatting, which is the reference the fast paths must agree with.
import type { BodySink } from '../body-sink.js';

const digitScratch = new Uint8Array(24);

/** A non-negative safe integer's digits. */
function writeUnsigned(sink: BodySink, n: number): void {
  if (n < 10) { sink.buf[sink.pos++] = 48 + n; return; }
  let k = 0;
  while (n > 0) {
    const q = Math.floor(n / 10);
    digitScratch[k++] = 48 + (n - q * 10);
    n = q;
  }
  const buf = sink.buf;
  let p = sink.pos;
  while (k > 0) buf[p++] = digitScratch[--k];
  sink.pos = p;
}

/** A safe integer (|n| <= 2^53); the caller has reserved 17 bytes. */
export function writeSafeInt(sink: BodySink, n: number): void {
  if (n < 0) { sink.buf[sink.pos++] = 45; n = -n; }
  writeUnsigned(sink, n);
}

/** Exactly nine digits, zero-padded (the nanosecond part of a time). */
function writeNine(sink: BodySink, n: number): void {
  const buf = sink.buf;
  const p = sink.pos;
  for (let i = 8; i >= 0; i--) {
    const q = Math.floor(n / 10);
    buf[p + i] = 48 + (n - q * 10);
    n = q;
  }
  sink.pos = p + 9;
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1e6];

/**
 * A finite double as JSON. Fast paths: safe integers, and values with up to 6 decimals
 * whose scaled integer divides back to exactly the same double (then the decimal text
 * parses back to it too, since both round the same real number). -0 is written "-0"
 * so that it stays distinct from 0, as the store keeps it. Reserves what it writes.
 */
export function writeDouble(sink: BodySink, v: number): void {
  sink.reserve(26);
  if (Number.isInteger(v) && Math.abs(v) <= 9007199254740992) {
    if (v === 0 && 1 / v < 0) { sink.buf[sink.pos++] = 45; sink.buf[sink.pos++] = 48; return; }
    writeSafeInt(sink, v);
    return;
  }
  const a = Math.abs(v);
  if (a < 9e9 && a >= 1e-6) {
    for (let k = 1; k <= 6; k++) {
      const scale = POW10[k];
      const m = Math.round(a * scale);
      if (m / scale === a) {
        if (v < 0) sink.buf[sink.pos++] = 45;
        const ip = Math.floor(m / scale);
        writeUnsigned(sink, ip);
        sink.buf[sink.pos++] = 46;
        // fraction digits, zero-padded to k, trailing zeros impossible since k is minimal
        let frac = m - ip * scale;
        const buf = sink.buf;
        const p = sink.pos;
        for (let i = k - 1; i >= 0; i--) {
          const q = Math.floor(frac / 10);
          buf[p + i] = 48 + (frac - q * 10);
          frac = q;
        }
        sink.pos = p + k;
        return;
      }
    }
  }
  sink.ascii(String(v));
}

const NS_PER_S = 1e9;

/**
 * Prepares the split of a chunk's base time so that each point's absolute time
 * base + offset (offset an exact double < 2^53) prints without BigInt: returns
 * [seconds, nanoseconds] of base, or null when base is negative (rare: slow path).
 */
export function splitBase(base: bigint): [number, number] | null {
  if (base < 0n) return null;
  return [Number(base / 1_000_000_000n), Number(base % 1_000_000_000n)];
}

/** Writes base + offset as int64 decimal digits; `split` comes from splitBase(base). */
export function writeTime(sink: BodySink, split: [number, number] | null, base: bigint, offset: number): void {
  sink.reserve(21);
  // offsets past 2^53 - 1e9 (spans the writer never makes, < 2^50, but the codec allows) through BigInt
  if (split === null || split[1] + offset >= 2 ** 53) { sink.ascii((base + BigInt(offset)).toString()); return; }
  let ns = split[1] + offset; // < 2^53: exact
  const carry = Math.floor(ns / NS_PER_S);
  ns -= carry * NS_PER_S;
  const s = split[0] + carry; // < 9.3e9: exact
  if (s === 0) { writeUnsigned(sink, ns); return; }
  writeUnsigned(sink, s);
  writeNine(sink, ns);
}

/** An int64 held in a BigInt64Array, read as two 32-bit halves so small values need no BigInt. */
export function writeInt64At(sink: BodySink, words: Int32Array, i: number, values: BigInt64Array): void {
  sink.reserve(21);
  const hi = words[2 * i + 1];
  if (hi >= -0x200000 && hi < 0x200000) {
    const lo = words[2 * i] >>> 0;
    writeSafeInt(sink, hi * 4294967296 + lo);
    return;
  }
  sink.ascii(values[i].toString());
}
