// Values a route's TypeBox schema accepts, as fast-check arbitraries. The fuzz starts from
// valid requests and mutates them, so a refusal can be traced to the one thing changed.
// Generation is best effort (a pattern with a length bound may yield a string the schema
// refuses): the fuzz never trusts it, it asks the route's compiled validator what is valid.
import fc from 'fast-check';
import { Kind, OptionalKind, type TSchema } from '@sinclair/typebox';
import { stringifyJson } from '../../src/json/json.js';

/** Ids the fuzz has seen in answers (assets, series, jobs...): reused so handlers get past their 404s. */
export interface IdPool {
  uuids: string[];
  int64Ids: string[];
}

type Json = Record<string, unknown>;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Text a user of a historian types: plain, accented, CJK, emoji, blanks, line breaks. */
const TEXT = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('Pump-1', 'Área Norte', '反応器', 'tank 🛢', ' spaced ', 'line\nbreak', 'tab\there', '%2F', '../..', 'a/b|c'),
);

function uuidArbitrary(pool: IdPool): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.uuid({ version: 4 }) },
    // the pool fills while the fuzz runs: read at generation time, a fresh uuid while it is empty
    { weight: 3, arbitrary: fc.tuple(fc.integer({ min: 0, max: 1 << 30 }), fc.uuid({ version: 4 })).map(([i, fresh]) => pool.uuids[i % Math.max(1, pool.uuids.length)] ?? fresh) },
  );
}

function stringArbitrary(s: Json, pool: IdPool): fc.Arbitrary<string> {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : undefined;
  const fits = (v: string) => v.length >= min && (max === undefined || v.length <= max);
  if (s.format === 'uuid') return uuidArbitrary(pool);
  if (s.format === 'int64') {
    const ids = pool.int64Ids;
    return fc.oneof(
      fc.bigInt({ min: 1n, max: INT64_MAX }).map(String),
      fc.constantFrom('1', '2', '9223372036854775807'),
      fc.integer({ min: 0, max: 1 << 30 }).map((i) => ids[i % Math.max(1, ids.length)] ?? '1'),
    ).filter((v) => typeof s.pattern !== 'string' || new RegExp(s.pattern, 'u').test(v));
  }
  if (s.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === 'uri') return fc.webUrl();
  if (typeof s.pattern === 'string') {
    let re: RegExp;
    try { re = new RegExp(s.pattern, 'u'); } catch { return TEXT.filter(fits); }
    // stringMatching may exceed maxLength: cut, and let the validator judge what remains
    return fc.stringMatching(re).map((v) => (max !== undefined && v.length > max ? v.slice(0, max) : v)).filter((v) => v.length >= min);
  }
  return TEXT.map((v) => (max !== undefined && v.length > max ? v.slice(0, max) : v)).map((v) => (v.length < min ? v.padEnd(min, 'x') : v));
}

function integerArbitrary(s: Json): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : -1_000_000;
  const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : Math.max(min + 1_000_000, 1_000_000);
  return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
}

function int64Arbitrary(s: Json, name: string): fc.Arbitrary<number | bigint> {
  const min = typeof s.minimum === 'number' ? BigInt(s.minimum) : INT64_MIN;
  // Times and durations: mostly plausible nanoseconds, now and then the edges of the range.
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  const plausible = /_ns$/.test(name)
    ? fc.bigInt({ min: nowNs - 86_400_000_000_000n * 30n, max: nowNs + 3_600_000_000_000n })
    : fc.bigInt({ min: 0n, max: 1_000_000n });
  return fc.oneof(
    { weight: 4, arbitrary: plausible.filter((v) => v >= min) },
    { weight: 1, arbitrary: fc.bigInt({ min, max: INT64_MAX }) },
    { weight: 1, arbitrary: fc.constantFrom(min, INT64_MAX, 0n >= min ? 0n : min) },
  ).map((v) => (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v));
}

/** An arbitrary of values `schema` accepts (best effort); `name` is the member's name (for `*_ns`). */
export function valueArbitrary(schema: TSchema, pool: IdPool, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = schema as unknown as Json;
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  switch (schema[Kind] as string) {
    case 'String': return stringArbitrary(s, pool);
    case 'Integer': return integerArbitrary(s);
    case 'Number': return fc.oneof(integerArbitrary(s), fc.double({ noNaN: true, noDefaultInfinity: true, min: typeof s.minimum === 'number' ? s.minimum : -1e9, max: typeof s.maximum === 'number' ? s.maximum : 1e9 }));
    case 'Int64': return int64Arbitrary(s, name);
    case 'Boolean': return fc.boolean();
    case 'Null': return fc.constant(null);
    case 'Literal': return fc.constant(s.const);
    case 'Union': {
      const members = (s.anyOf as TSchema[]).map((m) => valueArbitrary(m, pool, name, depth + 1));
      return fc.oneof(...members);
    }
    case 'Array': {
      const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
      const maxItems = Math.min(typeof s.maxItems === 'number' ? s.maxItems : 6, minItems + 6);
      const items = valueArbitrary(s.items as TSchema, pool, name, depth + 1);
      if (s.uniqueItems === true) return fc.uniqueArray(items, { minLength: minItems, maxLength: maxItems, selector: (v) => stringifyJson(v) });
      return fc.array(items, { minLength: minItems, maxLength: maxItems });
    }
    case 'Tuple': return fc.tuple(...((s.items as TSchema[] | undefined) ?? []).map((m) => valueArbitrary(m, pool, name, depth + 1)));
    case 'Record': {
      const [keyPattern, valueSchema] = Object.entries((s.patternProperties as Record<string, TSchema>) ?? {})[0] ?? ['', undefined];
      const keyArb = keyPattern && keyPattern !== '^(.*)$' ? fc.stringMatching(new RegExp(keyPattern, 'u')) : fc.string({ minLength: 1, maxLength: 12 });
      return fc.dictionary(keyArb, valueSchema ? valueArbitrary(valueSchema, pool, name, depth + 1) : anyJson(depth), { maxKeys: 4 });
    }
    case 'Object': return objectArbitrary(schema, pool, depth);
    case 'Intersect': {
      const parts = (s.allOf as TSchema[]).map((m) => valueArbitrary(m, pool, name, depth + 1));
      return fc.tuple(...parts).map((vs) => Object.assign({}, ...vs.filter((v) => typeof v === 'object' && v !== null)));
    }
    case 'Unknown': case 'Any': default: return anyJson(depth);
  }
}

function objectArbitrary(schema: TSchema, pool: IdPool, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = ((schema as unknown as Json).properties ?? {}) as Record<string, TSchema>;
  const required = new Set(((schema as unknown as Json).required as string[] | undefined) ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, p] of Object.entries(props)) model[key] = valueArbitrary(p, pool, key, depth + 1);
  const requiredKeys = Object.keys(props).filter((k) => required.has(k) && p_isRequired(props[k]));
  return fc.record(model, { requiredKeys });
}

/** TypeBox marks Optional members with a symbol as well as leaving them out of `required`. */
function p_isRequired(p: TSchema): boolean {
  return (p as unknown as Record<symbol, unknown>)[OptionalKind] !== 'Optional';
}

/** Any JSON value, bounded in size (the any-JSON members: property values, free payloads). */
export function anyJson(depth = 0): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(fc.string({ maxLength: 16 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
  if (depth > 4) return leaf;
  return fc.oneof({ weight: 4, arbitrary: leaf }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
}
