// Shapes of the Model area: the spec's Asset projection, Asset property, Template,
// Effective attribute, View, Model event transaction and the resolve object, plus the
// bodies of the operations the spec lists without showing (decisions in docs/decisions.md).
import { Type } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, Limit, EntityName } from '../../schemas/common.js';
import { CONTINUITY_CLASSES, WRITER_CLASSES } from '../../../model/vocabularies.js';

export const ContinuityClassSchema = Type.Union(CONTINUITY_CLASSES.map((c) => Type.Literal(c)), {
  $id: 'ContinuityClass', description: 'continuous (interpolated between points), stepped (a value holds until the next), event (points stand alone)',
});
/** One vocabulary for an attribute's writer_class and a series' writable_class. */
export const WriterClassSchema = Type.Union(WRITER_CLASSES.map((c) => Type.Literal(c)), {
  $id: 'WriterClass', description: 'collector (streamed over gRPC), calculation (the calculation engine), manual (entered by a person), import (bulk loads and backfills)',
});

const closed = { additionalProperties: false } as const;
const Reason = Type.Optional(Type.String({ maxLength: 2000 }));
const AsOf = Type.Optional(Int64({ minimum: 0, description: 'Read the model as it was at this instant (ns since the epoch)' }));

export const UuidParams = Type.Object({ uuid: Uuid() }, closed);
export const AsOfQuery = Type.Object({ as_of_ns: AsOf }, closed);

export const AssetProjection = Type.Object({
  asset_id: Uuid(), parent_id: Nullable(Uuid()), name: Type.String(), template_id: Nullable(Uuid()), retired: Type.Boolean(),
  tx_id: Int64(), path: Nullable(Type.String()), timezone: Nullable(Type.String()), effective_timezone: Type.String(),
  timezone_source_asset: Nullable(Uuid()),
}, { ...closed, $id: 'AssetProjection' });

export const CreateAssetBody = Type.Object({
  name: EntityName({ segment: true }), parent: Type.Optional(Nullable(Uuid())), reason: Reason, template_id: Type.Optional(Nullable(Uuid())),
  timezone: Type.Optional(Nullable(Type.String({ description: 'IANA time zone; null or absent inherits the parent\'s' }))),
}, closed);

export const PatchAssetBody = Type.Object({
  expected_tx: Type.Optional(Int64()), move: Type.Optional(Nullable(Uuid({ description: 'New parent; null moves to the top level' }))),
  reason: Reason, rename: Type.Optional(EntityName({ segment: true })), retire: Type.Optional(Type.Boolean()), unretire: Type.Optional(Type.Boolean()),
  timezone: Type.Optional(Nullable(Type.String())),
}, closed);

export const InstantiateBody = Type.Object({ reason: Reason }, closed);

export const TreeQuery = Type.Object({
  root: Type.Optional(Uuid()), depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })), as_of_ns: AsOf,
  include_retired: Type.Optional(Type.Boolean()),
}, closed);

export interface TreeNodeShape {
  asset_id: string; name: string; path: string; template_id: string | null; retired: boolean; tx_id: bigint; children: TreeNodeShape[];
}
export const TreeNode = Type.Recursive((Self) => Type.Object({
  asset_id: Uuid(), name: Type.String(), path: Type.String(), template_id: Nullable(Uuid()), retired: Type.Boolean(), tx_id: Int64(),
  children: Type.Array(Self),
}, closed), { $id: 'AssetTreeNode' });

export const TreeResponse = Type.Object({ model_tx: Int64(), roots: Type.Array(TreeNode), node_count: Type.Integer({ minimum: 0 }) }, closed);

export const ResolvePathQuery = Type.Object({
  path: Type.String({ minLength: 2, description: 'An asset path (/Site/Area/Pump-101) or an attribute path (/Site/Area/Pump-101|Flow)' }), as_of_ns: AsOf,
}, closed);

export const PropertiesQuery = Type.Object({ effective: Type.Optional(Type.Boolean()), as_of_ns: AsOf }, closed);
export const OwnProperty = Type.Object({ property_id: Uuid(), asset_id: Uuid(), key: Type.String(), value: AnyJson(), tx_id: Int64(), valid_from_ns: Int64() }, closed);
export const EffectiveProperty = Type.Object({ key: Type.String(), source_asset: Uuid(), value: AnyJson() }, closed);
export const PropertiesResponse = Type.Object({ properties: Type.Union([Type.Array(OwnProperty), Type.Array(EffectiveProperty)]) }, closed);
export const PropertyParams = Type.Object({ uuid: Uuid(), key: Type.String({ minLength: 1, maxLength: 200 }) }, closed);
export const PutPropertyBody = Type.Object({ value: AnyJson(), reason: Reason, valid_from_ns: Type.Optional(Int64({ minimum: 0 })) }, closed);
export const DeletePropertyQuery = Type.Object({ reason: Reason }, closed);

