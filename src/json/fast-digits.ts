// Digit writers shared by the JSON raw-read bodies (rows: raw-points-json.ts, columns:
// raw-columns-json.ts): plain stores into a byte array at a position the caller tracks,
// with the room reserved beforehand. The exact rules for doubles are those of
// digits.ts (src/json) (whose property tests pin them); these are the unchecked fast forms.
/** "00".."99" as byte pairs. */
export const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) { PAIRS[2 * i] = 48 + ((i / 10) | 0); PAIRS[2 * i + 1] = 48 + (i % 10); }

/** "0000".."9999" as byte quads: the low four digits of the seconds without a division. */
const QUADS = new Uint8Array(40000);
for (let i = 0; i < 10000; i++) for (let k = 0, n = i; k < 4; k++, n = (n / 10) | 0) QUADS[4 * i + 3 - k] = 48 + (n % 10);

/** QUADS as one little-endian word per entry: four digits in one load and one store. */
export const QUADS32 = new Uint32Array(QUADS.buffer);

/** Writes a non-negative int32 (< 2^31) at p; returns the new position. */
export function putUint31(b: Uint8Array, p: number, n: number): number {
  if (n < 10) { b[p] = 48 + n; return p + 1; }
  if (n < 100) { b[p] = PAIRS[2 * n]; b[p + 1] = PAIRS[2 * n + 1]; return p + 2; }
  if (n < 1000) { const q = (n / 100) | 0, r = n - q * 100; b[p] = 48 + q; b[p + 1] = PAIRS[2 * r]; b[p + 2] = PAIRS[2 * r + 1]; return p + 3; }
  let len = 4;
  for (let t = 10000; len < 10 && n >= t; t *= 10) len++;
  let e = p + len;
  while (n >= 100) { const q = (n / 100) | 0, r = n - q * 100; b[--e] = PAIRS[2 * r + 1]; b[--e] = PAIRS[2 * r]; n = q; }
  if (n >= 10) { b[--e] = PAIRS[2 * n + 1]; b[--e] = PAIRS[2 * n]; } else b[--e] = 48 + n;
  return p + len;
}

/** Writes a non-negative integer double (< 2^53) at p; returns the new position. */
export function putUint53(b: Uint8Array, p: number, n: number): number {
  if (n < 2147483648) return putUint31(b, p, n);
  // split off the low nine digits so both halves fit int32 arithmetic
  const hi = Math.floor(n / 1e9);
  p = putUint53(b, p, hi);
  return putNine(b, p, n - hi * 1e9);
}

/** Exactly nine digits of n (0 <= n < 1e9), zero-padded. */
export function putNine(b: Uint8Array, p: number, n: number): number {
  let x = n | 0;
  let q = (x / 100) | 0, r = x - q * 100;
  b[p + 7] = PAIRS[2 * r]; b[p + 8] = PAIRS[2 * r + 1]; x = q;
  q = (x / 100) | 0; r = x - q * 100;
  b[p + 5] = PAIRS[2 * r]; b[p + 6] = PAIRS[2 * r + 1]; x = q;
  q = (x / 100) | 0; r = x - q * 100;
  b[p + 3] = PAIRS[2 * r]; b[p + 4] = PAIRS[2 * r + 1]; x = q;
  q = (x / 100) | 0; r = x - q * 100;
  b[p + 1] = PAIRS[2 * r]; b[p + 2] = PAIRS[2 * r + 1];
  b[p] = 48 + q;
  return p + 9;
}

/**
 * A finite double's JSON text at p when a fast form exists (integers up to 2^53 and
 * values with at most six decimals whose scaled integer divides back to exactly the same
 * double); returns -1 otherwise. Same rules as writeDouble in digits.ts (src/json), so the text
 * parses back to the same double (see the property tests there).
 */
export function putDoubleFast(b: Uint8Array, p: number, v: number): number {
  const a = v < 0 ? -v : v;
  if (Number.isInteger(v) && a <= 9007199254740992) {
    if (v === 0) {
      if (1 / v < 0) { b[p] = 45; b[p + 1] = 48; return p + 2; }
      b[p] = 48; return p + 1;
    }
    if (v < 0) b[p++] = 45;
    return putUint53(b, p, a);
  }
  if (a < 9e9 && a >= 1e-6) {
    // Six decimals at most: m / 1e6 must give back exactly this double, then the decimal
    // text of m / 10^6 (trailing zeros dropped: the same real number) parses back to it.
    const m = Math.round(a * 1e6);
    if (m / 1e6 !== a) return -1;
    if (v < 0) b[p++] = 45;
    // m / 10^6 rounds to a, a non-integer, so no integer lies between them: same floor
    const ip = Math.floor(a);
    p = ip < 2147483648 ? putUint31(b, p, ip) : putUint53(b, p, ip);
    b[p] = 46;
    const f = m - ip * 1e6; // 1..999999 (0 would make v an integer)
    const f1 = (f / 10000) | 0, r = f - f1 * 10000;
    b[p + 1] = PAIRS[2 * f1]; b[p + 2] = PAIRS[2 * f1 + 1];
    // trailing zeros dropped by digit pair (plant values have one to three decimals),
    // instead of a byte-by-byte loop over six digits
    if (r === 0) return b[p + 2] === 48 ? p + 2 : p + 3;
    const f2 = (r / 100) | 0, f3 = r - f2 * 100;
    b[p + 3] = PAIRS[2 * f2]; b[p + 4] = PAIRS[2 * f2 + 1];
    if (f3 === 0) return b[p + 4] === 48 ? p + 4 : p + 5;
    b[p + 5] = PAIRS[2 * f3]; b[p + 6] = PAIRS[2 * f3 + 1];
    return b[p + 6] === 48 ? p + 6 : p + 7;
  }
  return -1;
}

export function putConst(b: Uint8Array, p: number, c: number[]): number {
  for (let i = 0; i < c.length; i++) b[p + i] = c[i];
  return p + c.length;
}

