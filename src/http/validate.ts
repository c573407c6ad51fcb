// Compiled TypeBox validators, built once per route at start. A failed check becomes a
// ServiceError('invalid-request') listing each offending field, what was expected in the
// user's words ("an integer of nanoseconds since the Unix epoch", "one of `1h`, `1d`") and
// what was received; no validator wording reaches the client.
//
// The text policy is decided here, once, for every path, query and body value, any-JSON
// values included (they go to jsonb): see text-policy.ts.
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { ServiceError } from '../errors.js';
import { assertAcceptedText } from '../text-policy.js';

export type Where = 'path' | 'query' | 'body';

export interface Validator {
  check(where: Where, value: unknown): void;
}

export interface FieldProblem { field: string; problem: string }

const MAX_REPORTED = 20;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function compileValidator(schema: TSchema): Validator {
  const compiled: TypeCheck<TSchema> = TypeCompiler.Compile(schema);
  return {
    check(where, value) {
      if (!compiled.Check(value)) {
        const problems = problemsOf(where, compiled.Errors(value));
        // TypeBox's error walk passes a required member whose schema accepts anything (AnyJson)
        // when it is absent, while Check refuses it (fuzz case: POST /v1/model/attributes
        // without definition.entry_cadence answered 400 with no field named)
        throw invalidRequest(where, problems.length ? problems : missingMembers(where, schema, value, ''));
      }
      assertAcceptedText(where, value);
    },
  };
}

/** The 400 for a list of field problems; the message names the first. */
export function invalidRequest(where: Where, errors: FieldProblem[]): ServiceError {
  const first = errors[0] ?? { field: where, problem: 'invalid' };
  return new ServiceError('invalid-request', `${first.field}: ${first.problem}`, { errors });
}

function problemsOf(where: Where, errors: Iterable<ValueError>): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const e of errors) {
    for (const p of explain(where, e)) {
      if (!out.some((x) => x.field === p.field)) out.push(p);
      if (out.length >= MAX_REPORTED) return out;
    }
  }
  return out;
}

/** Required members absent from the value, found by walking the schema's objects and arrays. */
function missingMembers(where: Where, schema: TSchema, value: unknown, path: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  if (Array.isArray(schema.anyOf)) { // Nullable(X), Optional unions: the variants of the value's JSON type
    for (const variant of schema.anyOf as TSchema[]) if (jsonTypeMatches(variant, value)) out.push(...missingMembers(where, variant, value, path));
  } else if (isPlainObject(value) && schema.type === 'object' && schema.properties) {
    const props = schema.properties as Record<string, TSchema>;
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (!Object.hasOwn(value, key)) out.push({ field: fieldOf(where, `${path}/${key}`), problem: `required: expected ${expected(props[key], key, where)}, received nothing` });
    }
    for (const [key, sub] of Object.entries(props)) {
      if (Object.hasOwn(value, key)) out.push(...missingMembers(where, sub, value[key], `${path}/${key}`));
    }
  } else if (Array.isArray(value) && schema.type === 'array' && schema.items && !Array.isArray(schema.items)) {
    value.forEach((x, i) => out.push(...missingMembers(where, schema.items as TSchema, x, `${path}/${i}`)));
  }
  return out.slice(0, MAX_REPORTED);
}

/** `body.items.0.name` from `/items/0/name`. */
function fieldOf(where: Where, path: string): string {
  if (path === '') return where;
  return where + path.split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~')).join('.');
}

function explain(where: Where, e: ValueError): FieldProblem[] {
  const field = fieldOf(where, e.path);
  const name = e.path.slice(e.path.lastIndexOf('/') + 1);
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return [{ field, problem: `required: expected ${expected(e.schema, name, where)}, received nothing` }];
    case ValueErrorType.ObjectAdditionalProperties: {
      const known = Object.keys((e.schema as { properties?: Record<string, unknown> }).properties ?? {});
      return [{ field, problem: `not a known field${known.length ? `; the known fields are ${known.map((k) => `\`${k}\``).join(', ')}` : ''}` }];
    }
    case ValueErrorType.Union:
      return explainUnion(where, e, field, name);
    default:
      return [{ field, problem: `expected ${expected(e.schema, name, where)}, received ${received(e.value, e.schema)}` }];
  }
}