export const AttributeDefinition = Type.Object({
  name: EntityName({ segment: true }), quantity_kind_id: Nullable(Uuid()), default_unit_id: Nullable(Uuid()), continuity_class: ContinuityClassSchema,
  writer_class: WriterClassSchema, enum_set_id: Nullable(Uuid()), limit_traits: AnyJson(), lifecycle_policy: Nullable(AnyJson()),
  entry_cadence: Nullable(AnyJson()), overridable: Type.Array(Type.String()),
}, { ...closed, $id: 'AttributeDefinition' });

export const Template = Type.Object({
  template_id: Uuid(), name: Type.String(), notes: Type.String(), permitted_children: Type.Array(Uuid()), tx_id: Int64(),
  version: Type.Integer({ minimum: 1 }),
  attributes: Type.Array(Type.Tuple([Uuid(), AttributeDefinition])),
}, { ...closed, $id: 'Template' });
export const TemplateBody = Type.Object({
  name: EntityName(), attributes: Type.Optional(Type.Array(AttributeDefinition)), notes: Type.Optional(Type.String({ maxLength: 10_000 })),
  permitted_children: Type.Optional(Type.Array(Uuid())), reason: Reason,
}, closed);
export const TemplateList = Type.Object({ templates: Type.Array(Template) }, closed);

export const EffectiveAttribute = Type.Object({
  attribute_id: Uuid(), asset_id: Uuid(), name: Type.String(), attr_def_id: Nullable(Uuid()), quantity_kind_id: Nullable(Uuid()),
  display_unit_id: Nullable(Uuid()), continuity_class: ContinuityClassSchema, writer_class: WriterClassSchema, enum_set_id: Nullable(Uuid()),
  limit_traits: AnyJson(), lifecycle_policy: Nullable(AnyJson()), entry_cadence: Nullable(AnyJson()), retired: Type.Boolean(),
  overridden_fields: Type.Array(Type.String()), tx_id: Int64(),
}, { ...closed, $id: 'EffectiveAttribute' });
export const CreateAttributeBody = Type.Object({
  asset_id: Uuid(), attr_def_id: Type.Optional(Nullable(Uuid())), definition: Type.Optional(Nullable(AttributeDefinition)),
  overrides: Type.Optional(Type.Record(Type.String(), AnyJson())), reason: Reason,
}, closed);
export const PatchAttributeBody = Type.Object({
  expected_tx: Type.Optional(Int64()), overrides: Type.Optional(Type.Record(Type.String(), AnyJson())),
  retire: Type.Optional(Type.Boolean()), unretire: Type.Optional(Type.Boolean()), reason: Reason,
}, closed);
export const InstantiateResponse = Type.Object({ asset: AssetProjection, attributes: Type.Array(EffectiveAttribute), tx_id: Int64() }, closed);

export const Binding = Type.Object({
  binding_id: Uuid(), attribute_id: Uuid(), series_id: Uuid(), from_ns: Int64(), to_ns: Nullable(Int64()), tx_id: Int64(),
}, { ...closed, $id: 'Binding' });
export const CreateBindingBody = Type.Object({
  attribute_id: Uuid(), series_id: Nullable(Uuid({ description: 'null closes the open binding at from_ns (unbind)' })),
  from_ns: Int64({ minimum: 0 }), to_ns: Type.Optional(Nullable(Int64({ minimum: 0 }))), reason: Reason,
}, closed);
export const BindingResult = Type.Object({ binding: Nullable(Binding), closed: Type.Array(Uuid()), tx_id: Int64() }, closed);
export const BindingHistory = Type.Object({ bindings: Type.Array(Binding) }, closed);

export const View = Type.Object({ view_id: Uuid(), name: Type.String(), retired: Type.Boolean(), tx_id: Int64() }, { ...closed, $id: 'View' });
const ViewMember = Type.Object({ asset_id: Uuid(), parent_asset_id: Nullable(Uuid()) }, closed);
export const CreateViewBody = Type.Object({ name: EntityName(), members: Type.Optional(Type.Array(ViewMember, { maxItems: 100_000 })), reason: Reason }, closed);
export const PatchViewBody = Type.Object({
  expected_tx: Type.Optional(Int64()), name: Type.Optional(EntityName()), retire: Type.Optional(Type.Boolean()),
  unretire: Type.Optional(Type.Boolean()), members: Type.Optional(Type.Array(ViewMember, { maxItems: 100_000 })), reason: Reason,
}, closed);
export const ViewListQuery = Type.Object({ as_of_ns: AsOf, include_retired: Type.Optional(Type.Boolean()) }, closed);
export const ViewList = Type.Object({ views: Type.Array(View) }, closed);
export const ViewTreeResponse = Type.Object({ view: View, roots: Type.Array(TreeNode) }, closed);

