// Binary LMDB keys. Every key starts with the 16 bytes of the series UUID so that one
// series is one contiguous key range; times follow as 8-byte big-endian int64 with the
// sign bit flipped, so memcmp order equals signed numeric order (STACK-NOTES §3).
import { invalid } from '../errors.js';
import { UUID_RE } from '../uuid.js';

const SIGN = 0x8000000000000000n;
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** 16 raw bytes of a UUID; throws invalid-request naming `field` when malformed. */
export function seriesKey(id: string, field = 'series'): Buffer {
  if (typeof id !== 'string' || !UUID_RE.test(id)) throw invalid(field, 'must be a UUID');
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

export function uuidOf(key: Uint8Array, offset = 0): string {
  const h = Buffer.from(key.buffer, key.byteOffset + offset, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function writeTime(buf: Buffer, offset: number, t: bigint): void {
  buf.writeBigUInt64BE(BigInt.asUintN(64, t) ^ SIGN, offset);
}

export function readTime(buf: Uint8Array, offset: number): bigint {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  return BigInt.asIntN(64, b.readBigUInt64BE(offset) ^ SIGN);
}

/** uuid(16) + chunk first time(8): sealed chunks. */
export function chunkKey(series: Buffer, start: bigint): Buffer {
  const k = Buffer.allocUnsafe(24);
  series.copy(k, 0);
  writeTime(k, 16, start);
  return k;
}

/** uuid(16) + ts(8) + superseded_at(8): one audit record per superseded value. */
export function auditKey(series: Buffer, ts: bigint, supersededAt: bigint): Buffer {
  const k = Buffer.allocUnsafe(32);
  series.copy(k, 0);
  writeTime(k, 16, ts);
  writeTime(k, 24, supersededAt);
  return k;
}

/** uuid(16) + interval code(1) + bucket start(8). */
export function rollupKey(series: Buffer, interval: number, bucketStart: bigint): Buffer {
  const k = Buffer.allocUnsafe(25);
  series.copy(k, 0);
  k[16] = interval;
  writeTime(k, 17, bucketStart);
  return k;
}

/** The smallest and largest keys of one series' range, for prefix scans of any table. */
export function seriesRangeStart(series: Buffer): Buffer {
  return Buffer.concat([series, Buffer.alloc(1, 0)]);
}
export function seriesRangeEnd(series: Buffer): Buffer {
  return Buffer.concat([series, Buffer.alloc(17, 0xff)]);
}
