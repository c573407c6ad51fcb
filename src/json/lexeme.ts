// Byte-level pieces of the JSON scanner: strings (with strict UTF-8 and escape checks),
// member names (the same, plus a hash for duplicate detection) and the integer range
// rule shared by the scanner and the exact builder.
import { fail } from './fail.js';

/**
 * Side outputs of scanKey, read right after the call. A module variable instead of a
 * returned object keeps the per-member path free of allocation.
 */
export let keyHash = 0;
export let keyEscaped = false;

/** Scans string content from i (just after the opening quote); returns the offset after the closing quote. */
/** Bytes that end the plain run of a string: quote, backslash, control bytes, non-ASCII. */
const STRING_STOP = new Uint8Array(256);
for (let b = 0; b < 256; b++) STRING_STOP[b] = b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x80 ? 1 : 0;

export function scanString(buf: Uint8Array, i: number, n: number): number {
  const open = i - 1;
  while (i < n) {
    const c = buf[i];
    // One table load for the common byte, instead of four comparisons.
    if (STRING_STOP[c] === 0) { i++; continue; }
    if (c === 0x22) return i + 1;
    if (c === 0x5c) i = scanEscape(buf, i, n);
    else if (c < 0x20) fail(i, `unescaped control character 0x${c.toString(16).padStart(2, '0')} in a string`);
    else if (c < 0x80) i++;
    else i = scanUtf8(buf, i, n);
  }
  return fail(open, 'unterminated string');
}

/** As scanString, and sets keyHash (FNV-1a over the raw bytes) and keyEscaped. */
export function scanKey(buf: Uint8Array, i: number, n: number): number {
  const open = i - 1;
  let h = 0x811c9dc5 | 0;
  let escaped = false;
  while (i < n) {
    const c = buf[i];
    if (c === 0x22) {
      keyHash = h;
      keyEscaped = escaped;
      return i + 1;
    }
    if (c === 0x5c) {
      escaped = true;
      i = scanEscape(buf, i, n);
    } else if (c < 0x20) {
      fail(i, `unescaped control character 0x${c.toString(16).padStart(2, '0')} in a member name`);
    } else if (c < 0x80) {
      h = Math.imul(h ^ c, 0x01000193);
      i++;
    } else {
      const end = scanUtf8(buf, i, n);
      for (; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
    }
  }
  return fail(open, 'unterminated member name');
}

/** FNV-1a over the UTF-8 form of a decoded name: equal to scanKey's hash of the unescaped spelling. */
export function hashName(name: string): number {
  const bytes = Buffer.from(name, 'utf8');
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h;
}

/** Validates the escape at i (the backslash); returns the offset after it. */
function scanEscape(buf: Uint8Array, i: number, n: number): number {
  if (i + 1 >= n) fail(i, 'unterminated escape sequence');
  const e = buf[i + 1];
  if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) return i + 2;
  if (e !== 0x75) fail(i, `invalid escape sequence '\\${e >= 0x21 && e < 0x7f ? String.fromCharCode(e) : '?'}'`);
  const unit = hex4(buf, i + 2, n);
  if (unit >= 0xdc00 && unit <= 0xdfff) fail(i, `lone low surrogate \\u${unit.toString(16)} in a string`);
  if (unit < 0xd800 || unit > 0xdbff) return i + 6;
  // A high surrogate must be followed at once by a low one: lone halves are not text.
  if (i + 7 < n && buf[i + 6] === 0x5c && buf[i + 7] === 0x75) {
    const low = hex4(buf, i + 8, n);
    if (low >= 0xdc00 && low <= 0xdfff) return i + 12;
  }
  return fail(i, `lone high surrogate \\u${unit.toString(16)} in a string`);
}

function hex4(buf: Uint8Array, i: number, n: number): number {
  if (i + 4 > n) fail(i, 'truncated \\u escape');
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = buf[k];
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else return fail(k, 'a \\u escape needs four hexadecimal digits');
    v = (v << 4) | d;
  }
  return v;
}

/**
 * Validates one multi-byte UTF-8 sequence at i (lead byte >= 0x80) per Unicode table 3-7:
 * no overlong forms, no surrogates (ED A0..BF), nothing above U+10FFFF, no truncation.
 * Returns the offset after it.
 */
export function scanUtf8(buf: Uint8Array, i: number, n: number): number {
  const c = buf[i];
  let len: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c === 0xe0) lo = 0xa0;
    else if (c === 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c === 0xf0) lo = 0x90;
    else if (c === 0xf4) hi = 0x8f;
  } else {
    return fail(i, `invalid UTF-8: byte 0x${c.toString(16)} cannot start a character`);
  }
  if (i + len > n) fail(i, 'invalid UTF-8: truncated character at the end of input');
  const c1 = buf[i + 1];
  if (c1 < lo || c1 > hi) fail(i, `invalid UTF-8: byte 0x${c1.toString(16)} after lead byte 0x${c.toString(16)} (overlong, surrogate, or truncated)`);
  for (let k = 2; k < len; k++) {
    const ck = buf[i + k];
    if (ck < 0x80 || ck > 0xbf) fail(i, `invalid UTF-8: byte 0x${ck.toString(16)} is not a continuation byte`);
  }
  return i + len;
}

const MAX_SAFE_DIGITS = [0x39, 0x30, 0x30, 0x37, 0x31, 0x39, 0x39, 0x32, 0x35, 0x34, 0x37, 0x34, 0x30, 0x39, 0x39, 0x31]; // "9007199254740991"

/**
 * Whether the integer digits buf[start, end) (no sign, no leading zero) exceed 2^53-1,
 * decided on the digits themselves: a rounded double cannot tell 2^53+1 from 2^53.
 */
export function unsafeIntegerDigits(buf: Uint8Array, start: number, end: number): boolean {
  const len = end - start;
  if (len < 16) return false;
  if (len > 16) return true;
  for (let k = 0; k < 16; k++) {
    const d = buf[start + k];
    if (d !== MAX_SAFE_DIGITS[k]) return d > MAX_SAFE_DIGITS[k];
  }
  return false;
}

/** The bytes buf[start, end) as a string, for ASCII-only spans (number literals). */
export function asciiText(buf: Buffer, start: number, end: number): string {
  return buf.toString('latin1', start, end);
}

/** Decodes an already validated string token buf[start, end) including its quotes. */
export function stringText(buf: Buffer, start: number, end: number, escaped: boolean): string {
  // Escapes are rare in names and values; JSON.parse decodes them exactly as the fast path would.
  return escaped ? (JSON.parse(buf.toString('utf8', start, end)) as string) : buf.toString('utf8', start + 1, end - 1);
}
