// What text the service accepts, decided once for every path, query and body value the
// validator sees, any-JSON values (stored as jsonb) and object keys included:
//   - no C0 control characters other than tab, line feed and carriage return. PostgreSQL
//     cannot store NUL in text or jsonb (a NUL reached it and answered 500 before
//     2026-11-27, issue 25), and the others are never meaningful in names, reasons or notes;
//   - no unpaired UTF-16 surrogate (a JSON escape such as "\ud800"): jsonb refuses it and
//     text would store U+FFFD in its place.
// Everything else in Unicode is accepted. The contract publishes this as `x-text-policy`.
import { ServiceError } from '../errors.js';

/** Matches the first refused code unit: C0 controls but \t \n \r, or a lone surrogate. */
const REFUSED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The refused control characters as an ECMA-262 class, for the contract. */
export const TEXT_REFUSED_PATTERN = '[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]';
/** The pattern the contract gives every free-text string a client sends. */
export const TEXT_ACCEPTED_PATTERN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$';

export const TEXT_POLICY = 'Every string (path, query and body values, object keys, and strings nested in any-JSON values) must be valid Unicode without control characters U+0000-U+0008, U+000B, U+000C, U+000E-U+001F (tab, line feed and carriage return are accepted); otherwise 400 invalid-request names the field.';

/** Throws 400 invalid-request naming the first field whose text (or key) is refused. */
export function assertAcceptedText(where: string, value: unknown): void {
  const bad = findRefused(value, where, 0);
  if (bad) throw new ServiceError('invalid-request', `${bad.field}: ${bad.problem}`, { errors: [bad] });
}

function findRefused(v: unknown, field: string, depth: number): { field: string; problem: string } | null {
  if (typeof v === 'string') return refusedIn(v, field);
  if (typeof v !== 'object' || v === null || depth > 128) return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') continue;
      const bad = findRefused(x, `${field}.${i}`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const keyBad = refusedIn(k, `${field}.${k}`, 'key');
    if (keyBad) return keyBad;
    const x = (v as Record<string, unknown>)[k];
    if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') continue;
    const bad = findRefused(x, `${field}.${k}`, depth + 1);
    if (bad) return bad;
  }
  return null;
}

function refusedIn(s: string, field: string, what: 'value' | 'key' = 'value'): { field: string; problem: string } | null {
  const m = REFUSED.exec(s);
  if (!m) return null;
  const code = m[0].charCodeAt(0);
  const u = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const kind = code >= 0xd800 ? `an unpaired surrogate (${u}); text must be valid Unicode` : `the control character ${u}${code === 0 ? ' (NUL)' : ''} at position ${m.index}; only tab, line feed and carriage return are accepted`;
  return { field, problem: `${what === 'key' ? 'the key contains' : 'contains'} ${kind}` };
}
