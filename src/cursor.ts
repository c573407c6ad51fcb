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
  if (!Array.isArray(parsed) || parsed.length !== arity + 1 || parsed[0] !== listing || !parsed.every((p) => typeof p === 'string' || typeof p === 'number')) {
    throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
  }
  return parsed.slice(1).map(String);
}
