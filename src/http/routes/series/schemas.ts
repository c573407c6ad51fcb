// Schemas of the series-storage area (spec "Series storage"). Shapes the spec leaves
// unshown are this project's choices, recorded in docs/decisions.md.
import { Type } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, Limit } from '../../schemas/common.js';
import { WriterClassSchema } from '../model/schemas.js';

export const SeriesParams = Type.Object({ uuid: Uuid() }, { additionalProperties: false });

const ValueTypeSchema = Type.Union(['float64', 'int64', 'boolean', 'string', 'enum'].map((v) => Type.Literal(v)));

export const SeriesRecordSchema = Type.Object({
  series_id: Uuid(),
  source_name: Type.String(),
  value_type: ValueTypeSchema,
  enum_set_id: Nullable(Uuid()),
  writable_class: WriterClassSchema,
  placement: Type.Union([Type.Literal('staging'), Type.Literal('bound')], { description: 'staging until a binding puts the series under an asset' }),
  asset_id: Nullable(Uuid({ description: 'The owning asset through the current binding' })),
  created_tx: Int64(),
  created_ns: Int64(),
  tx_id: Int64({ description: 'The model transaction that last changed this record' }),
}, { $id: 'SeriesRecord', additionalProperties: false });

export const ListSeriesQuery = Type.Object({
  name_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'source names starting with this text (byte-wise)' })),
  name_contains: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'source names containing this text anywhere, ignoring case (plant/analog finds sim-1/plant/analog/...)' })),
  value_type: Type.Optional(ValueTypeSchema),
  placement: Type.Optional(Type.Union([Type.Literal('staging'), Type.Literal('bound')])),
  limit: Type.Optional(Limit(1000)),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
}, { additionalProperties: false });

export const SeriesPage = Type.Object({
  items: Type.Array(SeriesRecordSchema),
  next_cursor: Nullable(Type.String()),
}, { additionalProperties: false });

/** A required time range; end exclusive. */
const RangeQuery = {
  start_ns: Int64({ description: 'inclusive, ns since the epoch' }),
  end_ns: Int64({ description: 'exclusive, ns since the epoch' }),
};

export const ChunksQuery = Type.Object({
  start_ns: Type.Optional(Int64()),
  end_ns: Type.Optional(Int64()),
  limit: Type.Optional(Limit(100_000)),
}, { additionalProperties: false });

export const ChunksResponse = Type.Object({
  series: Uuid(),
  chunks: Type.Array(Type.Object({
    start_ns: Int64({ description: 'first point time' }),
    end_ns: Int64({ description: 'last point time (inclusive)' }),
    count: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0 }),
    sealed: Type.Boolean({ description: 'false for the head: open points not yet sealed into a chunk' }),
  }, { additionalProperties: false })),
  truncated: Type.Boolean(),
}, { additionalProperties: false });

export const FinalisedResponse = Type.Object({
  series: Uuid(),
  finalised_ns: Nullable(Int64({ description: 'the series is complete through this time; null when nothing is finalised' })),
}, { additionalProperties: false });

