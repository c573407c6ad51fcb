// The points a harness collector sends are a pure function of (stream, index): a point's time
// says its index, and its index says its value and quality. So the checker can tell for any
// stored point whether it is one that was sent, with the value and quality it was sent with,
// without keeping the points themselves — only which index ranges were acknowledged.
import type { ValueType } from '../../src/storage/encoding/chunk-types.js';
import type { BatchColumns } from '../../src/ingest/batch-columns.js';

export interface PlannedStream {
  /** Stream name inside its collector (the staging series is `<collector>/<name>`). */
  name: string;
  type: Exclude<ValueType, 'enum'>;
  lane: 'LIVE' | 'BACKFILL';
  /** Time of index 0 and the step between indexes (ns). */
  t0: bigint;
  stepNs: bigint;
  /** Salt of the value function, so two streams never carry the same values. */
  salt: number;
}

export function timeOf(s: PlannedStream, k: number): bigint {
  return s.t0 + BigInt(k) * s.stepNs;
}

/** Index of a time, or -1 when the time is not one of the stream's grid points. */
export function indexOf(s: PlannedStream, t: bigint): number {
  const d = t - s.t0;
  if (d < 0n || d % s.stepNs !== 0n) return -1;
  return Number(d / s.stepNs);
}

/** Mostly good (192), some uncertain (64) and some bad (0) points, so quality is checked too. */
export function qualityOf(k: number): number {
  return k % 97 === 0 ? 0 : k % 89 === 0 ? 64 : 192;
}

export function float64Of(s: PlannedStream, k: number): number {
  return Math.sin(k * 0.001 + s.salt) * 100 + (k % 13) * 0.25;
}

export function int64Of(s: PlannedStream, k: number): bigint {
  return BigInt(k) * 3n + BigInt(s.salt) * 1_000_000_007n;
}

export function booleanOf(s: PlannedStream, k: number): boolean {
  return ((k >> 3) + s.salt) % 2 === 1;
}

export function stringOf(s: PlannedStream, k: number): string {
  return `${s.salt}:${k % 1009}`;
}

/** Points k0 .. k0+n-1 as batch columns. */
export function columnsOf(s: PlannedStream, k0: number, n: number): BatchColumns {
  const times = new BigInt64Array(n);
  const quality = new Uint32Array(n);
  for (let i = 0; i < n; i++) { times[i] = timeOf(s, k0 + i); quality[i] = qualityOf(k0 + i); }
  let values: BatchColumns['values'];
  switch (s.type) {
    case 'float64': { const v = new Float64Array(n); for (let i = 0; i < n; i++) v[i] = float64Of(s, k0 + i); values = v; break; }
    case 'int64': { const v = new BigInt64Array(n); for (let i = 0; i < n; i++) v[i] = int64Of(s, k0 + i); values = v; break; }
    case 'boolean': { const v = new Uint8Array(n); for (let i = 0; i < n; i++) v[i] = booleanOf(s, k0 + i) ? 1 : 0; values = v; break; }
    default: { const v: string[] = new Array(n); for (let i = 0; i < n; i++) v[i] = stringOf(s, k0 + i); values = v; }
  }
  return { times, values, quality };
}

/** The value of point k in the form the storage reader returns it, for comparison and checksums. */
export function expectedValue(s: PlannedStream, k: number): number | bigint | boolean | string {
  switch (s.type) {
    case 'float64': return float64Of(s, k);
    case 'int64': return int64Of(s, k);
    case 'boolean': return booleanOf(s, k);
    default: return stringOf(s, k);
  }
}