export const Link = Type.Object({
  link_id: Uuid(), from_asset: Uuid(), to_asset: Uuid(), link_type: Type.String(), retired: Type.Boolean(), tx_id: Int64(),
}, { ...closed, $id: 'Link' });
export const CreateLinkBody = Type.Object({ from_asset: Uuid(), to_asset: Uuid(), link_type: Type.String({ description: 'Link-type registry entry, by name or uuid' }), reason: Reason }, closed);
export const PatchLinkBody = Type.Object({ retire: Type.Optional(Type.Boolean()), restore: Type.Optional(Type.Boolean()), expected_tx: Type.Optional(Int64()), reason: Reason }, closed);
export const AssetLinksQuery = Type.Object({
  direction: Type.Optional(Type.Union([Type.Literal('out'), Type.Literal('in'), Type.Literal('both')])),
  include_retired: Type.Optional(Type.Boolean()), as_of_ns: AsOf,
}, closed);
export const LinkList = Type.Object({ links: Type.Array(Link) }, closed);

const LinkWalk = Nullable(Type.Object({ asset: Uuid(), depth: Type.Optional(Type.Integer({ minimum: 0 })), via: Type.Array(Type.String()) }, closed));
export const ResolveObject = Type.Object({
  select: Type.Union([
    Type.Object({ kind: Type.Literal('attributes_named'), content: Type.Object({ name: Type.String() }, closed) }, closed),
    Type.Object({ kind: Type.Literal('attribute_ids'), content: Type.Array(Uuid(), { maxItems: 200_000 }) }, closed),
    Type.Object({ kind: Type.Literal('all') }, closed),
  ]),
  scope: Type.Object({
    downstream_of: Type.Optional(LinkWalk), upstream_of: Type.Optional(LinkWalk),
    template: Type.Optional(Nullable(Type.Union([
      Type.Object({ kind: Type.Literal('template_id'), content: Uuid() }, closed),
      Type.Object({ kind: Type.Literal('template_name'), content: Type.String() }, closed),
    ]))),
    under: Type.Optional(Nullable(Type.Union([
      Type.Object({ kind: Type.Literal('path'), content: Type.String() }, closed),
      Type.Object({ kind: Type.Literal('asset_id'), content: Uuid() }, closed),
    ]))),
  }, closed),
  as_of_ns: Type.Optional(Nullable(Int64({ minimum: 0 }))),
  include_retired: Type.Optional(Type.Boolean()),
  range: Type.Optional(Nullable(Type.Array(Int64(), { minItems: 2, maxItems: 2 }))),
}, { ...closed, $id: 'ResolveObject' });
export const ResolvedAttribute = Type.Object({
  ...EffectiveAttribute.properties, path: Type.String(), asset_path: Type.String(), bindings: Type.Array(Binding),
}, closed);
export const ResolveResponse = Type.Object({ model_tx: Int64(), results: Type.Array(ResolvedAttribute) }, closed);
/** An asset path answers the Asset projection; an attribute path (with "|") the attribute, with the bindings covering the instant read. */
export const ResolvePathResponse = Type.Union([AssetProjection, ResolvedAttribute]);

export const StagingQuery = Type.Object({ limit: Type.Optional(Limit(1000)), cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })) }, closed);
export const StagedSeries = Type.Object({ series_id: Uuid(), source_name: Type.String(), value_type: Type.String(), created_ns: Int64() }, closed);
export const StagingPage = Type.Object({ items: Type.Array(StagedSeries), next_cursor: Nullable(Type.String()) }, closed);

export const ModelEvent = Type.Object({ entity_kind: Type.String(), entity_id: Uuid(), action: Type.String(), details: AnyJson() }, closed);
export const EventTransaction = Type.Object({
  tx_id: Int64(), committed_ns: Int64(), principal: Type.String(), reason: Type.String(), events: Type.Array(ModelEvent),
}, { ...closed, $id: 'ModelEventTransaction' });
export const EventsQuery = Type.Object({ since_tx: Type.Optional(Int64({ minimum: 0 })), limit: Type.Optional(Int64({ minimum: 1 })) }, closed);
export const SubscribeBody = Type.Object({ since_tx: Type.Optional(Int64({ minimum: 0 })), entity_kinds: Type.Optional(Type.Array(Type.String())) }, closed);
