// Value columns for int64, boolean, enum and string, and the dispatch over all five
// value types (float64 lives in float-column.ts).
//
// int64: when every value is within +-2^51 (counters, totals: nearly always) the values
// travel as doubles through the integer column and are written back into the
// BigInt64Array through a 32-bit word view, so decoding creates no BigInt per point.
// Otherwise each value is the zigzag varint of its wrapping 64-bit difference from the
// previous one, exact over the whole int64 range (slow path, BigInt per point).
// boolean and enum: the integer column (runs win for states). string: a per-chunk
// dictionary in first-seen order, then the integer column of dictionary indexes.

import { ChunkReader, ChunkWriter } from './byte-io.js';
import type { PointColumns, ValueType } from './chunk-types.js';
import { decodeFloats, encodeFloats } from './float-column.js';
import { encodeIntColumn } from './int-column.js';
import { decodeIntColumn, decodeIntColumnTo } from './int-column-decode.js';
import { scratchColumn, ScratchSlot } from './scratch.js';

/** 2^32, local to the module: a constant imported across modules can cost a getter per use. */
const TWO_32 = 4294967296;

const Int64Mode = { Small: 0, Wide: 1 } as const;
const SMALL_LIMIT = 2n ** 51n;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Writes the value section. Returns k >= 0 when the section holds one integer column of
 * x_i with value_i = x_i / 10^k (left in scratch ValueNumbers[0..n) for the chunk
 * summary), -1 otherwise (float SPLIT, int64 WIDE, strings).
 */
export function encodeValues(w: ChunkWriter, cols: PointColumns, n: number): number {
  switch (cols.type) {
    case 'float64':
      return encodeFloats(w, cols.f64 as Float64Array, n);
    case 'int64':
      return encodeInt64(w, cols.i64 as BigInt64Array, n);
    case 'boolean':
      return encodeSmallInts(w, cols.u8 as Uint8Array, n);
    case 'enum':
      return encodeSmallInts(w, cols.ord as Int32Array, n);
    case 'string':
      return encodeStrings(w, cols.str as string[], n);
  }
}

function encodeSmallInts(w: ChunkWriter, src: Uint8Array | Int32Array, n: number): number {
  const x = scratchColumn(ScratchSlot.ValueNumbers, n);
  for (let i = 0; i < n; i++) x[i] = src[i];
  encodeIntColumn(w, x, n);
  return 0;
}

/** Bytes before the integer column in a value section whose encoder returned k >= 0. */
export function intColumnSkip(type: ValueType): number {
  return type === 'float64' ? 2 : type === 'int64' ? 1 : 0;
}

function encodeInt64(w: ChunkWriter, v: BigInt64Array, n: number): number {
  let small = true;
  for (let i = 0; i < n && small; i++) small = v[i] < SMALL_LIMIT && v[i] > -SMALL_LIMIT;
  if (small) {
    const x = scratchColumn(ScratchSlot.ValueNumbers, n);
    for (let i = 0; i < n; i++) x[i] = Number(v[i]);
    w.u8(Int64Mode.Small);
    encodeIntColumn(w, x, n);
    return 0;
  }
  w.u8(Int64Mode.Wide);
  let prev = 0n;
  for (let i = 0; i < n; i++) {
    const d = BigInt.asIntN(64, v[i] - prev);
    w.bigVarint(BigInt.asUintN(64, (d << 1n) ^ (d >> 63n)));
    prev = v[i];
  }
  return -1;
}

function encodeStrings(w: ChunkWriter, s: string[], n: number): number {
  const index = new Map<string, number>();
  const entries: Uint8Array[] = [];
  const x = scratchColumn(ScratchSlot.ValueNumbers, n);
  for (let i = 0; i < n; i++) {
    let k = index.get(s[i]);
    if (k === undefined) {
      k = entries.length;
      index.set(s[i], k);
      entries.push(Buffer.from(s[i], 'utf8'));
    }
    x[i] = k;
  }
  w.varint(entries.length);
  for (const e of entries) {
    w.varint(e.length);
    w.raw(e);
  }
  encodeIntColumn(w, x, n);
  return -1;
}

