// Opaque keyset cursors: base64url of a small JSON tuple tagged with the listing it
// belongs to, so a cursor from one listing is refused by another (400 invalid-cursor).
import { ServiceError } from './errors.js';

export function encodeCursor(listing: string, key: Array<string | number>): string {
  return Buffer.from(JSON.stringify([listing, ...key])).toString('base64url');
}

export function decodeCursor(listing: string, cursor: string, arity: number): string[] {
  let parsed: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued by this service');
  }
  if (!Array.isArray(parsed) || parsed.length !== arity + 1 || parsed[0] !== listing || !parsed.every((p) => typeof p === 'number' || (typeof p === 'string' && !CONTROL.test(p)))) {
    throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
  }
  return parsed.slice(1).map(String);
}

/** Keys this service issues never hold control characters (the text policy refuses them), and PostgreSQL cannot take a NUL. */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const INT64_MAX = 2n ** 63n - 1n;

/** A cursor part that must be a non-negative int64 (a time, an id); a forged one is 400 invalid-cursor, never a database error. */
export function cursorInt64(part: string): bigint {
  if (/^[0-9]{1,19}$/.test(part)) {
    const v = BigInt(part);
    if (v <= INT64_MAX) return v;
  }
  throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
}
