// The validating pass of the JSON codec: one loop over the body's bytes that checks
// everything a request body must satisfy before any value is built. Strict UTF-8,
// the RFC 8259 grammar, the nesting limit, forbidden and duplicate member names, and
// number range. It builds nothing; it answers whether the body holds an integer literal
// that a double cannot carry exactly, so the caller can pick JSON.parse or the exact
// builder. Iterative: the nesting limit is checked before a container is entered, so
// no input can grow the JS stack.
import { fail } from './fail.js';
import { scanString, scanKey, keyHash, keyEscaped, unsafeIntegerDigits, asciiText } from './lexeme.js';
import { MemberNames } from './member-names.js';

const ARRAY = 1;
const OBJECT = 2;

/** Scratch reused across calls: parsing is synchronous, so one set per thread is enough. */
let kinds = new Uint8Array(64);
const names = new MemberNames();

/**
 * Validates `buf` as one JSON text. Throws ServiceError('invalid-json') naming the byte
 * offset of the first problem. Returns true when some integer literal lies outside the
 * safe-integer range (the caller must then build values itself to keep it exact).
 */
export function scanJson(buf: Buffer, maxDepth: number): boolean {
  const n = buf.length;
  let unsafe = false;
  let depth = 0;
  names.reset();
  let i = skipWs(buf, 0, n);
  if (i >= n) fail(i, n === 0 ? 'the body is empty' : 'the body holds only whitespace');
  if (buf[i] === 0xef && buf[i + 1] === 0xbb && buf[i + 2] === 0xbf) fail(i, 'a byte order mark is not allowed');

  for (;;) {
    // A value starts at i (whitespace already skipped).
    if (i >= n) fail(i, 'unexpected end of input, expected a value');
    const c = buf[i];
    if (c === 0x22) {
      i = scanString(buf, i + 1, n);
    } else if (c === 0x7b || c === 0x5b) {
      if (depth >= maxDepth) fail(i, `nesting deeper than the limit of ${maxDepth}`);
      if (depth === kinds.length) {
        const grown = new Uint8Array(Math.min(kinds.length * 2, maxDepth));
        grown.set(kinds);
        kinds = grown;
      }
      i = skipWs(buf, i + 1, n);
      if (c === 0x5b) {
        kinds[depth++] = ARRAY;
        if (buf[i] !== 0x5d) continue;
        depth--;
        i++;
      } else {
        kinds[depth++] = OBJECT;
        names.open();
        if (buf[i] !== 0x7d) {
          i = scanMember(buf, i, n);
          continue;
        }
        names.close();
        depth--;
        i++;
      }
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(buf, i, n);
      if (numberUnsafe) unsafe = true;
    } else if (c === 0x74) {
      i = scanLiteral(buf, i, n, TRUE);
    } else if (c === 0x66) {
      i = scanLiteral(buf, i, n, FALSE);
    } else if (c === 0x6e) {
      i = scanLiteral(buf, i, n, NULL);
    } else {
      fail(i, `expected a value, found ${describe(buf, i, n)}`);
    }

    // After a value: close containers until one expects another element.
    for (;;) {
      i = skipWs(buf, i, n);
      if (depth === 0) {
        if (i !== n) fail(i, `unexpected ${describe(buf, i, n)} after the JSON value`);
        return unsafe;
      }
      if (i >= n) fail(i, `unexpected end of input inside ${kinds[depth - 1] === ARRAY ? 'an array' : 'an object'}`);
      const d = buf[i];
      if (kinds[depth - 1] === ARRAY) {
        if (d === 0x2c) { i = skipWs(buf, i + 1, n); break; }
        if (d === 0x5d) { depth--; i++; continue; }
        fail(i, `expected ',' or ']' in an array, found ${describe(buf, i, n)}`);
      } else {
        if (d === 0x2c) { i = scanMember(buf, skipWs(buf, i + 1, n), n); break; }
        if (d === 0x7d) { names.close(); depth--; i++; continue; }
        fail(i, `expected ',' or '}' in an object, found ${describe(buf, i, n)}`);
      }
    }
  }
}

