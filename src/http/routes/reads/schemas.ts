// Shapes of the Resolved reads area (spec "Resolved reads", "Provenance"). Every read body
// carries the spec's `resolve` object (the same schema as POST /v1/model/resolve, unknown
// fields rejected). Shared here so every read route (point reads, summary, render, live
// updates) declares the same body members and the same Provenance.
import { Type, type TSchema } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson } from '../../schemas/common.js';
import { ResolveObject } from '../model/schemas.js';

const closed = { additionalProperties: false } as const;

/** The spec's `resolve` object (select, scope, as_of_ns, include_retired, range). */
export const ReadResolve = ResolveObject;

export const RangeNs = Type.Object({ start_ns: Int64(), end_ns: Int64() }, { ...closed, $id: 'RangeNs' });

/** The spec's Provenance: every member optional; members nothing in the service produces yet are absent. */
export const Provenance = Type.Object({
  chunks_pruned: Type.Optional(Type.Integer({ minimum: 0, description: 'summary, render: stored chunks holding points of the window that were never decoded (rollup rows or chunk headers answered for them)' })),
  clock_suspect: Type.Optional(Type.Boolean()),
  compat_mode: Type.Optional(Type.String()),
  computed: Type.Optional(Type.String()),
  contains_unknown_arrival: Type.Optional(Type.Boolean()),
  lineage: Type.Optional(AnyJson()),
  lossy_ranges: Type.Optional(Type.Array(Type.Object({ start_ns: Int64(), end_ns: Int64(), tag: Type.String() }, closed))),
  model_as_of_ns: Type.Optional(Int64()),
  percent_good: Type.Optional(Type.Number()),
  percent_time_filtered: Type.Optional(Type.Number()),
  provisional_windows: Type.Optional(Type.Array(RangeNs)),
  quarantined_ranges: Type.Optional(Type.Array(RangeNs, { description: 'Not produced: the storage engine has no quarantine (a damaged chunk answers a chunk-corrupt error)' })),
  tiers_touched: Type.Optional(Type.Array(Type.Union([Type.Literal('hot'), Type.Literal('warm'), Type.Literal('cold')]))),
  window_resolved: Type.Optional(RangeNs),
}, { ...closed, $id: 'Provenance' });

export const PointValue = AnyJson({ description: 'number (float64), int64 integer, boolean, string, or {enum_set, ordinal, member} (member: the name the enum set gives the ordinal, null when it names none)' });
export const ReadPoint = Type.Object({ ts_ns: Int64(), value: PointValue, quality: Type.Integer({ minimum: 0 }) }, { ...closed, $id: 'ReadPoint' });

/**
 * Values in another unit: `default` applies to every attribute that has a unit, `attributes`
 * names a unit per attribute id (it wins over `default`). The unit must measure the
 * attribute's quantity kind; exact registry factors, rounded once.
 */
export const ReadUnits = Type.Object({
  default: Type.Optional(Uuid()),
  attributes: Type.Optional(Type.Record(Type.String({ format: 'uuid' }), Uuid())),
}, { ...closed, $id: 'ReadUnits' });

/** Which points a read drops by quality: bad (< 64), or bad and uncertain (< 192). */
export const ExcludeQuality = Type.Union([Type.Literal('bad'), Type.Literal('bad_and_uncertain')], { $id: 'ExcludeQuality' });

/** Body members every read shares. */
export const readBodyMembers = {
  resolve: ReadResolve,
  units: Type.Optional(ReadUnits),
};
/**
 * What a read may ask to have attached to each attribute's result (spec "Resolved reads":
 * attached additively per attribute; read-attachments.ts). On every read that answers
 * attributes over a window or at an instant: snapshot, raw, at, sampled, as-of, summary,
 * render. Not on raw-audit (an edit log, not data) nor on live subscriptions.
 */
export const attachRequestMembers = {
  include_annotations: Type.Optional(Type.Boolean({ description: 'Attach `annotations`: the annotations on each attribute (or its asset) overlapping the read\'s window' })),
  annotations_cluster_px: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'Merge annotations closer than this many pixels at the read\'s width (render: `width`; other reads: 1,000 pixels over the window) into clusters with counts and the range covered; 0 or absent: no clustering' })),
  include_episodes: Type.Optional(AnyJson({ description: 'Attach `episodes`: the episodes over each attribute\'s asset in the window' })),
  include_lineage: Type.Optional(Type.Boolean({ description: 'Attach `lineage` (also as provenance.lineage) for computed attributes' })),
};

/** An annotation as a read attaches it (spec Annotation, reduced), or a cluster of several. */
export const AnnotationOnRead = Type.Object({
  annotation_id: Type.Optional(Uuid()),
  start_ns: Int64(), end_ns: Int64(),
  text: Type.Optional(Nullable(Type.String())),
  tags: Type.Optional(Type.Array(Type.String())),
  redacted: Type.Optional(Type.Boolean()),
  target: Type.Optional(Type.String({ description: 'attribute, asset or episode: what the annotation was made on' })),
  cluster: Type.Optional(Type.Object({ count: Type.Integer({ minimum: 2 }), annotation_ids: Type.Array(Uuid()) }, closed)),
}, { ...closed, $id: 'AnnotationOnRead' });