export const GapsQuery = Type.Object(RangeQuery, { additionalProperties: false });
export const GapsResponse = Type.Object({
  series: Uuid(),
  start_ns: Int64(), end_ns: Int64(),
  cadence_ns: Nullable(Int64({ description: 'median interval between points in the range; null with fewer than 3 points' })),
  gaps: Type.Array(Type.Object({
    start_ns: Int64(), end_ns: Int64(),
    kind: Type.Union([Type.Literal('declared'), Type.Literal('detected')]),
    reason: Nullable(Type.String()),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

export const LifecyclePolicyResponse = Type.Object({
  policy: Nullable(Type.Object({
    schema: Type.String(),
    raw: Type.Union([
      Type.Object({ keep: Type.String() }, { additionalProperties: false }),
      Type.Object({ keep_days: Type.Integer({ minimum: 0 }), then: Type.String() }, { additionalProperties: false }),
    ]),
    rollups: Type.Object({ keep: Type.String() }, { additionalProperties: false }),
    annotations: Type.Object({ keep: Type.String() }, { additionalProperties: false }),
    swinging_door: Type.Optional(Type.Object({
      maxdev_percent_of_range: Type.Number(), range_max: Type.Number(), range_min: Type.Number(),
    }, { additionalProperties: false })),
  }, { additionalProperties: false })),
  version: Nullable(Int64()),
}, { $id: 'SeriesLifecyclePolicy', additionalProperties: false });

export const PutLifecyclePolicyBody = Type.Object({
  policy: AnyJson({ description: 'service-lifecycle-policy/v1 document; checked field by field' }),
  version: Type.Optional(Nullable(Int64({ description: 'the version this change is based on (null: none yet); 409 conflict when it moved' }))),
}, { additionalProperties: false });

export const RawQuery = Type.Object({
  ...RangeQuery,
  limit: Type.Optional(Limit(1_000_000)),
  layout: Type.Optional(Type.Union([Type.Literal('rows'), Type.Literal('columns')], {
    description: 'rows (default): one {ts_ns, value, quality} per point. columns: the page as columns, for clients that '
      + 'move millions of points: typed binary columns in msgpack (RawColumns), three arrays in JSON (RawColumnsJson)',
  })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
}, { additionalProperties: false });

const PointValue = AnyJson({ description: 'number (float64), int64 integer, boolean, string, or {enum_set, ordinal, member} (member: the name the enum set gives the ordinal, null when it names none)' });

export const RawResponse = Type.Object({
  series: Uuid(),
  start_ns: Int64(), end_ns: Int64(),
  points: Type.Array(Type.Object({ ts_ns: Int64(), value: PointValue, quality: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })),
  next_cursor: Nullable(Type.String()),
}, { additionalProperties: false });

/** Bytes of a msgpack bin (JSON Schema has no binary type; OpenAPI 3.1 says so with contentEncoding). */
const Bin = (description: string) => Type.Unsafe<Uint8Array>({ type: 'string', contentEncoding: 'binary', description });

export const RawColumnsResponse = Type.Object({
  series: Uuid(),
  start_ns: Int64(), end_ns: Int64(),
  layout: Type.Literal('columns'),
  value_type: ValueTypeSchema,
  enum_set: Nullable(Type.String({ description: 'the enum set of an enum series (the ordinals are in value)' })),
  count: Type.Integer({ minimum: 0, description: 'points in this page: every column holds this many' }),
  encoding: Type.Object({
    ts_ns: Type.Literal('int64le'),
    value: Type.Union(['float64le', 'int64le', 'uint8', 'int32le', 'string'].map((v) => Type.Literal(v)), {
      description: 'float64le (float64), int64le (int64), uint8 (boolean 0/1; enum ordinals when all fit in 0..255), int32le (other enum ordinals), string (an array of strings)',
    }),
    quality: Type.Union([Type.Literal('uint8'), Type.Literal('uint32le')], { description: 'uint8 when every quality of the page is below 256' }),
  }, { additionalProperties: false }),
  points: Type.Object({
    ts_ns: Bin('count x int64 little-endian, ns since the epoch, ascending'),
    value: Type.Union([Bin('count values in encoding.value'), Type.Array(Type.String())]),
    quality: Bin('count qualities in encoding.quality'),
  }, { additionalProperties: false }),
  next_cursor: Nullable(Type.String()),
}, { $id: 'RawColumns', additionalProperties: false, description: 'GET /raw with layout=columns (application/x-msgpack only): the page as typed columns, ~17 bytes a float64 point' });

export const RawColumnsJsonResponse = Type.Object({
  series: Uuid(),
  start_ns: Int64(), end_ns: Int64(),
  layout: Type.Literal('columns'),
  value_type: ValueTypeSchema,
  enum_set: Nullable(Type.String({ description: 'the enum set of an enum series (the ordinals are in value)' })),
  count: Type.Integer({ minimum: 0, description: 'points in this page: every array holds this many' }),
  points: Type.Object({
    ts_ns: Type.Array(Int64(), { description: 'ns since the epoch, ascending, as JSON integers (read them with a lossless int64 parser)' }),
    value: Type.Array(AnyJson(), { description: 'number (float64), int64 integer, boolean, string, or the ordinal of an enum series' }),
    quality: Type.Array(Type.Integer({ minimum: 0 })),
  }, { additionalProperties: false }),
  next_cursor: Nullable(Type.String()),
}, { $id: 'RawColumnsJson', additionalProperties: false, description: 'GET /raw with layout=columns in JSON: the page as three arrays, ~31 bytes a plant point against ~64 in rows' });

export const AuditQuery = Type.Object({
  ...RangeQuery,
  limit: Type.Optional(Limit(100_000)),
}, { additionalProperties: false });

export const AuditResponse = Type.Object({
  series: Uuid(),
  start_ns: Int64(), end_ns: Int64(),
  entries: Type.Array(Type.Object({
    ts_ns: Int64(), superseded_at_ns: Int64(), value: PointValue, quality: Type.Integer({ minimum: 0 }), principal: Type.String(),
  }, { additionalProperties: false })),
  truncated: Type.Boolean(),
}, { additionalProperties: false });

export const RollupsQuery = Type.Object({
  ...RangeQuery,
  interval: Type.Union([Type.Literal('1h'), Type.Literal('1d')]),
  continuity: Type.Optional(Type.Union([Type.Literal('continuous'), Type.Literal('stepped')], { description: 'default: continuous for float64, stepped otherwise' })),
  limit: Type.Optional(Limit(100_000)),
}, { additionalProperties: false });

const NullableNumber = Nullable(Type.Number());
export const RollupsResponse = Type.Object({
  series: Uuid(),
  interval: Type.String(),
  continuity: Type.String(),
  buckets: Type.Array(Type.Object({
    start_ns: Int64(), count: Type.Number({ minimum: 0 }),
    min: NullableNumber, max: NullableNumber, first: NullableNumber, last: NullableNumber,
    twa: NullableNumber, percent_good: NullableNumber, covered_ns: Type.Number({ minimum: 0 }),
  }, { additionalProperties: false })),
  truncated: Type.Boolean(),
}, { additionalProperties: false });

export const SnapshotResponse = Type.Object({
  series: Uuid(),
  snapshot: Nullable(Type.Object({ ts_ns: Int64(), value: PointValue, quality: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })),
}, { additionalProperties: false });

/** For routes that take no query parameters: any parameter is refused with a 400 naming it. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const SnapshotQuery = Type.Object({
  as_of_ns: Type.Optional(Int64({ description: 'The value as of this instant: the latest point at or before it (default: the latest point)' })),
}, { additionalProperties: false });

export const WritableClassBody = Type.Object({
  writable_class: WriterClassSchema,
}, { additionalProperties: false });

export const RenderQuery = Type.Object({
  ...RangeQuery,
  width: Type.Integer({ minimum: 0, maximum: 100_000 }),
  mode: Type.Optional(Type.Union([Type.Literal('significant-points'), Type.Literal('minmax-band')])),
  stat: Type.Optional(Type.Union(['count', 'min', 'max', 'first', 'last', 'twa', 'percent_good'].map((s) => Type.Literal(s)))),
  continuity: Type.Optional(Type.Union([Type.Literal('continuous'), Type.Literal('stepped')])),
}, { additionalProperties: false });

const PercentGood = Type.Number({ minimum: 0, maximum: 100, description: 'time-weighted percent of the covered time with good quality; 0 when the range covers no time' });
const Transitions = Type.Array(Type.Object({ t_ms: Type.Number(), kind: Type.String() }, { additionalProperties: false }));
export const RenderResponse = Type.Union([
  Type.Object({
    t_ms: Type.Array(Type.Number()),
    v: Type.Array(Type.Number()),
    provenance: Type.Object({ mode: Type.String(), percentGood: PercentGood, pointsScanned: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    transitions: Transitions,
  }, { additionalProperties: false }),
  Type.Object({
    t_ms: Type.Array(Type.Number(), { description: 'start of each pixel column that holds a point, float ms; columns without a point are left out of every array' }),
    v_min: Type.Array(Type.Number()),
    v_max: Type.Array(Type.Number()),
    stat: Type.Optional(Type.String()),
    v_stat: Type.Optional(Type.Array(Type.Number(), { description: 'the stat per column; twa and percent_good of a column that covers no time (its point ends the data) are that point\'s value and quality' })),
    percent_good: PercentGood,
    points_scanned: Type.Integer({ minimum: 0 }),
    transitions: Transitions,
  }, { additionalProperties: false }),
]);