/** Reads `"name" :` at i and returns the offset of the member's value. */
function scanMember(buf: Buffer, i: number, n: number): number {
  if (i >= n) fail(i, 'unexpected end of input, expected a member name');
  if (buf[i] !== 0x22) fail(i, `expected a quoted member name, found ${describe(buf, i, n)}`);
  const end = scanKey(buf, i + 1, n);
  names.add(buf, i, end, keyHash, keyEscaped);
  i = skipWs(buf, end, n);
  if (i >= n) fail(i, 'unexpected end of input, expected \':\'');
  if (buf[i] !== 0x3a) fail(i, `expected ':' after a member name, found ${describe(buf, i, n)}`);
  return skipWs(buf, i + 1, n);
}

function skipWs(buf: Buffer, i: number, n: number): number {
  while (i < n) {
    const c = buf[i];
    if (c > 0x20 || (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09)) return i;
    i++;
  }
  return i;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function scanLiteral(buf: Buffer, i: number, n: number, word: number[]): number {
  for (let k = 0; k < word.length; k++) {
    if (i + k >= n || buf[i + k] !== word[k]) fail(i, `expected '${String.fromCharCode(...word)}', found ${describe(buf, i + k, n)}`);
  }
  return i + word.length;
}

/** Side output of scanNumber: whether the literal was an integer beyond ±(2^53-1). */
let numberUnsafe = false;

/**
 * RFC 8259 number at i. Returns the offset after it. Literals whose magnitude a double
 * cannot hold (they would become ±Infinity) are refused: nothing downstream can use them
 * and the writer could not write them back.
 */
function scanNumber(buf: Buffer, start: number, n: number): number {
  let i = start;
  if (buf[i] === 0x2d) i++;
  const intStart = i;
  if (i >= n) fail(i, 'unexpected end of input in a number');
  let c = buf[i];
  if (c === 0x30) {
    i++;
    if (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) fail(i - 1, 'a number must not have a leading zero');
  } else if (c >= 0x31 && c <= 0x39) {
    i++;
    while (i < n && (c = buf[i]) >= 0x30 && c <= 0x39) i++;
  } else {
    fail(i, `expected a digit in a number, found ${describe(buf, i, n)}`);
  }
  const intEnd = i;
  let integer = true;
  if (i < n && buf[i] === 0x2e) {
    integer = false;
    i++;
    if (i >= n || buf[i] < 0x30 || buf[i] > 0x39) fail(i, `expected a digit after the decimal point, found ${describe(buf, i, n)}`);
    while (i < n && (c = buf[i]) >= 0x30 && c <= 0x39) i++;
  }
  let exponent = false;
  if (i < n && (buf[i] === 0x65 || buf[i] === 0x45)) {
    integer = false;
    exponent = true;
    i++;
    if (i < n && (buf[i] === 0x2b || buf[i] === 0x2d)) i++;
    if (i >= n || buf[i] < 0x30 || buf[i] > 0x39) fail(i, `expected a digit in the exponent, found ${describe(buf, i, n)}`);
    while (i < n && (c = buf[i]) >= 0x30 && c <= 0x39) i++;
  }
  // 309 integer digits is the first length that can exceed Number.MAX_VALUE.
  if (exponent || intEnd - intStart >= 309) {
    const value = Number(asciiText(buf, start, i));
    if (!Number.isFinite(value)) fail(start, 'the number is beyond the range of a double');
  }
  numberUnsafe = integer && unsafeIntegerDigits(buf, intStart, intEnd);
  return i;
}

/** A short, printable description of the byte at i for error messages. */
export function describe(buf: Buffer, i: number, n: number): string {
  if (i >= n) return 'the end of input';
  const c = buf[i];
  if (c >= 0x21 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
  return `byte 0x${c.toString(16).padStart(2, '0')}`;
}
