// Shapes of the Episodes area. The template creation body is the spec's "Episode template
// (creation body)"; the episode, link, query and traverse shapes are "not shown" in the
// spec and designed here (docs/decisions.md, episodes, 2026-11-27).
import { Type, type TSchema } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, EntityName } from '../../schemas/common.js';
import { ReadResolve, ReadUnits, Provenance } from '../reads/schemas.js';

const closed = { additionalProperties: false } as const;
const Reason = Type.Optional(Type.String({ maxLength: 2000, description: 'Recorded with the model transaction' }));
const AsOf = Type.Optional(Int64({ minimum: 0, description: 'Read as it was at this instant (ns since the epoch)' }));

export const IdParams = Type.Object({ id: Uuid() }, closed);
export const AsOfQuery = Type.Object({ as_of_ns: AsOf }, closed);

// ---- Templates ----

const TemplateRoleBody = Type.Object({
  cardinality: Type.String({ description: '`one` (at most one asset in the role) or `many`' }),
  required: Type.Boolean({ description: 'An episode must have an asset in this role' }),
  role: Type.String({ minLength: 1, description: 'An episode-roles registry entry, by name or id' }),
}, closed);
const TemplateAttributeBody = Type.Object({
  capture: Nullable(Type.String({ description: 'null (entered by hand), or <statistic>(<role>|<attribute>) with statistic at-open, at-close, min, max, avg or twa: captured from the resolved attribute of the asset in the role' })),
  class: Type.String({ description: 'The value class: number, integer, boolean, string or enum' }),
  enum_set: Nullable(Type.String({ description: 'enum-sets registry entry (name or id); enum attributes only' })),
  name: EntityName({ segment: true }),
  quantity_kind: Nullable(Type.String({ description: 'quantity-kinds registry entry (name or id)' })),
  unit: Nullable(Type.String({ description: 'units registry entry (name or id); captures are converted to it' })),
}, closed);

export const TemplateBody = Type.Object({
  name: EntityName(),
  family: EntityName({ description: 'A grouping of templates (batch, excursion, shift...)' }),
  overlap: Type.String({ description: '`allowed`, `forbidden-per-asset` (no two episodes of the template on one asset at once) or `forbidden-per-role` (on one asset in one role)' }),
  retro_edit_approval: Type.String({ description: 'Only `none` is accepted: edits to closed episodes apply at once' }),
  attributes: Type.Optional(Type.Array(TemplateAttributeBody, { maxItems: 200 })),
  naming_pattern: Type.Optional(Nullable(Type.String({ maxLength: 400, description: 'Episode names from {template}, {family}, {start} (ISO 8601 UTC) and {asset:<role>}' }))),
  permitted_children: Type.Optional(Type.Array(Type.String(), { maxItems: 200, description: 'Templates (name or id) whose episodes may have an episode of this template as parent' })),
  reason: Reason,
  roles: Type.Optional(Type.Array(TemplateRoleBody, { maxItems: 50 })),
  trigger: Type.Optional(Nullable(Type.Object({
    min_duration_ms: Int64({ minimum: 0, description: 'The condition must hold this long before the episode opens' }),
    open_when: Type.String({ maxLength: 4000, description: 'An expression over the role assets\' attributes' }),
  }, closed))),
}, closed);

export const Created = Type.Object({ id: Uuid(), version: Int64() }, closed);

