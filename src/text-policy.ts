// What text the service accepts, decided once for every path, query and body value the
// validator sees, any-JSON values (stored as jsonb) and object keys included, and for the
// stream names and enum sets a collector declares over gRPC:
//   - no C0 control characters other than tab, line feed and carriage return. PostgreSQL
//     cannot store NUL in text or jsonb (a NUL reached it and answered 500 before
//     2026-11-27, issue 25), and the others are never meaningful in names, reasons or notes;
//   - no unpaired UTF-16 surrogate (a JSON escape such as "\ud800"): jsonb refuses it and
//     text would store U+FFFD in its place.
// Everything else in Unicode is accepted. The contract publishes this as `x-text-policy`.
import { ServiceError } from './errors.js';

/** Matches the first refused code unit: C0 controls but \t \n \r, or a lone surrogate. */
const REFUSED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The refused control characters as an ECMA-262 class, for the contract. */
export const TEXT_REFUSED_PATTERN = '[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]';
/** The pattern the contract gives every free-text string a client sends. */
export const TEXT_ACCEPTED_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$';

export const TEXT_POLICY = 'Every string (path, query and body values, object keys, and strings nested in any-JSON values) must be valid Unicode without control characters U+0000-U+0008, U+000B, U+000C, U+000E-U+001F (tab, line feed and carriage return are accepted); otherwise 400 invalid-request names the field.';

/** Throws 400 invalid-request naming the first field whose text (or key) is refused. */
export function assertAcceptedText(where: string, value: unknown): void {
  const bad = findRefused(value, 0);
  if (!bad) return;
  const field = bad.path.length ? `${where}.${bad.path.reverse().join('.')}` : where;
  const problem = `${bad.key ? 'the key contains' : 'contains'} ${bad.problem}`;
  throw new ServiceError('invalid-request', `${field}: ${problem}`, { errors: [{ field, problem }] });
}

/** A refusal; `path` is filled leaf first on the way back up, so nothing is built for accepted values. */
interface Refusal { path: Array<string | number>; problem: string; key: boolean }

function findRefused(v: unknown, depth: number): Refusal | null {
  if (typeof v === 'string') return suspicious(v) ? refusedIn(v, false) : null;
  if (typeof v !== 'object' || v === null || depth > 128) return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean' || x === null) continue;
      const bad = findRefused(x, depth + 1);
      if (bad) { bad.path.push(i); return bad; }
    }
    return null;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (suspicious(k)) {
      const bad = refusedIn(k, true);
      if (bad) { bad.path.push(k); return bad; }
    }
    const x = (v as Record<string, unknown>)[k];
    if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean' || x === null) continue;
    const bad = findRefused(x, depth + 1);
    if (bad) { bad.path.push(k); return bad; }
  }
  return null;
}

/**
 * A code-unit scan with no allocation: true when the string holds a control character or
 * any surrogate (the regex then tells a pair from a lone one). Field names are built only
 * on the way back from a refusal.
 */
function suspicious(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 && c !== 0x0a && c !== 0x0d : c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}

/** What is wrong with one text value (a collector's stream name, say), or null when it is accepted. */
export function refusedTextProblem(s: string): string | null {
  return suspicious(s) ? refusedIn(s, false)?.problem ?? null : null;
}

function refusedIn(s: string, key: boolean): Refusal | null {
  const m = REFUSED.exec(s);
  if (!m) return null;
  const code = m[0].charCodeAt(0);
  const u = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const problem = code >= 0xd800 ? `an unpaired surrogate (${u}); text must be valid Unicode` : `the control character ${u}${code === 0 ? ' (NUL)' : ''} at position ${m.index}; only tab, line feed and carriage return are accepted`;
  return { path: [], problem, key };
}
