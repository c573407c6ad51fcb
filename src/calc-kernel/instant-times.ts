// Absolute int64 times from a base and exact float64 offsets, without a BigInt per point:
// the sum is formed in 32-bit halves and written through a Uint32Array view of the
// BigInt64Array (little-endian, as every platform Node runs on). A backfill day is 86,400
// instants per input; BigInt arithmetic per instant was most of a window's cost.

const TWO32 = 4294967296;

/** out[k] = base + offsets[idx[k]] (or offsets[k] without idx), for k < n; offsets exact integers >= 0 below 2^53. */
export function fillTimes(out: BigInt64Array, base: bigint, offsets: Float64Array, n: number, idx?: Int32Array): void {
  const words = new Uint32Array(out.buffer, out.byteOffset, n * 2);
  const baseLo = Number(BigInt.asUintN(32, base));
  const baseHi = Number(BigInt.asIntN(32, base >> 32n));
  for (let k = 0; k < n; k++) {
    const off = offsets[idx === undefined ? k : idx[k]];
    const offHi = Math.floor(off / TWO32);
    let lo = baseLo + (off - offHi * TWO32);
    let hi = baseHi + offHi;
    if (lo >= TWO32) { lo -= TWO32; hi += 1; }
    words[2 * k] = lo;
    words[2 * k + 1] = hi >>> 0;
  }
}