const TemplateRole = Type.Object({ role: Type.String(), role_id: Uuid(), cardinality: Type.String(), required: Type.Boolean() }, closed);
const TemplateAttribute = Type.Object({
  name: Type.String(), class: Type.String(), capture: Nullable(Type.String()),
  unit: Nullable(Type.String()), unit_id: Nullable(Uuid()), quantity_kind: Nullable(Type.String()), quantity_kind_id: Nullable(Uuid()),
  enum_set: Nullable(Type.String()), enum_set_id: Nullable(Uuid()),
}, closed);
export const EpisodeTemplate = Type.Object({
  id: Uuid(), version: Int64(), name: Type.String(), family: Type.String(), overlap: Type.String(), retro_edit_approval: Type.String(),
  roles: Type.Array(TemplateRole), attributes: Type.Array(TemplateAttribute), naming_pattern: Nullable(Type.String()),
  permitted_children: Type.Array(Type.String()),
  trigger: Nullable(Type.Object({ open_when: Type.String(), min_duration_ms: Int64() }, closed)),
  tx_id: Int64(),
}, { ...closed, $id: 'EpisodeTemplate' });
export const TemplateList = Type.Object({ templates: Type.Array(EpisodeTemplate) }, closed);
export const TemplateListQuery = Type.Object({ as_of_ns: AsOf, family: Type.Optional(Type.String()) }, closed);
export const TemplateQuery = Type.Object({
  as_of_ns: AsOf,
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'A past version (default: the version valid at as_of_ns, or the current one)' })),
}, closed);

// ---- Episodes ----

const AssetInRole = Type.Object({ role: Type.String({ minLength: 1 }), asset_id: Uuid() }, closed);
const EnteredValues = Type.Record(Type.String(), AnyJson(), { description: 'Entered attribute values by name (null clears an entered value)' });

export const CreateEpisodeBody = Type.Object({
  template_id: Uuid(),
  name: Type.Optional(EntityName({ description: 'Default: from the template\'s naming pattern' })),
  assets: Type.Optional(Type.Array(AssetInRole, { maxItems: 1000 })),
  start_ns: Int64({ minimum: 0 }),
  end_ns: Type.Optional(Nullable(Int64({ minimum: 0, description: 'Given: the episode is created closed and its attributes captured' }))),
  parent_id: Type.Optional(Nullable(Uuid())),
  attributes: Type.Optional(EnteredValues),
  reason: Reason,
}, closed);

export const EditEpisodeBody = Type.Object({
  expected_version: Type.Integer({ minimum: 1, description: 'The version edited; another current version is a 409' }),
  name: Type.Optional(EntityName()),
  assets: Type.Optional(Type.Array(AssetInRole, { maxItems: 1000 })),
  start_ns: Type.Optional(Int64({ minimum: 0 })),
  end_ns: Type.Optional(Int64({ minimum: 0, description: 'Closed episodes only' })),
  parent_id: Type.Optional(Nullable(Uuid())),
  attributes: Type.Optional(EnteredValues),
  reason: Reason,
}, closed);

export const CloseBody = Type.Object({
  end_ns: Type.Optional(Int64({ minimum: 0, description: 'Default: now' })),
  expected_version: Type.Optional(Type.Integer({ minimum: 1 })),
  reason: Reason,
}, closed);

export const VoidBody = Type.Object({
  reason: Type.String({ minLength: 1, maxLength: 2000, description: 'Why the episode is void (kept with it)' }),
  expected_version: Type.Optional(Type.Integer({ minimum: 1 })),
}, closed);

const EpisodeValue = Type.Object({
  value: AnyJson(), source: Type.Union([Type.Literal('entered'), Type.Literal('captured')]), no_value: Type.Optional(Type.String()),
}, closed);
export const Episode = Type.Object({
  id: Uuid(), template_id: Uuid(), template_version: Int64(), template: Type.String(), name: Type.String(),
  state: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('void')]),
  start_ns: Int64(), end_ns: Nullable(Int64()), parent_id: Nullable(Uuid()),
  assets: Type.Array(Type.Object({ role: Type.String(), asset_id: Uuid() }, closed)),
  attributes: Type.Record(Type.String(), EpisodeValue),
  void_reason: Nullable(Type.String()), origin: Type.Union([Type.Literal('manual'), Type.Literal('trigger')]),
  version: Int64(), tx_id: Int64(),
}, { ...closed, $id: 'Episode' });

// ---- Genealogy ----

