// The two bearer secrets the service hands out: session cookie values and service
// tokens. Both are "<id>.<secret>": the id (the session_id or token_id, not secret)
// finds the record, and only SHA-256(secret) is stored and compared in constant time.
// The secret is 32 random bytes (256 bits), so a fast hash is as good as a slow one:
// nobody can brute-force 2^256, unlike a human password.
//
// Service tokens start with `svc_` so secret scanners can recognise a leaked one:
//   svc_<token_id as 32 hex>_<secret as 43 base64url chars>      (80 chars)
// Session cookie values have no prefix (they never leave the browser's cookie jar):
//   <session_id as 32 hex>.<secret as 43 base64url chars>       (76 chars)
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'svc_';
const SECRET_BYTES = 32;
const SECRET_CHARS = 43; // base64url of 32 bytes, unpadded
const HEX32 = /^[0-9a-f]{32}$/;
const B64URL = /^[A-Za-z0-9_-]{43}$/;

export interface MintedSecret {
  /** The whole credential, shown once. */
  plaintext: string;
  /** SHA-256 of the secret part: the only thing stored. */
  secretHash: Buffer;
}

export interface ParsedSecret { id: string; secret: string }

const uuidToHex = (uuid: string) => uuid.replace(/-/g, '').toLowerCase();
const hexToUuid = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with the stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const h = hashSecret(secret);
  return h.length === storedHash.length && timingSafeEqual(h, storedHash);
}

function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

export function mintServiceToken(tokenId: string): MintedSecret {
  const secret = newSecret();
  return { plaintext: `${TOKEN_PREFIX}${uuidToHex(tokenId)}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseServiceToken(token: string): ParsedSecret | null {
  if (token.length !== TOKEN_PREFIX.length + 33 + SECRET_CHARS || !token.startsWith(TOKEN_PREFIX)) return null;
  const hex = token.slice(4, 36);
  const secret = token.slice(37);
  if (token[36] !== '_' || !HEX32.test(hex) || !B64URL.test(secret)) return null;
  return { id: hexToUuid(hex), secret };
}

export function mintSessionCookie(sessionId: string): MintedSecret {
  const secret = newSecret();
  return { plaintext: `${uuidToHex(sessionId)}.${secret}`, secretHash: hashSecret(secret) };
}

export function parseSessionCookie(value: string): ParsedSecret | null {
  if (value.length !== 33 + SECRET_CHARS || value[32] !== '.') return null;
  const hex = value.slice(0, 32);
  const secret = value.slice(33);
  if (!HEX32.test(hex) || !B64URL.test(secret)) return null;
  return { id: hexToUuid(hex), secret };
}

export const SESSION_COOKIE = 'service_session';

/** The value of `service_session` in a Cookie header, or undefined. Ignores every other cookie. */
export function sessionCookieFrom(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Set-Cookie value for a new session; Secure when the client reached us over TLS. */
export function sessionSetCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Set-Cookie value that makes the browser drop the session cookie. */
export function sessionClearCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
}
