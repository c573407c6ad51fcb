// Hostile requests for one operation: a valid request made from its schemas, then (most of
// the time) one mutation of it: wrong types, missing and unknown members, oversized strings
// and arrays, deep nesting, invalid UUIDs, integers past int64, control characters,
// truncated and invalid UTF-8 bodies, wrong content types, duplicated and undeclared query
// parameters, odd headers. Each request says which mutation it carries and which member
// it aimed at, so a finding reads as a reproducible case.
import fc from 'fast-check';
import type { AnyRoute } from '../../src/http/route.js';
import { stringifyJson } from '../../src/json/json.js';
import { valueArbitrary, type IdPool } from './schema-arbitrary.js';

export interface HostileRequest {
  /** "POST /v1/model/assets" */
  operation: string;
  area: string;
  mutation: string;
  /** The member the mutation aimed at ("body.items.0.name"), when it aimed at one. */
  target?: string;
  method: string;
  /** The concrete, percent-encoded path. */
  path: string;
  /** The raw query string, without "?". */
  query: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** The same request before its mutation (absent on unmutated ones): whether a 400 names the mutated member is judged only when this one is valid. */
  base?: HostileRequest;
}

interface Parts { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown }

type Where = 'path' | 'query' | 'body';
type Slot = { where: Where; at: Array<string | number>; value: unknown };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const MUTATIONS = [
  'valid', 'wrong-type', 'missing-member', 'unknown-member', 'oversized-string', 'oversized-array', 'deep-nesting',
  'invalid-uuid', 'int64-overflow', 'control-characters', 'prototype-keys', 'truncated-body', 'invalid-utf8',
  'wrong-content-type', 'not-an-object', 'duplicated-query', 'undeclared-query', 'bad-percent-encoding', 'odd-headers',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

const WRONG_TYPES: unknown[] = ['text', 12, -1, 1.5, true, null, [], {}, [1, 'a'], { a: 1 }, '', '0'];
const BAD_UUIDS = ['not-a-uuid', '', '00000000-0000-0000-0000-00000000000g', '00000000000000000000000000000000',
  '{00000000-0000-4000-8000-000000000000}', '00000000-0000-4000-8000-0000000000001', ' 00000000-0000-4000-8000-000000000000',
  '00000000-0000-4000-8000-00000000000\u0000', '../../v1/healthz', '😀'.repeat(9)];
const BEYOND_INT64: unknown[] = [2n ** 63n, -(2n ** 63n) - 1n, 2n ** 64n, 10n ** 30n, 1e30, -1e300, 1.5, 2 ** 53 + 0.5, '9223372036854775808', -1];
const CONTROL_TEXT = ['a\u0000b', '\u0007bell', 'esc\u001b[31m', '\ud800', 'x\udfffy', '\u0000'];
const BAD_CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '', 'application/jsonx', 'json'];
const NOT_OBJECTS = ['null', '[]', '1', '"text"', 'true', '', ' ', '{', '}', '{"a":1,"a":2}', '{"__proto__":{"admin":true}}', '[[[[[[[[[[1]]]]]]]]]]', '1e400', '-0', '{"a":1e99999}'];
const INVALID_UTF8: number[][] = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]];
const ODD_HEADERS: Array<Record<string, string>> = [
  { accept: 'text/html' }, { accept: 'application/x-msgpack' }, { accept: '*/*;q=0' }, { accept: 'application/json;q=0, */*;q=0' },
  { 'idempotency-key': '' }, { 'idempotency-key': 'k'.repeat(300) }, { 'idempotency-key': 'cl\u00e9' }, { 'idempotency-key': 'a b' },
  { 'x-forwarded-proto': 'https', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
  { 'content-encoding': 'gzip' }, { 'accept-encoding': 'br' }, { 'x-correlation-id': 'x'.repeat(500) },
];

/** Every member and element of a value with its path; the root too. */
function slotsOf(where: Where, value: unknown, at: Array<string | number> = [], out: Slot[] = [], depth = 0): Slot[] {
  out.push({ where, at, value });
  if (depth > 6 || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) value.slice(0, 4).forEach((v, i) => slotsOf(where, v, [...at, i], out, depth + 1));
  else for (const [k, v] of Object.entries(value)) slotsOf(where, v, [...at, k], out, depth + 1);
  return out;
}

function setAt(root: unknown, at: Array<string | number>, value: unknown): unknown {
  if (at.length === 0) return value;
  const copy: Record<string | number, unknown> = Array.isArray(root) ? [...root] as unknown as Record<number, unknown> : { ...(root as Record<string, unknown>) };
  copy[at[0]] = setAt(copy[at[0]], at.slice(1), value);
  return copy;
}

function deleteAt(root: unknown, at: Array<string | number>): unknown {
  if (at.length === 1 && root && typeof root === 'object' && !Array.isArray(root)) {
    const { [String(at[0])]: _gone, ...rest } = root as Record<string, unknown>;
    return rest;
  }
  if (at.length === 0 || !root || typeof root !== 'object') return root;
  const copy: Record<string | number, unknown> = Array.isArray(root) ? [...root] as unknown as Record<number, unknown> : { ...(root as Record<string, unknown>) };
  copy[at[0]] = deleteAt(copy[at[0]], at.slice(1));
  return copy;
}

const fieldName = (s: Slot) => [s.where, ...s.at].join('.');

function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Valid path, query and body members for a route. */
function partsArbitrary(route: AnyRoute, pool: IdPool): fc.Arbitrary<Parts> {
  return fc.record({
    params: route.params ? valueArbitrary(route.params, pool) as fc.Arbitrary<Record<string, unknown>> : fc.constant({}),
    query: route.query ? valueArbitrary(route.query, pool) as fc.Arbitrary<Record<string, unknown>> : fc.constant({}),
    body: route.body ? valueArbitrary(route.body, pool) : fc.constant(undefined),
  });
}

/** encodeURIComponent, except that a lone surrogate goes out as its WTF-8 bytes (invalid UTF-8 in the URL) instead of throwing. */
function encodeText(s: string): string {
  try { return encodeURIComponent(s); } catch {
    let out = '';
    for (const ch of s) {
      const c = ch.codePointAt(0) as number;
      if (c >= 0xd800 && c <= 0xdfff) out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      else out += encodeURIComponent(ch);
    }
    return out;
  }
}

function encodeQuery(query: Record<string, unknown>): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      const text = typeof x === 'object' && x !== null ? stringifyJson(x) : String(x);
      pairs.push(`${encodeText(k)}=${encodeText(text)}`);
    }
  }
  return pairs.join('&');
}