export const CreateLinkBody = Type.Object({
  to_episode: Uuid({ description: 'The link runs from the episode in the path to this one' }),
  link_type: Type.String({ minLength: 1, description: 'A link-types registry entry, by name or id (consumed-by, produced-from, ...)' }),
  reason: Reason,
}, closed);
export const EpisodeLink = Type.Object({
  link_id: Uuid(), from_episode: Uuid(), to_episode: Uuid(), link_type: Type.String(), link_type_id: Uuid(), tx_id: Int64(),
}, { ...closed, $id: 'EpisodeLink' });
export const LinkList = Type.Object({ links: Type.Array(EpisodeLink) }, closed);

export const TraverseBody = Type.Object({
  start: Type.Array(Uuid(), { minItems: 1, maxItems: 1000, description: 'The episodes the walk starts from' }),
  direction: Type.Union([Type.Literal('upstream'), Type.Literal('downstream'), Type.Literal('both')], { description: 'downstream follows links from → to; upstream to → from' }),
  depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Most hops (default 10)' })),
  link_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 50, description: 'Only these link types (registry names or ids)' })),
}, closed);
export const TraverseResult = Type.Object({
  episodes: Type.Array(Type.Object({ depth: Type.Integer({ minimum: 0 }), episode: Episode }, closed)),
  links: Type.Array(EpisodeLink),
  truncated: Type.Boolean({ description: 'The depth bound stopped the walk with links left to follow' }),
}, closed);

// ---- Query ----

const Predicate = Type.Object({
  name: Type.String({ minLength: 1 }),
  op: Type.Union(['=', '!=', '<', '<=', '>', '>='].map((o) => Type.Literal(o))),
  value: Type.Union([Type.Number(), Int64(), Type.String(), Type.Boolean()]),
}, closed);
const AssetFilter = Type.Union([
  Type.Object({ kind: Type.Literal('asset_id'), content: Uuid() }, closed),
  Type.Object({ kind: Type.Literal('under'), content: Uuid({ description: 'The asset and its subtree' }) }, closed),
  Type.Object({ kind: Type.Literal('view'), content: Uuid({ description: 'The assets a view places, with their subtrees' }) }, closed),
], { description: 'Episodes with at least one asset in this set' });
export const QueryMembers = {
  template_ids: Type.Optional(Type.Array(Uuid(), { minItems: 1, maxItems: 100 })),
  asset: Type.Optional(AssetFilter),
  overlaps: Type.Optional(Type.Object({ start_ns: Int64(), end_ns: Int64() }, { ...closed, description: 'Episodes overlapping [start_ns, end_ns); an open one lasts until now and on' })),
  states: Type.Optional(Type.Array(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('void')]), { minItems: 1, uniqueItems: true, description: 'Default open and closed: void episodes only when asked' })),
  attributes: Type.Optional(Type.Array(Predicate, { maxItems: 20, description: 'All must hold: compares the stored (entered or captured) value' })),
  as_of_ns: Type.Optional(Int64({ minimum: 0, description: 'Answer from the model as it was at this instant: the episode versions valid then, and a subtree or view as the tree was then (default: now)' })),
};
export const QueryBody = Type.Object({
  ...QueryMembers,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 100)' })),
  cursor: Type.Optional(Type.String({ maxLength: 400 })),
}, closed);
export const QueryPage = Type.Object({ items: Type.Array(Episode), next_cursor: Nullable(Type.String()) }, closed);

// ---- Overlay ----