/**
 * A union of objects told apart by a literal member (`kind`, `mode`) reports the variant the
 * value names, or the discriminator's choices; a union where one variant has the value's
 * JSON type (Nullable(X) given a string) reports that variant; anything else lists the variants.
 */
function explainUnion(where: Where, e: ValueError, field: string, name: string): FieldProblem[] {
  const variants = (e.schema as { anyOf?: TSchema[] }).anyOf ?? [];
  const v = e.value;
  if (isPlainObject(v)) {
    const disc = discriminator(variants);
    if (disc) {
      const i = variants.findIndex((s) => literalOf((s.properties as Record<string, TSchema>)[disc]) === v[disc]);
      if (i < 0) {
        const choices = variants.map((s) => literalOf((s.properties as Record<string, TSchema>)[disc]));
        return [{ field: `${field}.${disc}`, problem: `expected ${oneOf(choices)}, received ${received(v[disc])}` }];
      }
      const inner = problemsOf(where, e.errors[i] ?? []);
      if (inner.length) return inner;
    }
  }
  const sameType = variants.map((s, i) => [s, i] as const).filter(([s]) => jsonTypeMatches(s, v));
  if (sameType.length === 1) {
    const inner = problemsOf(where, e.errors[sameType[0][1]] ?? []);
    if (inner.length) return inner;
  }
  return [{ field, problem: `expected ${expected(e.schema, name, where)}, received ${received(v, e.schema)}` }];
}

function discriminator(variants: TSchema[]): string | null {
  if (variants.length < 2 || !variants.every((s) => s.type === 'object' && s.properties)) return null;
  const first = variants[0].properties as Record<string, TSchema>;
  for (const key of Object.keys(first)) {
    if (variants.every((s) => literalOf((s.properties as Record<string, TSchema>)[key]) !== undefined)) return key;
  }
  return null;
}