function fillPath(route: AnyRoute, params: Record<string, unknown>): string {
  return route.path.replace(/\{([^}]+)\}/g, (_m, n: string) => {
    const v = params[n];
    return encodeText(typeof v === 'object' && v !== null ? stringifyJson(v) : String(v));
  });
}

const METHOD: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** One hostile request for `route`: its valid parts, a mutation, and the bytes on the wire. */
export function hostileRequestArbitrary(route: AnyRoute, pool: IdPool): fc.Arbitrary<HostileRequest> {
  return fc.tuple(partsArbitrary(route, pool), fc.constantFrom(...MUTATIONS), fc.nat(), fc.nat(), fc.nat())
    .map(([parts, mutation, a, b, c]) => build(route, parts, mutation, a, b, c));
}

function pick<T>(list: readonly T[], n: number): T {
  return list[n % list.length];
}

function build(route: AnyRoute, p: Parts, mutation: Mutation, a: number, b: number, c: number): HostileRequest {
  let parts: Parts = { ...p };
  let target: string | undefined;
  let headers: Record<string, string> = {};
  let rawBody: Uint8Array | undefined;
  let contentType: string | undefined = route.body ? 'application/json' : undefined;
  let rawQuery: string | undefined;
  const candidates = (test: (s: Slot) => boolean, wheres: Where[] = ['path', 'query', 'body']): Slot[] => {
    const all: Slot[] = [];
    if (wheres.includes('path')) for (const [k, v] of Object.entries(parts.params)) all.push({ where: 'path', at: [k], value: v });
    if (wheres.includes('query')) slotsOf('query', parts.query).forEach((s) => s.at.length > 0 && all.push(s));
    if (wheres.includes('body') && route.body) slotsOf('body', parts.body).forEach((s) => all.push(s));
    return all.filter(test);
  };
  const replace = (s: Slot, value: unknown) => {
    target = fieldName(s);
    if (s.where === 'path') parts = { ...parts, params: { ...parts.params, [s.at[0]]: value } };
    else if (s.where === 'query') parts = { ...parts, query: setAt(parts.query, s.at, value) as Record<string, unknown> };
    else parts = { ...parts, body: setAt(parts.body, s.at, value) };
  };
  const any = () => true;

  switch (mutation) {
    case 'valid': break;
    case 'wrong-type': {
      const slots = candidates(any);
      if (slots.length) replace(pick(slots, a), pick(WRONG_TYPES, b));
      break;
    }
    case 'missing-member': {
      const slots = candidates((s) => s.at.length > 0, ['query', 'body']);
      if (slots.length) {
        const s = pick(slots, a);
        target = fieldName(s);
        if (s.where === 'query') parts = { ...parts, query: deleteAt(parts.query, s.at) as Record<string, unknown> };
        else parts = { ...parts, body: deleteAt(parts.body, s.at) };
      } else if (route.body) { rawBody = new Uint8Array(0); target = 'body'; }
      break;
    }
    case 'unknown-member': {
      const objects = candidates((s) => s.value !== null && typeof s.value === 'object' && !Array.isArray(s.value), ['body']);
      if (objects.length && b % 2 === 0) {
        const s = pick(objects, a);
        replace(s, { ...(s.value as object), [`unknown_${c % 1000}`]: pick(WRONG_TYPES, b) });
      } else { parts = { ...parts, query: { ...parts.query, [`unknown_${c % 1000}`]: 'x' } }; target = `query.unknown_${c % 1000}`; }
      break;
    }
    case 'oversized-string': {
      const slots = candidates((s) => typeof s.value === 'string' || s.at.length > 0);
      // past a name's limit, past the URL limit (8 KiB), past uWS's head buffer, past the body limit (1 MiB in the runs)
      const size = pick([300, 9_000, 70_000, 300, 1_100_000], b);
      if (slots.length) replace(pick(slots, a), pick(['x', 'é', '🛢'], c).repeat(size));
      break;
    }
    case 'oversized-array': {
      const slots = candidates((s) => Array.isArray(s.value) || s.at.length > 0, ['body', 'query']);
      const size = pick([1_001, 20_000], b);
      if (slots.length) {
        const s = pick(slots, a);
        const element = Array.isArray(s.value) && s.value.length ? s.value[0] : 1;
        replace(s, Array.from({ length: s.where === 'query' ? Math.min(size, 500) : size }, () => element));
      }
      break;
    }
    case 'deep-nesting': {
      if (route.body) {
        const depth = pick([65, 1_000, 100_000], b);
        const inner = nested(depth, c % 2 ? 'array' : 'object');
        const slots = candidates((s) => s.at.length > 0, ['body']);
        const s = slots.length ? pick(slots, a) : null;
        const placeholder = '"__deep__"';
        const base = s ? setAt(parts.body, s.at, '__deep__') : '__deep__';
        target = s ? fieldName(s) : 'body';
        rawBody = Buffer.from(stringifyJson(base).replace(placeholder, inner));
      } else { parts = { ...parts, query: { ...parts.query, deep: nested(50, 'array') } }; target = 'query.deep'; }
      break;
    }
    case 'invalid-uuid': {
      const slots = candidates((s) => typeof s.value === 'string' && UUID_RE.test(s.value));
      const fallback = candidates((s) => s.where === 'path');
      const s = slots.length ? pick(slots, a) : fallback.length ? pick(fallback, a) : null;
      if (s) replace(s, pick(BAD_UUIDS, b));
      break;
    }
    case 'int64-overflow': {
      const slots = candidates((s) => typeof s.value === 'number' || typeof s.value === 'bigint' || (typeof s.value === 'string' && /^[0-9]+$/.test(s.value)));
      const any2 = candidates((s) => s.at.length > 0);
      const s = slots.length ? pick(slots, a) : any2.length ? pick(any2, a) : null;
      if (s) replace(s, s.where === 'body' ? pick(BEYOND_INT64, b) : String(pick(BEYOND_INT64, b)));
      break;
    }
    case 'control-characters': {
      const slots = candidates((s) => typeof s.value === 'string');
      const s = slots.length ? pick(slots, a) : null;
      if (s) replace(s, `${String(s.value).slice(0, 4)}${pick(CONTROL_TEXT, b)}`);
      else { parts = { ...parts, query: { ...parts.query, q: pick(CONTROL_TEXT, b) } }; target = 'query.q'; }
      break;
    }
    case 'prototype-keys': {
      if (route.body) {
        const key = pick(['__proto__', 'constructor', 'prototype'], b);
        const json = stringifyJson(parts.body);
        rawBody = Buffer.from(json.startsWith('{') && json !== '{}' ? `{"${key}":{"polluted":true},${json.slice(1)}` : `{"${key}":{"polluted":true}}`);
        target = `body.${key}`;
      } else { rawQuery = `${encodeQuery(parts.query)}&__proto__=1&constructor=x`; target = 'query.__proto__'; }
      break;
    }
    case 'truncated-body': {
      const json = Buffer.from(stringifyJson(parts.body ?? {}));
      rawBody = json.subarray(0, json.length > 1 ? a % (json.length - 1) + 1 : 0);
      target = 'body';
      break;
    }
    case 'invalid-utf8': {
      const json = Buffer.from(stringifyJson(parts.body ?? { text: 'x' }));
      const quote = json.indexOf(0x22, a % Math.max(1, json.length));
      const at = quote >= 0 ? quote + 1 : json.length;
      rawBody = Buffer.concat([json.subarray(0, at), Buffer.from(pick(INVALID_UTF8, b)), json.subarray(at)]);
      target = 'body';
      break;
    }
    case 'wrong-content-type': {
      contentType = pick(BAD_CONTENT_TYPES, b);
      if (!route.body) rawBody = Buffer.from('{}');
      target = 'content-type';
      break;
    }
    case 'not-an-object': {
      rawBody = Buffer.from(pick(NOT_OBJECTS, b));
      contentType = 'application/json';
      target = 'body';
      break;
    }
    case 'duplicated-query': {
      const names = Object.keys(parts.query);
      if (names.length) {
        const name = pick(names, a);
        const v = parts.query[name];
        const extra = Array.isArray(v) ? v : [v, pick(WRONG_TYPES, b)];
        rawQuery = `${encodeQuery(parts.query)}&${encodeQuery({ [name]: extra })}`;
        target = `query.${name}`;
      } else { rawQuery = 'a=1&a=2'; target = 'query.a'; }
      break;
    }
    case 'undeclared-query': {
      rawQuery = [encodeQuery(parts.query), `${pick(['limit', 'debug', 'as_of_ns', 'x', ''], b)}=${pick(['1', '', 'true', '%00'], c)}`].filter(Boolean).join('&');
      target = 'query';
      break;
    }
    case 'bad-percent-encoding': {
      const bad = pick(['%', '%zz', '%E0%A4%A', '%ff%fe', '%00', '%2F..%2F..%2F', '%u0041', '+%2B+'], b);
      const pathSlots = candidates((s) => s.where === 'path');
      if (pathSlots.length && a % 2 === 0) {
        const s = pick(pathSlots, c);
        target = fieldName(s);
        const path = route.path.replace(/\{([^}]+)\}/g, (_m, n: string) => (n === s.at[0] ? bad : encodeText(String(parts.params[n]))));
        return finish(route, mutation, target, path, encodeQuery(parts.query), headers, contentType, rawBody ?? bodyBytes(route, parts));
      }
      rawQuery = [encodeQuery(parts.query), `${pick(Object.keys(parts.query).concat('q'), c)}=${bad}`].filter(Boolean).join('&');
      target = 'query';
      break;
    }
    case 'odd-headers': {
      headers = { ...pick(ODD_HEADERS, b) };
      target = 'headers';
      break;
    }
  }
  const mutated = finish(route, mutation, target, fillPath(route, parts.params), rawQuery ?? encodeQuery(parts.query), headers, contentType, rawBody ?? bodyBytes(route, parts));
  if (mutation !== 'valid') mutated.base = finish(route, 'valid', undefined, fillPath(route, p.params), encodeQuery(p.query), {}, route.body ? 'application/json' : undefined, bodyBytes(route, p));
  return mutated;
}

function bodyBytes(route: AnyRoute, parts: Parts): Uint8Array | undefined {
  if (!route.body) return undefined;
  if (parts.body === undefined) return new Uint8Array(0);
  return Buffer.from(stringifyJson(parts.body));
}

function finish(route: AnyRoute, mutation: Mutation, target: string | undefined, path: string, query: string,
  headers: Record<string, string>, contentType: string | undefined, body: Uint8Array | undefined): HostileRequest {
  const h = { ...headers };
  if (body !== undefined && contentType) h['content-type'] = contentType;
  return {
    operation: `${METHOD[route.method]} ${route.path}`, area: route.area, mutation, target,
    method: METHOD[route.method], path, query, headers: h, body,
  };
}