/** Fills the value column of `out` that matches `type`; the caller checked its capacity. */
export function decodeValues(r: ChunkReader, type: ValueType, n: number, out: PointColumns): void {
  switch (type) {
    case 'float64':
      return decodeFloats(r, n, out.f64 as Float64Array);
    case 'int64':
      return decodeInt64(r, n, out.i64 as BigInt64Array);
    case 'boolean':
      return decodeIntColumnTo(r, n, out.u8 as Uint8Array);
    case 'enum':
      return decodeIntColumnTo(r, n, out.ord as Int32Array);
    case 'string':
      return decodeStrings(r, n, out.str as string[]);
  }
}

/** Numeric view (int64 as the nearest double, boolean 0/1, enum ordinal) into f64; not for strings. */
export function decodeValuesNumeric(r: ChunkReader, type: ValueType, n: number, f64: Float64Array): void {
  if (type === 'float64') return decodeFloats(r, n, f64);
  if (type === 'int64') {
    const mode = r.u8('int64 column mode');
    if (mode === Int64Mode.Small) return decodeIntColumn(r, n, f64);
    if (mode !== Int64Mode.Wide) r.fail(`unknown int64 column mode ${mode}`);
    let prev = 0n;
    for (let i = 0; i < n; i++) {
      prev = nextWide(r, prev);
      f64[i] = Number(prev);
    }
    return;
  }
  if (type === 'boolean' || type === 'enum') return decodeIntColumn(r, n, f64);
  throw new Error('BUG: decodeValuesNumeric called for a string chunk');
}

function nextWide(r: ChunkReader, prev: bigint): bigint {
  const z = r.bigVarint('int64 delta');
  if (z >= 1n << 64n) r.fail('int64 delta wider than 64 bits');
  return BigInt.asIntN(64, prev + ((z >> 1n) ^ -(z & 1n)));
}

/**
 * x[0..m) (exact integers, |x| < 2^51) into out as int64: two's complement halves written as
 * int32 words (hi fits an int32), no BigInt per value. Also the chunk window's (chunk-window.ts).
 */
export function int64Words(x: Float64Array, out: BigInt64Array, m: number): void {
  const words = new Int32Array(out.buffer, out.byteOffset, m * 2);
  for (let j = 0; j < m; j++) {
    const v = x[j];
    const hi = Math.floor(v / TWO_32);
    words[2 * j] = v - hi * TWO_32;
    words[2 * j + 1] = hi;
  }
}

function decodeInt64(r: ChunkReader, n: number, out: BigInt64Array): void {
  const mode = r.u8('int64 column mode');
  if (mode === Int64Mode.Small) {
    const x = scratchColumn(ScratchSlot.ValueNumbers, n);
    decodeIntColumn(r, n, x);
    int64Words(x, out, n);
    return;
  }
  if (mode !== Int64Mode.Wide) r.fail(`unknown int64 column mode ${mode}`);
  let prev = 0n;
  for (let i = 0; i < n; i++) {
    prev = nextWide(r, prev);
    out[i] = prev;
  }
}

function decodeStrings(r: ChunkReader, n: number, out: string[]): void {
  const size = r.varint('dictionary size');
  if (size > n || size === 0) r.fail(`dictionary of ${size} strings for ${n} points`);
  const dict: string[] = new Array<string>(size);
  for (let k = 0; k < size; k++) {
    const len = r.varint('dictionary entry length');
    const bytes = r.take(len, 'dictionary entry');
    try {
      dict[k] = utf8.decode(bytes);
    } catch {
      r.fail(`dictionary entry ${k} is not UTF-8`);
    }
  }
  const x = scratchColumn(ScratchSlot.ValueNumbers, n);
  decodeIntColumn(r, n, x);
  for (let i = 0; i < n; i++) {
    const s = dict[x[i]];
    if (s === undefined) r.fail(`dictionary index ${x[i]} of ${size}`);
    out[i] = s;
  }
}
