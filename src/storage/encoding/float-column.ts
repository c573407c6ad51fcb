// float64 value column.
//
// Plant values are fixed-decimal readings: v = m / 10^k for a small k. When every value
// of the chunk satisfies that exactly (checked bit for bit, -0 excluded) the integers m
// go to the integer column (deltas of a wandering reading are small) and decoding is
// m / 10^k, the same correctly rounded division that produced the reading. Otherwise
// (vibration, computed values, -0) each double is split into sign, exponent and 52-bit
// mantissa columns: exact for every bit pattern; a constant sign or exponent costs nothing,
// and exponents spread below the chunk's largest (values around zero) go to RICE.
// The measurement (XOR/Gorilla ~6.6 B per analog point against ~1.1 for scaling)
// is why XOR is not used; for truly noisy values the split costs the same ~7 B.

import { ChunkReader, ChunkWriter } from './byte-io.js';
import { encodeIntColumn } from './int-column.js';
import { decodeIntColumn } from './int-column-decode.js';
import { scratchColumn, ScratchSlot } from './scratch.js';


const FloatMode = { Decimal: 0, Split: 1 } as const;
const MAX_DECIMALS = 9;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
/** Scaled integers stay below 2^51 so the integer column may difference them. */
const DECIMAL_LIMIT = 2 ** 51;

/** The smallest k <= 9 such that every f[i] is exactly Math.round(f[i]*10^k) / 10^k, else -1. */
export function decimalScale(f: Float64Array, n: number): number {
  let k = 0;
  for (let i = 0; i < n; i++) {
    const v = f[i];
    if (v === 0 && 1 / v < 0) return -1;
    for (;;) {
      const p = POW10[k];
      const m = Math.round(v * p);
      if (m / p === v && Math.abs(m) < DECIMAL_LIMIT) break;
      if (++k > MAX_DECIMALS) return -1;
    }
  }
  // A value exact at a smaller k is almost always exact at the chosen one; prove it.
  const p = POW10[k];
  for (let i = 0; i < n; i++) {
    const m = Math.round(f[i] * p);
    if (m / p !== f[i] || !(Math.abs(m) < DECIMAL_LIMIT)) return -1;
  }
  return k;
}

/** Returns k when the values went as integers m = value * 10^k (DECIMAL), -1 for SPLIT. */
export function encodeFloats(w: ChunkWriter, f: Float64Array, n: number): number {
  const k = decimalScale(f, n);
  if (k >= 0) {
    const p = POW10[k];
    const m = scratchColumn(ScratchSlot.ValueNumbers, n);
    for (let i = 0; i < n; i++) m[i] = Math.round(f[i] * p);
    w.u8(FloatMode.Decimal);
    w.u8(k);
    encodeIntColumn(w, m, n);
    return k;
  }
  const bits = new Uint32Array(f.buffer, f.byteOffset, n * 2);
  const signs = scratchColumn(ScratchSlot.FloatSigns, n);
  const exps = scratchColumn(ScratchSlot.FloatExponents, n);
  const mantHi = scratchColumn(ScratchSlot.FloatMantissas, n);
  const mantLo = scratchColumn(ScratchSlot.FloatMantissasLow, n);
  for (let i = 0; i < n; i++) {
    const hi = bits[2 * i + 1];
    signs[i] = hi >>> 31;
    exps[i] = (hi >>> 20) & 0x7ff;
    mantHi[i] = hi & 0xfffff;
    mantLo[i] = bits[2 * i];
  }
  // The mantissa travels as its high 20 and low 32 bits: both decode without wide
  // arithmetic, and the high part of slowly varying values compresses on its own.
  w.u8(FloatMode.Split);
  encodeIntColumn(w, signs, n);
  encodeIntColumn(w, exps, n);
  encodeIntColumn(w, mantHi, n);
  encodeIntColumn(w, mantLo, n);
  return -1;
}

export function decodeFloats(r: ChunkReader, n: number, out: Float64Array): void {
  const mode = r.u8('float column mode');
  if (mode === FloatMode.Decimal) {
    const k = r.u8('decimal scale');
    if (k > MAX_DECIMALS) r.fail(`decimal scale ${k} > ${MAX_DECIMALS}`);
    // m / 10^k is the correctly rounded quotient the encoder checked against each value.
    decodeIntColumn(r, n, out, POW10[k]);
    return;
  }
  if (mode !== FloatMode.Split) r.fail(`unknown float column mode ${mode}`);
  const signs = scratchColumn(ScratchSlot.FloatSigns, n);
  const exps = scratchColumn(ScratchSlot.FloatExponents, n);
  const mantHi = scratchColumn(ScratchSlot.FloatMantissas, n);
  const mantLo = scratchColumn(ScratchSlot.FloatMantissasLow, n);
  decodeIntColumn(r, n, signs);
  decodeIntColumn(r, n, exps);
  decodeIntColumn(r, n, mantHi);
  decodeIntColumn(r, n, mantLo);
  const bits = new Uint32Array(out.buffer, out.byteOffset, n * 2);
  for (let i = 0; i < n; i++) {
    bits[2 * i] = mantLo[i];
    bits[2 * i + 1] = (signs[i] << 31) | (exps[i] << 20) | mantHi[i];
  }
}