function literalOf(s: TSchema | undefined): string | number | boolean | undefined {
  return s && s.const !== undefined && s[Kind] === 'Literal' ? s.const : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonTypeMatches(s: TSchema, v: unknown): boolean {
  switch (s[Kind]) {
    case 'Int64': case 'Integer': case 'Number': return typeof v === 'number' || typeof v === 'bigint';
    case 'String': return typeof v === 'string';
    case 'Literal': return typeof v === typeof s.const;
    case 'Boolean': return typeof v === 'boolean';
    case 'Null': return v === null;
    case 'Array': case 'Tuple': return Array.isArray(v);
    case 'Object': case 'Record': return isPlainObject(v);
    default: return false;
  }
}

const oneOf = (choices: unknown[]): string =>
  choices.length === 1 ? `\`${String(choices[0])}\`` : `one of ${choices.map((c) => `\`${String(c)}\``).join(', ')}`;

/** Durations named `*_ns` are not instants. */
const DURATION_NS = /(interval|duration|cadence|period|window|step|gap|age|ttl|timeout|resolution|bucket|width|offset|delay|lag|retention|horizon)/;

/** What the schema accepts, in a user's words. `name` is the field's own name (for `*_ns` times). */
export function expected(s: TSchema, name = '', where: Where = 'body'): string {
  if (typeof s['x-expected'] === 'string') return s['x-expected'];
  switch (s[Kind]) {
    case 'Int64': {
      const what = /_ns$/.test(name) ? (DURATION_NS.test(name) ? 'an integer number of nanoseconds' : 'an integer of nanoseconds since the Unix epoch')
        : /_tx$|^tx_id$|^since_tx$/.test(name) ? 'a transaction id (integer)' : 'an integer';
      const min = s.minimum !== undefined ? BigInt(s.minimum) : INT64_MIN;
      return `${what} from ${min} to ${INT64_MAX}${where === 'body' ? '' : ' (digits)'}`;
    }
    case 'Integer': case 'Number': {
      const what = s[Kind] === 'Integer' ? 'an integer' : 'a number';
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? `more than ${s.exclusiveMinimum}` : undefined);
      const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? `less than ${s.exclusiveMaximum}` : undefined);
      if (s.minimum !== undefined && s.maximum !== undefined) return `${what} from ${s.minimum} to ${s.maximum}`;
      if (lo !== undefined && hi !== undefined) return `${what} ${lo}, ${hi}`;
      if (s.minimum !== undefined) return `${what} of at least ${s.minimum}`;
      if (s.maximum !== undefined) return `${what} of at most ${s.maximum}`;
      if (lo !== undefined) return `${what} ${lo}`;
      if (hi !== undefined) return `${what} ${hi}`;
      return what;
    }
    case 'String': return expectedString(s);
    case 'Boolean': return '`true` or `false`';
    case 'Null': return '`null`';
    case 'Literal': return `\`${String(s.const)}\``;
    case 'Union': {
      const members = (s.anyOf ?? []) as TSchema[];
      const disc = discriminator(members);
      if (disc) return `an object whose \`${disc}\` is ${oneOf(members.map((m) => literalOf((m.properties as Record<string, TSchema>)[disc])))}`;
      const literals = members.filter((m) => m[Kind] === 'Literal').map((m) => m.const);
      const others = members.filter((m) => m[Kind] !== 'Literal');
      const parts: string[] = [];
      if (literals.length) parts.push(oneOf(literals));
      for (const m of others) parts.push(expected(m, name, where));
      return parts.join(' or ');
    }
    case 'Array': {
      const items = s.items as TSchema | undefined;
      const inner = items ? `, each ${expected(items, name, where)}` : '';
      const n = s.minItems !== undefined && s.maxItems !== undefined ? ` of ${s.minItems} to ${s.maxItems} items`
        : s.maxItems !== undefined ? ` of at most ${s.maxItems} items` : s.minItems !== undefined ? ` of at least ${s.minItems} items` : '';
      return `an array${n}${inner}`;
    }
    case 'Object': {
      const props = Object.keys((s.properties ?? {}) as Record<string, unknown>);
      return props.length ? `an object with ${props.map((p) => `\`${p}\``).join(', ')}` : 'an object';
    }
    case 'Record': return 'an object';
    case 'Unknown': case 'Any': return 'a JSON value';
    default: return s.type ? `a JSON ${String(s.type)}` : 'a valid value';
  }
}

function expectedString(s: TSchema): string {
  const len = s.minLength !== undefined && s.maxLength !== undefined ? (s.minLength === s.maxLength ? ` of ${s.minLength} characters` : ` of ${s.minLength} to ${s.maxLength} characters`)
    : s.maxLength !== undefined ? ` of at most ${s.maxLength} characters` : s.minLength ? ` of at least ${s.minLength} character${s.minLength === 1 ? '' : 's'}` : '';
  switch (s.format) {
    case 'uuid': return 'a UUID such as `0b6f1f8e-3d2a-4c1b-9a57-2f0e8c1d4b6a`';
    case 'int64': return `an integer as a string of digits, from ${INT64_MIN} to ${INT64_MAX}`;
    case 'date-time': return 'an RFC 3339 date-time such as `2026-11-27T12:00:00Z`';
    case 'uri': return 'an absolute URL';
    default: break;
  }
  if (s.pattern) return `a string${len} matching \`${s.pattern}\``;
  return `a string${len}`;
}

/** What was received, short: a value, a type, or a truncated string. */
export function received(v: unknown, s?: TSchema): string {
  if (v === undefined) return 'nothing';
  if (v === null) return '`null`';
  if (typeof v === 'bigint' || typeof v === 'number') {
    const out = String(v);
    if (s && s[Kind] === 'Int64' && Number.isInteger(Number(v))) {
      const b = BigInt(v);
      if (b > INT64_MAX || b < INT64_MIN) return `${out}, outside the int64 range`;
    }
    if (s && s[Kind] === 'Int64' && typeof v === 'number' && !Number.isInteger(v)) return `${out} (not an integer)`;
    return out;
  }
  if (typeof v === 'boolean') return `\`${v}\``;
  if (typeof v === 'string') {
    const shown = v.length > 60 ? `${v.slice(0, 60)}…` : v;
    const note = s?.maxLength !== undefined && v.length > s.maxLength ? ` (${v.length} characters)` : '';
    return `${JSON.stringify(shown)}${note}`;
  }
  if (Array.isArray(v)) return `an array of ${v.length} item${v.length === 1 ? '' : 's'}`;
  return 'an object';
}
