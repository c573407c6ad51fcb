// int64 nanosecond times without BigInt in per-point loops. A BigInt64Array element read
// allocates a heap BigInt, so the write path reads the array's two 32-bit words instead:
// t - base = (hi - hiBase) * 2^32 + (lo - loBase), every step an exact double while the
// difference stays below 2^52 (callers check, or stay far inside it by the chunk span).
const TWO32 = 4294967296;
/** Differences at or above this are refused by offsetsFrom (exactness margin below 2^53). */
export const EXACT_SPAN = 2 ** 52;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function wordsOf(a: BigInt64Array): Int32Array {
  return new Int32Array(a.buffer, a.byteOffset, a.length * 2);
}

function splitBase(base: bigint): { hi: number; lo: number } {
  return { hi: Number(BigInt.asIntN(64, base) >> 32n), lo: Number(base & 0xffffffffn) };
}

/**
 * out[at + k] = ts[from + k] - base for k in [0, to - from), exact. Returns false (out
 * partly written) when some |difference| reaches EXACT_SPAN; the caller then takes a
 * BigInt path for that rare batch.
 */
export function offsetsFrom(ts: BigInt64Array, from: number, to: number, base: bigint, out: Float64Array, at: number): boolean {
  if (!LITTLE_ENDIAN) {
    for (let i = from, j = at; i < to; i++, j++) {
      const d = ts[i] - base;
      if (d >= BigInt(EXACT_SPAN) || d <= -BigInt(EXACT_SPAN)) return false;
      out[j] = Number(d);
    }
    return true;
  }
  const w = wordsOf(ts);
  const b = splitBase(base);
  for (let i = from, j = at; i < to; i++, j++) {
    const d = (w[2 * i + 1] - b.hi) * TWO32 + ((w[2 * i] >>> 0) - b.lo);
    if (!(d < EXACT_SPAN && d > -EXACT_SPAN)) return false;
    out[j] = d;
  }
  return true;
}

/** dst[j] = src[i] for each kept index (keep[0..n)), copying words, never making BigInts. */
export function gatherInt64(src: BigInt64Array, keep: Int32Array, n: number, dst: BigInt64Array): void {
  if (!LITTLE_ENDIAN) { for (let j = 0; j < n; j++) dst[j] = src[keep[j]]; return; }
  const s = wordsOf(src), d = wordsOf(dst);
  for (let j = 0; j < n; j++) {
    const i = keep[j];
    d[2 * j] = s[2 * i];
    d[2 * j + 1] = s[2 * i + 1];
  }
}

/** buf when it holds n doubles, else a larger fresh one (module scratch buffers grow, never shrink). */
export function atLeast(buf: Float64Array, n: number): Float64Array {
  return buf.length >= n ? buf : new Float64Array(Math.max(n, buf.length * 2));
}

/** out[i] = the double nearest a[i] (as Number(a[i]): one correctly rounded addition of exact parts). */
export function int64ToNumbers(a: BigInt64Array, n: number, out: Float64Array): void {
  if (!LITTLE_ENDIAN) { for (let i = 0; i < n; i++) out[i] = Number(a[i]); return; }
  const w = wordsOf(a);
  for (let i = 0; i < n; i++) out[i] = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
}
