// Schemas shared by every resource area. Int64 values cross the wire as bare JSON
// integers (the lossless JSON codec gives them to us as bigint when they exceed 2^53),
// or as "exact int64 strings" where the spec says so.
import { Type, Kind, TypeRegistry, FormatRegistry, type TSchema, type TUnsafe, type Static } from '@sinclair/typebox';
import { UUID_RE } from '../../uuid.js';
import { CAPABILITIES } from '../../auth/capabilities.js';
import { NAME_MAX } from '../../model/versions/names.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

TypeRegistry.Set('Int64', (schema: { minimum?: number }, value: unknown) => {
  let v: bigint;
  if (typeof value === 'bigint') v = value;
  else if (typeof value === 'number' && Number.isInteger(value)) v = BigInt(value);
  else return false;
  if (v < INT64_MIN || v > INT64_MAX) return false;
  if (schema.minimum !== undefined && v < BigInt(schema.minimum)) return false;
  return true;
});

FormatRegistry.Set('uuid', (v) => UUID_RE.test(v));
FormatRegistry.Set('int64', (v) => /^-?[0-9]{1,19}$/.test(v) && BigInt(v) >= INT64_MIN && BigInt(v) <= INT64_MAX);
FormatRegistry.Set('password', () => true);
FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));
FormatRegistry.Set('uri', (v) => { try { new URL(v); return true; } catch { return false; } });

export type Int64Value = number | bigint;

/**
 * An int64 JSON integer. Values up to 2^53 arrive as number, larger ones as bigint;
 * handlers normalise with `BigInt(x)`. In the contract it is `{type: integer, format: int64}`.
 */
export function Int64(options: { minimum?: number; description?: string } = {}): TUnsafe<Int64Value> {
  return Type.Unsafe<Int64Value>({ [Kind]: 'Int64', type: 'integer', format: 'int64', ...options });
}

/** An exact int64 string, e.g. "1700000000123456789". */
export const Int64String = (options: { description?: string } = {}) =>
  Type.String({ pattern: '^-?[0-9]+$', format: 'int64', ...options });

/**
 * A positive int64 id in a path or query (a job id, say): digits, range-checked against
 * 9223372036854775807 by the `int64` format, so a 19-digit value beyond it is a 400 naming
 * the field, never a database error. Every int64 id in a path goes through this one schema.
 */
export const Int64Id = (options: { description?: string } = {}) =>
  Type.String({ pattern: '^[1-9][0-9]{0,18}$', format: 'int64', 'x-expected': `a positive integer id of at most ${INT64_MAX} (digits)`, ...options });

/**
 * The name of a model entity, as the model checks it (src/model/versions/names.ts), declared
 * so clients can check before sending. `segment`: asset and attribute names are path
 * segments and may not hold "/" or "|". Blanks at either end are refused too (not expressed
 * in the pattern, which stays a plain character class every regex dialect reads).
 */
export const EntityName = (options: { segment?: boolean; description?: string } = {}) => {
  const { segment, ...rest } = options;
  return Type.String({
    minLength: 1, maxLength: NAME_MAX,
    pattern: segment ? '^[^\\u0000-\\u001F\\u007F/|]+$' : '^[^\\u0000-\\u001F\\u007F]+$',
    'x-expected': `a name of 1 to ${NAME_MAX} characters without control characters${segment ? ', "/" or "|"' : ''} or blanks at either end`,
    ...rest,
  });
};

export const Uuid = (options: { description?: string } = {}) => Type.String({ format: 'uuid', ...options });

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Any JSON value (object, array, string, number, integer, boolean, null). */
export const AnyJson = (options: { description?: string } = {}) => Type.Unknown(options);

export const CapabilitySchema = Type.Union(CAPABILITIES.map((c) => Type.Literal(c)), { $id: 'Capability' });

export const ErrorEnvelope = Type.Object({
  error: Type.String({ description: 'Human-readable message' }),
  code: Type.String({ description: 'Stable machine-readable code; see x-error-codes' }),
  correlation_id: Uuid(),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
}, { $id: 'ErrorEnvelope', additionalProperties: true });
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

export const CursorPage = <T extends TSchema>(item: T) => Type.Object({
  items: Type.Array(item),
  next_cursor: Nullable(Type.String()),
}, { additionalProperties: false });

export const Limit = (max: number) => Type.Integer({ minimum: 1, maximum: max });
