// Canonical JSON for hashing previews: object keys sorted by UTF-16 code unit order
// (JavaScript's default sort), no whitespace, strings escaped exactly as
// JSON.stringify escapes them, arrays in their order. Previews carry int64 values as
// exact strings, so no number formatting question arises; a bigint is written as its
// digits for completeness. preview_hash = lowercase hex SHA-256 of the UTF-8 bytes.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'boolean': return value ? 'true' : 'false';
    case 'bigint': return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`BUG: canonical JSON of a non-finite number ${value}`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
    }
    default:
      throw new Error(`BUG: canonical JSON of a ${typeof value}`);
  }
}

export function previewHash(preview: unknown): string {
  return createHash('sha256').update(canonicalJson(preview), 'utf8').digest('hex');
}
