// Shapes of the Displays area (spec "Display folder", "Display document record",
// "DisplayDocument", "Widget", "WidgetKind", widget `range`, trend bindings and attribute
// selectors), followed to the letter, plus the bodies of the operations the spec lists
// without showing (decisions in docs/decisions.md, "Displays").
//
// Unknown widget kinds are kept, never a schema error: `type` accepts the WidgetKind
// values and any other non-empty string (src/displays/widget-kinds.ts says which kinds
// the portal draws). The `x` bags are any JSON object, stored as written.
import { Type } from '@sinclair/typebox';
import { Int64, Uuid, Nullable, AnyJson, EntityName } from '../../schemas/common.js';
import { WIDGET_KINDS } from '../../../displays/widget-kinds.js';
import { LINT_SEVERITIES } from '../../../displays/lint-codes.js';

const closed = { additionalProperties: false } as const;
const XBag = Type.Record(Type.String(), Type.Unknown(), { description: 'Reserved extension bag: stored and returned exactly as written (member order, integers of any size), never interpreted' });

export const WidgetKind = Type.Union(WIDGET_KINDS.map((k) => Type.Literal(k)), { $id: 'WidgetKind' });

export const AttributeSelector = Type.Union([
  Type.Object({ kind: Type.Literal('template-relative'), name: Type.String({ minLength: 1, description: 'An attribute of the context asset ("Flow"), or of an asset under it ("Motor/Bearing|Temperature")' }) }, closed),
  Type.Object({ kind: Type.Literal('attribute-id'), attribute_id: Uuid() }, closed),
  Type.Object({ kind: Type.Literal('unresolved'), name: Type.String(), reason: Type.String() }, closed),
], { $id: 'AttributeSelector' });

export const Pen = Type.Object({
  glyph: Type.Union(['circle', 'square', 'triangle', 'diamond'].map((g) => Type.Literal(g))),
  token: Type.String({ description: 'A colour token of the portal\'s palette' }),
}, closed);

export const TrendTrace = Type.Object({
  attribute: AttributeSelector,
  continuity: Type.Union(['continuous', 'stepped', 'event'].map((c) => Type.Literal(c))),
  label: Type.String(),
  limits: Type.Optional(AnyJson()),
  pen: Pen,
  quantity_kind_id: Type.Optional(Nullable(Uuid())),
  scale_group: Type.String(),
  unit_id: Type.Optional(Nullable(Uuid())),
}, { ...closed, $id: 'TrendTrace' });

export const TrendBindings = Type.Object({ kind: Type.Literal('trend'), traces: Type.Array(TrendTrace) }, { ...closed, $id: 'TrendBindings' });

const TimeText = Type.Union([Type.String({ minLength: 1 }), Int64()], { description: 'A time expression ("*-8h", "t+6h", an ISO 8601 instant) or ns since the epoch' });

export const ResolvedWindow = Type.Union([
  Type.Object({ state: Type.Literal('resolved'), start: Type.Union([Type.String(), Int64()]), end: Type.Union([Type.String(), Int64()]) }, closed),
  Type.Object({ state: Type.Literal('unresolved'), reason: Type.String() }, closed),
], { $id: 'ResolvedWindow' });

