// The exact builder: turns a body that scanJson has already accepted into values, with
// integer literals beyond ±(2^53-1) as bigint. It trusts the scan (grammar, UTF-8, names,
// depth) and so checks nothing itself; calling it on unscanned bytes is a bug. It is
// iterative so its stack use does not depend on the nesting depth.
import { asciiText, stringText, unsafeIntegerDigits } from './lexeme.js';

type Container = unknown[] | Record<string, unknown>;

/** Builds the value of a scanned JSON text. */
export function buildJson(buf: Buffer): unknown {
  const n = buf.length;
  const containers: Container[] = [];
  const isArray: boolean[] = [];
  const pendingNames: string[] = [];
  let depth = 0;
  let i = skipWs(buf, 0, n);
  let value: unknown;
  for (;;) {
    const c = buf[i];
    if (c === 0x22) {
      const end = stringEnd(buf, i + 1);
      value = stringText(buf, i, end, tokenEscaped);
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      const array = c === 0x5b;
      const container: Container = array ? [] : {};
      i = skipWs(buf, i + 1, n);
      if (buf[i] !== (array ? 0x5d : 0x7d)) {
        containers[depth] = container;
        isArray[depth] = array;
        if (!array) i = readName(buf, i, n, pendingNames, depth);
        depth++;
        continue;
      }
      value = container;
      i++;
    } else if (c === 0x74) {
      value = true;
      i += 4;
    } else if (c === 0x66) {
      value = false;
      i += 5;
    } else if (c === 0x6e) {
      value = null;
      i += 4;
    } else {
      const start = i;
      let integer = true;
      if (c === 0x2d) i++;
      const intStart = i;
      while (i < n) {
        const d = buf[i];
        if (d >= 0x30 && d <= 0x39) i++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) { integer = false; i++; }
        else break;
      }
      const text = asciiText(buf, start, i);
      value = integer && unsafeIntegerDigits(buf, intStart, i) ? BigInt(text) : Number(text);
    }

    // Attach the finished value, closing every container it completes.
    for (;;) {
      if (depth === 0) return value;
      const top = depth - 1;
      if (isArray[top]) (containers[top] as unknown[]).push(value);
      else (containers[top] as Record<string, unknown>)[pendingNames[top]] = value;
      i = skipWs(buf, i, n);
      if (buf[i] === 0x2c) {
        i = skipWs(buf, i + 1, n);
        if (!isArray[top]) i = readName(buf, i, n, pendingNames, top);
        break;
      }
      value = containers[top];
      containers[top] = EMPTY; // drop the reference so finished subtrees are not kept alive by the stack
      depth--;
      i++;
    }
  }
}

const EMPTY: Container = [];

/** Set by stringEnd: whether the token just scanned holds a backslash. */
let tokenEscaped = false;

/** Offset after the closing quote of a scanned string whose content starts at i. */
function stringEnd(buf: Buffer, i: number): number {
  let escaped = false;
  for (;;) {
    const c = buf[i];
    if (c === 0x22) break;
    if (c === 0x5c) { escaped = true; i += 2; } else i++;
  }
  tokenEscaped = escaped;
  return i + 1;
}

/** Reads `"name" :` at i into pendingNames[depth]; returns the offset of the value. */
function readName(buf: Buffer, i: number, n: number, pendingNames: string[], depth: number): number {
  const end = stringEnd(buf, i + 1);
  pendingNames[depth] = stringText(buf, i, end, tokenEscaped);
  i = skipWs(buf, end, n);
  return skipWs(buf, i + 1, n); // past ':'
}

function skipWs(buf: Buffer, i: number, n: number): number {
  while (i < n) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}