/** Members read-attachments.ts may add to a result item. */
export const attachedResultMembers = {
  annotations: Type.Optional(Type.Array(AnnotationOnRead)),
  episodes: Type.Optional(AnyJson()),
  lineage: Type.Optional(AnyJson()),
};

/** Body members of a read over a window [start_ns, end_ns). */
export const windowMembers = {
  start_ns: Int64({ description: 'Window start, inclusive (ns)' }),
  end_ns: Int64({ description: 'Window end, exclusive (ns)' }),
};

/** Per-attribute result fields every read answers. */
export const resultMembers = {
  attribute_id: Uuid(),
  path: Type.String(),
  unit_id: Nullable(Uuid({ description: 'The unit of the values: the requested one, else the attribute\'s own' })),
  provenance: Provenance,
};

export const bareArray = <T extends TSchema>(item: T) => Type.Array(item);

// ---- Point reads (snapshot, raw, at, sampled, as-of, raw-audit) ----

const MaxPoints = Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'Most points the whole answer may hold (default 1,000,000); a larger read is refused with 400 read-too-large' }));
const filterMember = { exclude_quality: Type.Optional(ExcludeQuality) };

export const SnapshotBody = Type.Object({ ...readBodyMembers, ...attachRequestMembers, ...filterMember }, closed);
export const SnapshotItem = Type.Object({ ...resultMembers, ...attachedResultMembers, snapshot: Nullable(ReadPoint) }, closed);

export const RawBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...windowMembers, ...filterMember, max_points: MaxPoints,
  include_prior: Type.Optional(Type.Boolean({ description: 'Add `prior`: each attribute\'s last point before start_ns under the binding covering that instant, so a trend starts without a gap' })),
  layout: Type.Optional(Type.Union([Type.Literal('rows'), Type.Literal('columns')], { description: 'columns: each segment\'s points as typed columns, as GET /v1/series/{uuid}/raw?layout=columns (bins in msgpack, three arrays in JSON)' })),
}, closed);
export const RawSegment = Type.Object({ series: Uuid(), start_ns: Int64(), end_ns: Int64(), points: Type.Array(ReadPoint) }, closed);
/** A segment in the columnar layout: `points` as in RawColumns (msgpack) or RawColumnsJson (JSON) of the series raw route. */
export const RawColumnsSegment = Type.Object({
  series: Uuid(), start_ns: Int64(), end_ns: Int64(), layout: Type.Literal('columns'),
  value_type: Type.String(), enum_set: Nullable(Type.String()), count: Type.Integer({ minimum: 0 }),
  points: Type.Object({ ts_ns: Type.Unknown(), value: Type.Unknown(), quality: Type.Unknown() }, closed),
  encoding: Type.Optional(Type.Object({ ts_ns: Type.String(), value: Type.String(), quality: Type.String() }, closed)),
}, closed);
export const RawItem = Type.Object({
  ...resultMembers, ...attachedResultMembers, segments: Type.Union([Type.Array(RawSegment), Type.Array(RawColumnsSegment)]),
  prior: Type.Optional(Nullable(Type.Object({ series: Uuid(), ts_ns: Int64(), value: PointValue, quality: Type.Integer({ minimum: 0 }) }, closed))),
}, closed);

/** A value at an instant: a stored point, an interpolated value (interpolated: true), or no value with the reason. */
export const InstantValue = Type.Object({
  ts_ns: Int64(), value: Type.Optional(PointValue), quality: Type.Optional(Type.Integer({ minimum: 0 })),
  interpolated: Type.Optional(Type.Boolean()), no_value: Type.Optional(Type.String()), series: Type.Optional(Uuid()),
}, { ...closed, $id: 'InstantValue' });
export const AtBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...filterMember, max_points: MaxPoints,
  instants: Type.Array(Int64(), { minItems: 1, maxItems: 100_000, description: 'Instants (ns); answered in ascending order, duplicates once' }),
}, closed);
export const SampledBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...windowMembers, ...filterMember, max_points: MaxPoints,
  interval_ns: Int64({ minimum: 1, description: 'Spacing of the samples: start_ns, start_ns + interval_ns, ... < end_ns (at most 100,000)' }),
}, closed);
export const InstantItem = Type.Object({ ...resultMembers, ...attachedResultMembers, points: Type.Array(InstantValue) }, closed);

export const AsOfBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...windowMembers, ...filterMember, max_points: MaxPoints,
  known_at_ns: Int64({ description: 'Answer the data as it was known at this instant; the model too unless resolve.as_of_ns says otherwise' }),
}, closed);
export const AsOfItem = Type.Object({ ...resultMembers, ...attachedResultMembers, segments: Type.Array(RawSegment) }, closed);

export const RawAuditBody = Type.Object({
  ...readBodyMembers, ...windowMembers,
  max_entries: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Most entries the whole answer may hold (default 10,000); more is refused with 400 read-too-large' })),
}, closed);
const Version = Type.Object({ value: PointValue, quality: Type.Integer({ minimum: 0 }) }, closed);
export const AuditEntry = Type.Object({
  series: Uuid(), ts_ns: Int64(), superseded_at_ns: Int64(), principal: Type.String(),
  old: Version, new: Nullable(Version),
}, closed);
export const RawAuditItem = Type.Object({ ...resultMembers, entries: Type.Array(AuditEntry) }, closed);