export const OverlayEpisodes = Type.Union([
  Type.Object({ kind: Type.Literal('ids'), ids: Type.Array(Uuid(), { minItems: 1, maxItems: 1000 }) }, closed),
  Type.Object({ kind: Type.Literal('query'), query: Type.Object({ ...QueryMembers }, closed), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }, closed),
  Type.Object({
    kind: Type.Literal('lives'), template_id: Uuid(), asset_ids: Type.Array(Uuid(), { minItems: 1, maxItems: 1000 }),
    lives: Type.Integer({ minimum: 1, maximum: 1000, description: 'The last N closed episodes of the template on each asset' }),
    before_ns: Type.Optional(Int64({ description: 'Only episodes that started before this instant (default: now)' })),
  }, closed),
], { description: 'Which episodes: by id, by a query, or life over life (the last N per asset)' });
export const OverlayBody = Type.Object({
  resolve: ReadResolve,
  episodes: OverlayEpisodes,
  points: Type.Integer({ minimum: 0, maximum: 10_000, description: 'Instants per episode on the u grid' }),
  mode: Type.Literal('u-grid'),
  units: Type.Optional(ReadUnits),
  layout: Type.Optional(Type.Union([Type.Literal('rows'), Type.Literal('columns')], {
    description: 'rows (default): the spec\'s shape, a map per point, JSON. columns: the same values as columns per episode x attribute (u once for all, ts_ns once per episode; '
      + 'msgpack bins with Accept: application/x-msgpack, arrays in JSON), the no_value reasons and the series once per run of instants',
  })),
}, closed);
const OverlayPoint = Type.Object({
  u: Type.Number(), ts_ns: Int64(), value: Type.Optional(AnyJson()), quality: Type.Optional(Type.Integer({ minimum: 0 })),
  interpolated: Type.Optional(Type.Boolean()), no_value: Type.Optional(Type.String()),
  series: Type.Optional(Uuid({ description: 'The series the value came from (the binding covering the instant)' })),
}, closed);
const Run = (extra: Record<string, TSchema>) => Type.Object({ from: Type.Integer({ minimum: 0 }), to: Type.Integer({ minimum: 0, description: 'Exclusive' }), ...extra }, closed);
/** The columns layout: per episode the grid's instants once, per attribute the values as columns (bins in msgpack, see encoding). */
export const OverlayColumnsResult = Type.Object({
  layout: Type.Literal('columns'),
  u: Type.Unknown({ description: 'The u grid, shared by every episode: JSON array of numbers; msgpack bin of float64le' }),
  episodes: Type.Array(Type.Object({
    episode: Type.Object({ id: Uuid(), name: Type.String(), template: Type.String(), start_ns: Int64(), end_ns: Nullable(Int64()) }, closed),
    ts_ns: Type.Unknown({ description: 'The instant of each u on this episode: JSON array of int64; msgpack bin of int64le' }),
    series: Type.Array(Type.Object({
      attribute_id: Uuid(), path: Type.String(), unit_id: Nullable(Uuid()), count: Type.Integer({ minimum: 0 }),
      points: Type.Object({
        value: Type.Unknown({ description: 'JSON: values, null where no_value says why; msgpack: bin of float64le (NaN where no value) when every value is a number, else an array' }),
        quality: Type.Unknown({ description: 'JSON: integers; msgpack: bin of uint8 or uint32le (encoding.quality); 0 where no value' }),
        interpolated: Type.Unknown({ description: 'JSON: 0 or 1 per point; msgpack: bin of uint8' }),
      }, closed),
      no_value: Type.Array(Run({ reason: Type.String() }), { description: 'Runs of instants [from, to) without a value, with the reason' }),
      segments: Type.Array(Run({ series: Uuid() }), { description: 'Runs of instants [from, to) and the series (binding) their values come from' }),
      encoding: Type.Optional(Type.Object({ value: Type.String(), quality: Type.String(), interpolated: Type.String(), ts_ns: Type.String() }, closed)),
      provenance: Provenance,
    }, closed)),
  }, closed)),
  unresolved_lives: Type.Optional(Type.Array(Type.Object({ asset_id: Uuid(), reason: Type.String() }, closed))),
}, closed);
export const OverlayRowsResult = Type.Object({
  episodes: Type.Array(Type.Object({
    episode: Type.Object({ id: Uuid(), name: Type.String(), template: Type.String(), start_ns: Int64(), end_ns: Nullable(Int64()) }, closed),
    series: Type.Array(Type.Object({ attribute_id: Uuid(), path: Type.String(), unit_id: Type.Optional(Nullable(Uuid())), points: Type.Array(OverlayPoint), provenance: Provenance }, closed)),
  }, closed)),
  unresolved_lives: Type.Optional(Type.Array(Type.Object({ asset_id: Uuid(), reason: Type.String() }, closed))),
}, closed);
export const OverlayResult = Type.Union([OverlayRowsResult, OverlayColumnsResult]);