export const WidgetRange = Type.Union([
  Type.Object({ type: Type.String(), start: TimeText, end: TimeText }, closed),
  Type.Object({ type: Type.String(), last: Type.Union([Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w)$' }), Int64({ minimum: 1 })], { description: 'A duration ("8h") or ns' }) }, closed),
  Type.Object({
    type: Type.String(),
    anchor: AnyJson({ description: 'The authored anchor, kept as written: {kind: episode, episode_id, before?, after?} or {kind: instant, at, before?, after?}' }),
    resolved: Type.Optional(Nullable(ResolvedWindow)),
  }, closed),
], { $id: 'WidgetRange', description: 'A window: start and end, the last duration, or anchored (the anchor is never erased; an unresolvable one gives a reason, never a substituted range)' });

export const Widget = Type.Object({
  type: Type.Union([WidgetKind, Type.String({ minLength: 1 })], { description: 'A WidgetKind; an unknown kind is kept and drawn as a placeholder' }),
  id: Type.String({ minLength: 1 }),
  bindings: Type.Optional(AnyJson({ description: 'Trend: TrendBindings. Other kinds: an object; selectors are read from `traces[].attribute`, `attribute` and `attributes[]`' })),
  grid: Type.Optional(AnyJson()),
  layer: Type.Optional(Nullable(Type.String())),
  link: Type.Optional(AnyJson()),
  multistate: Type.Optional(Nullable(Type.Object({ bands: Type.Array(Type.Unknown()) }, closed))),
  range: Type.Optional(WidgetRange),
  time_override: Type.Optional(Nullable(Type.Object({ start: TimeText, end: TimeText }, closed))),
  x: Type.Optional(XBag),
}, { ...closed, $id: 'Widget' });

export const DisplayDocument = Type.Object({
  kind: Type.Union(['display', 'playlist', 'session'].map((k) => Type.Literal(k)), { $id: 'DocKind' }),
  meta: Type.Object({
    layout: Type.Union([Type.Literal('structured'), Type.Literal('free')]),
    name: EntityName({ description: 'The display\'s name (the record\'s `name`)' }),
    description: Type.Optional(Nullable(Type.String())),
    form_factors: Type.Optional(Type.Array(Type.String())),
    template: Type.Optional(Nullable(Type.String({ description: 'The asset template the display is written for (its name): template-relative selectors are checked against it' }))),
  }, closed),
  service_display: Type.String({ pattern: '^[0-9]{1,4}\\.[0-9]{1,4}$', description: 'Schema version \'MAJOR.MINOR\'' }),
  layers: Type.Optional(Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), visible: Type.Union([Type.Boolean(), Type.Record(Type.String(), Type.Unknown())], { description: 'A boolean, or a binding object kept as raw JSON' }),
  }, closed))),
  priority_order: Type.Optional(Type.Array(Type.String())),
  scale_groups: Type.Optional(Type.Array(Type.Object({
    id: Type.String(), min: Nullable(Type.Number()), max: Nullable(Type.Number()),
    mode: Type.Union([Type.Literal('template-range'), Type.Literal('autofit'), Type.Literal('explicit')]),
  }, closed))),
  time: Type.Optional(Type.Object({
    start: Type.String(), end: Type.String(),
    navigator: Type.Object({ visible: Type.Boolean() }, closed),
    timezone: Type.Union([
      Type.Object({ mode: Type.Literal('automatic') }, closed),
      Type.Object({ mode: Type.Literal('explicit'), timezone: Type.String() }, closed),
    ]),
  }, closed)),
  widgets: Type.Optional(Type.Array(Widget, { maxItems: 2000 })),
  x: Type.Optional(XBag),
}, { ...closed, $id: 'DisplayDocument' });

export const LintFinding = Type.Object({
  widget_id: Nullable(Type.String()), code: Type.String(), message: Type.String(),
  severity: Type.Union(LINT_SEVERITIES.map((s) => Type.Literal(s))),
}, { ...closed, $id: 'DisplayLintFinding' });

export const DisplayRecord = Type.Object({
  id: Uuid(), folder_id: Uuid(), name: Type.String(), kind: Type.String(), schema_version: Type.String(), tx_id: Int64(),
  document: DisplayDocument, lint: Type.Array(LintFinding),
}, { ...closed, $id: 'DisplayRecord' });

export const DisplayFolder = Type.Object({ folder_id: Uuid(), parent_id: Nullable(Uuid()), name: Type.String(), tx_id: Int64() }, { ...closed, $id: 'DisplayFolder' });

export const FolderBody = Type.Object({ name: EntityName({ segment: true }), parent_id: Type.Optional(Nullable(Uuid())) }, closed);
export const FolderPutBody = Type.Object({
  name: EntityName({ segment: true }),
  parent_id: Nullable(Uuid({ description: 'The new parent; null: a top-level folder. A folder never moves under itself' })),
  expected_tx: Type.Optional(Int64({ description: 'The tx_id the caller read; 409 conflict when the folder changed since' })),
}, closed);
export const FolderListQuery = Type.Object({ parent_id: Type.Optional(Uuid({ description: 'Only the folders directly under this one' })) }, closed);

export const IdParams = Type.Object({ id: Uuid() }, closed);

export const CreateDisplayBody = Type.Object({ folder_id: Uuid(), document: DisplayDocument }, closed);
export const PutDisplayBody = Type.Object({
  expected_tx: Int64({ description: 'The tx_id of the version the caller edited; 409 conflict when a newer version exists' }),
  document: Type.Optional(DisplayDocument),
  folder_id: Type.Optional(Uuid({ description: 'Move the display to this folder' })),
}, closed);

export const PublishBody = Type.Object({
  version: Nullable(Type.Integer({ minimum: 1, description: 'The version readers without display-author see from now on; null withdraws the display from them' })),
}, closed);
export const Publication = Type.Object({
  display_id: Uuid(), published_version: Nullable(Type.Integer({ minimum: 1 })), tx_id: Int64({ description: 'The transaction that published' }),
}, { ...closed, $id: 'DisplayPublication' });

export const GetDisplayQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A version number from GET /v1/displays/{id}/versions; absent: the newest (authors) or the published one (readers)' })),
}, closed);

export const ListDisplaysQuery = Type.Object({
  folder: Type.Optional(Uuid()),
  kind: Type.Optional(Type.String()),
  after: Type.Optional(Uuid({ description: 'Only displays whose id sorts after this one' })),
  cursor: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
}, closed);

export const DisplayVersion = Type.Object({
  version: Type.Integer({ minimum: 1 }), tx_id: Int64(), committed_ns: Int64(), author: Type.String(),
  name: Type.String(), folder_id: Uuid(), published: Type.Boolean({ description: 'This is the version readers see' }),
}, { ...closed, $id: 'DisplayVersion' });
