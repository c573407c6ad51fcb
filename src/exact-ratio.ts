// (Moved from src/model/registries/ on 2026-11-27: the read workers convert units with it.)
// Exact rational numbers over bigint, for unit conversion. A conversion factor such as
// °F→K (5/9) or an offset such as 459.67·5/9 has no finite binary (or even decimal)
// expansion, so the registry keeps factors and offsets as exact ratios and rounds only
// once, at the end, to the nearest double (ties to even). A value read from a series is
// taken at its shortest round-trip decimal (what String(x) prints), so 98.6 °F is the
// decimal 98.6 and converts to exactly 37 °C, which plain double arithmetic does not.

export interface Ratio {
  /** Numerator, carries the sign. */
  readonly n: bigint;
  /** Denominator, always > 0; gcd(n, d) = 1. */
  readonly d: bigint;
}

const abs = (x: bigint) => (x < 0n ? -x : x);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a); b = abs(b);
  while (b !== 0n) { const t = a % b; a = b; b = t; }
  return a;
}

export function ratio(n: bigint, d: bigint = 1n): Ratio {
  if (d === 0n) throw new RangeError('BUG: ratio with a zero denominator');
  if (d < 0n) { n = -n; d = -d; }
  const g = gcd(n, d);
  return g > 1n ? { n: n / g, d: d / g } : { n, d };
}

export const ZERO: Ratio = { n: 0n, d: 1n };
export const ONE: Ratio = { n: 1n, d: 1n };

export const add = (a: Ratio, b: Ratio): Ratio => ratio(a.n * b.d + b.n * a.d, a.d * b.d);
export const sub = (a: Ratio, b: Ratio): Ratio => ratio(a.n * b.d - b.n * a.d, a.d * b.d);
export const mul = (a: Ratio, b: Ratio): Ratio => ratio(a.n * b.n, a.d * b.d);
export function div(a: Ratio, b: Ratio): Ratio {
  if (b.n === 0n) throw new RangeError('BUG: division of a ratio by zero');
  return ratio(a.n * b.d, a.d * b.n);
}
export const equals = (a: Ratio, b: Ratio): boolean => a.n === b.n && a.d === b.d;

const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses a decimal ("273.15", "-1e-3"), a fraction ("5/9", "0.001/60") or a product of
 * them ("550*0.3048*4.4482216152605"); null when malformed.
 */
export function parseRatio(text: string): Ratio | null {
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const a = parseRatio(text.slice(0, slash));
    const b = parseRatio(text.slice(slash + 1));
    return a && b && b.n !== 0n ? div(a, b) : null;
  }
  if (text.includes('*')) {
    let out: Ratio | null = ONE;
    for (const part of text.split('*')) { const p = parseRatio(part); out = p && out ? mul(out, p) : null; }
    return out;
  }
  const m = DECIMAL_RE.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const frac = m[3] ?? '';
  const exp = Number(m[4] ?? '0') - frac.length;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 2000) return null;
  let n = BigInt((m[2] || '0') + frac);
  if (m[1] === '-') n = -n;
  return exp >= 0 ? ratio(n * 10n ** BigInt(exp)) : ratio(n, 10n ** BigInt(-exp));
}

/** The decimal a double prints as (its shortest round-trip form), exactly. */
export function fromDouble(x: number): Ratio {
  if (!Number.isFinite(x)) throw new RangeError(`not a finite number: ${x}`);
  return parseRatio(String(x)) as Ratio;
}

/** The text form kept in the database: "n" or "n/d". */
export const formatRatio = (r: Ratio): string => (r.d === 1n ? String(r.n) : `${r.n}/${r.d}`);

function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

const TWO_53 = 1n << 53n;

/**
 * The double nearest to r (ties to even): exact, with one rounding. Scales n/d by a
 * power of two so the integer quotient has 53 significant bits, rounds on the
 * remainder, and rescales (exact, since the quotient fits a double's mantissa).
 */
export function toDouble(r: Ratio): number {
  if (r.n === 0n) return 0;
  const negative = r.n < 0n;
  const n = abs(r.n);
  const d = r.d;
  // Exponent so that n / d / 2^e lies in [2^52, 2^53); the estimate is off by at most one.
  let e = bitLength(n) - bitLength(d) - 53;
  for (;;) {
    if (e < -1074) e = -1074; // subnormal range: fewer significant bits
    const num = e >= 0 ? n : n << BigInt(-e);
    const den = e >= 0 ? d << BigInt(e) : d;
    let q = num / den;
    if (q >= TWO_53 && e >= -1074) { e += 1; continue; }
    const rem2 = (num % den) * 2n;
    if (rem2 > den || (rem2 === den && (q & 1n) === 1n)) q += 1n;
    if (e > 971) return negative ? -Infinity : Infinity;
    const out = Number(q) * 2 ** e;
    return negative ? -out : out;
  }
}
