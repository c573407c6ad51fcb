// Query strings arrive as text; the route's query schema says what each parameter is.
// Coercion is by that schema only (int64 through BigInt, so 19-digit times stay exact),
// and anything that does not look like its type is left as text for the validator to
// reject with the parameter's name.
import { Kind, type TSchema } from '@sinclair/typebox';

const INT_RE = /^-?(0|[1-9][0-9]*)$/;
const NUM_RE = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER), MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function coerce(schema: TSchema | undefined, raw: string): unknown {
  if (!schema) return raw;
  const kind = schema[Kind] as string | undefined;
  switch (kind) {
    case 'Int64': {
      if (!INT_RE.test(raw)) return raw;
      // 15 characters or fewer is always a safe integer: no BigInt needed to tell ('-0' reads as 0, as through BigInt)
      if (raw.length <= 15) { const n = Number(raw); return n === 0 ? 0 : n; }
      const b = BigInt(raw);
      return b >= MIN_SAFE && b <= MAX_SAFE ? Number(b) : b;
    }
    case 'Integer': {
      // Past 2^53 Number() rounds (9223372036854775808 passed as an integer and reached a
      // handler, a 500; a body gives such digits as bigint, which Integer refuses): left as
      // text, the validator names the parameter.
      if (!INT_RE.test(raw)) return raw;
      const n = Number(raw);
      return Number.isSafeInteger(n) ? n : raw;
    }
    case 'Number': return NUM_RE.test(raw) ? Number(raw) : raw;
    case 'Boolean': return raw === 'true' ? true : raw === 'false' ? false : raw;
    case 'Union': {
      // e.g. Nullable(Integer) or a union of literals: try members until one coerces
      for (const member of (schema as unknown as { anyOf: TSchema[] }).anyOf) {
        const v = coerce(member, raw);
        if (v !== raw) return v;
      }
      return raw;
    }
    default: return raw;
  }
}

/**
 * The query's name/value pairs as URLSearchParams gives them. Without '%' or '+' there is
 * nothing to decode and a split is exact; URLSearchParams' iterator cost ~10 us a request
 * (profiled on one-point reads), on every request.
 */
export function queryPairs(raw: string): Iterable<[string, string]> {
  if (raw.includes('%') || raw.includes('+')) return new URLSearchParams(raw);
  const pairs: Array<[string, string]> = [];
  for (const piece of raw.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    pairs.push(eq < 0 ? [piece, ''] : [piece.slice(0, eq), piece.slice(eq + 1)]);
  }
  return pairs;
}

/**
 * Parses the raw query string against an object schema. Repeated keys become arrays only
 * where the schema says array. The three names that could reach the prototype are skipped
 * (the validator reports them as unknown), so every other name lands as an own property of
 * a plain object filled in place: filling a null-prototype object and copying it out took
 * 6.7 us for a raw read's four parameters, against 3.0 (median of 20 x 20,000 parses).
 */
export function parseQuery(raw: string | undefined, schema: TSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!raw) return out;
  const props = (schema as unknown as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  for (const [key, value] of queryPairs(raw)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const prop = Object.hasOwn(props, key) ? props[key] : undefined;
    if (prop && prop[Kind] === 'Array') {
      const items = (prop as unknown as { items: TSchema }).items;
      const list = (Object.hasOwn(out, key) ? out[key] : []) as unknown[];
      list.push(coerce(items, value));
      out[key] = list;
    } else if (Object.hasOwn(out, key)) {
      out[key] = [out[key], coerce(prop, value)].flat(); // repeated scalar: the validator rejects the array
    } else {
      out[key] = coerce(prop, value);
    }
  }
  return out;
}
