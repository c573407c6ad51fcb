// Time (POST /v1/displays/time/resolve and .../navigator-context): relative expressions and
// widget ranges evaluated in a zone (explicit, else the context asset's effective zone,
// else UTC, and the answer says which); anchored windows resolved or given an explicit
// reason; and the navigator's overview: a coarse min/max render of the display's trend
// traces over a wider range around the window, through the resolved render read.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, invalid } from '../../../errors.js';
import { Int64, Uuid, Nullable } from '../../schemas/common.js';
import { nowNs } from '../../../clock.js';
import { stringifyJson } from '../../../json/json.js';
import { displayTimeContext, windowOf, windowOfRange, type DisplayTimeContext } from '../../../displays/display-time.js';
import { resolveDisplay } from '../../../displays/display-resolve.js';
import type { WidgetRange } from '../../../displays/display-document.js';
import { resolveRead } from '../../../reads/read-resolution.js';
import { unitPlans } from '../../../reads/read-units.js';
import { readTaskBase } from '../../../reads/read-plan.js';
import { runSliced } from '../reads/split-tasks.js';
import { modelOf, assetReader } from '../model/context.js';
import { contextAsset } from './resolve-routes.js';
import { visibleVersion } from './document-routes.js';
import { WidgetRange as WidgetRangeSchema } from './schemas.js';

const AREA = 'Displays';
const closed = { additionalProperties: false } as const;
const TimeText = Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Int64()], { description: 'A time expression ("*-8h", "t", "y+6h", "shift", an ISO 8601 time) or ns' });

const contextMembers = {
  asset_id: Type.Optional(Uuid({ description: 'The context asset: its effective time zone and shift starts apply' })),
  timezone: Type.Optional(Type.String({ description: 'An IANA zone; wins over the asset\'s' })),
  now_ns: Type.Optional(Int64({ minimum: 0, description: 'Evaluate as if it were this instant (default: the server\'s clock)' })),
};

const TimeResolveBody = Type.Object({
  start: Type.Optional(TimeText), end: Type.Optional(TimeText),
  range: Type.Optional(WidgetRangeSchema),
  ...contextMembers,
}, closed);

const ZoneMembers = {
  timezone: Type.String(), timezone_source: Type.Union([Type.Literal('explicit'), Type.Literal('asset'), Type.Literal('default')]), now_ns: Int64(),
};

const TimeResolution = Type.Object({
  state: Type.Union([Type.Literal('resolved'), Type.Literal('unresolved')]),
  start_ns: Nullable(Int64()), end_ns: Nullable(Int64()),
  reason: Nullable(Type.String({ description: 'Why an anchored window did not resolve' })),
  range: Nullable(Type.Unknown({ description: 'The range as sent, anchor kept, with `resolved` filled in ({state: resolved, start, end} in ns, or {state: unresolved, reason})' })),
  ...ZoneMembers,
}, { ...closed, $id: 'DisplayTimeResolution' });

const NavigatorBody = Type.Object({
  display_id: Uuid(),
  version: Type.Optional(Type.Integer({ minimum: 1 })),
  start: Type.Optional(TimeText), end: Type.Optional(TimeText),
  width: Type.Optional(Type.Integer({ minimum: 1, maximum: 4000, description: 'Pixel columns of the overview (default 400)' })),
  span: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'The overview reaches this many window lengths before and after the window (default 2), never past now' })),
  ...contextMembers,
}, closed);

const NavigatorContext = Type.Object({
  window: Type.Object({ start_ns: Int64(), end_ns: Int64() }, closed),
  overview: Type.Object({ start_ns: Int64(), end_ns: Int64() }, closed),
  width: Type.Integer(),
  ...ZoneMembers,
  traces: Type.Array(Type.Object({
    widget_id: Type.String(), pointer: Type.String(), attribute_id: Nullable(Uuid()), path: Nullable(Type.String()), reason: Nullable(Type.String()),
  }, closed)),
  render: Type.Array(Type.Unknown({ description: 'One item per resolved attribute, as POST /v1/read/render answers with mode minmax-band' })),
}, { ...closed, $id: 'DisplayNavigatorContext' });

async function timeContext(ctx: HandlerContext, b: { asset_id?: string; timezone?: string; now_ns?: number | bigint }): Promise<DisplayTimeContext> {
  const asset = await contextAsset(ctx, b.asset_id);
  const model = modelOf(ctx);
  return displayTimeContext(model.db, await model.tree(), asset, b.timezone, b.now_ns === undefined ? nowNs() : BigInt(b.now_ns));
}

const INT64_MAX = 2n ** 63n - 1n;
const clampNs = (ns: bigint) => (ns > INT64_MAX ? INT64_MAX : ns < -INT64_MAX ? -INT64_MAX : ns);

const zoneOf = (t: DisplayTimeContext) => ({ timezone: t.timezone, timezone_source: t.timezoneSource, now_ns: t.nowNs });

export function timeRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'resolveDisplayTime', method: 'post', path: '/v1/displays/time/resolve', area: AREA,
      summary: 'Evaluate a start and end (relative expressions, ISO 8601, ns) or a widget range (start/end, last, anchored) in a zone: the window in ns, or for an anchor that cannot resolve, the reason',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      body: TimeResolveBody,
      response: { status: 200, schema: TimeResolution },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        const pair = b.start !== undefined || b.end !== undefined;
        if (pair === (b.range !== undefined)) throw invalid('body', 'give start and end, or range (one of the two)');
        if (pair && (b.start === undefined || b.end === undefined)) throw invalid(b.start === undefined ? 'start' : 'end', 'missing: give both start and end');
        const t = await timeContext(ctx, b);
        if (pair) {
          const w = windowOf(b.start as string, b.end as string, t, '');
          return { body: { state: 'resolved', start_ns: w.startNs, end_ns: w.endNs, reason: null, range: null, ...zoneOf(t) } };
        }
        const range = b.range as WidgetRange;
        const w = await windowOfRange(modelOf(ctx).db, range, t, 'range.');
        const resolved = w.state === 'resolved' ? { state: 'resolved', start: w.start_ns, end: w.end_ns } : { state: 'unresolved', reason: w.reason };
        return {
          body: {
            state: w.state, start_ns: w.state === 'resolved' ? w.start_ns : null, end_ns: w.state === 'resolved' ? w.end_ns : null,
            reason: w.state === 'unresolved' ? w.reason : null,
            range: 'anchor' in range ? { ...range, resolved } : range, ...zoneOf(t),
          },
        };
      },
    }),
    defineRoute({
      operationId: 'displayNavigatorContext', method: 'post', path: '/v1/displays/time/navigator-context', area: AREA,
      summary: 'The navigator\'s overview of a display: its trend traces resolved in the context asset and drawn as a coarse min/max band over a wider range around the window (default: the document\'s time)',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      body: NavigatorBody,
      response: { status: 200, schema: NavigatorContext },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        const row = await visibleVersion(ctx, b.display_id, b.version);
        const doc = row.document;
        const t = await timeContext(ctx, b);
        const start = b.start ?? doc.time?.start;
        const end = b.end ?? doc.time?.end;
        if (start === undefined || end === undefined) throw invalid(start === undefined ? 'start' : 'end', 'the display has no time: give start and end');
        const w = windowOf(start, end, t, '');
        const span = BigInt(b.span ?? 2);
        const len = w.endNs - w.startNs;
        // Clamped to int64: a window near either end of time must not widen past what a read can name.
        const overview = { startNs: clampNs(w.startNs - span * len), endNs: clampNs(w.endNs + span * len) };
        if (overview.endNs > t.nowNs) overview.endNs = w.endNs > t.nowNs ? w.endNs : t.nowNs;
        const width = b.width ?? 400;

        const model = modelOf(ctx);
        const reader = await assetReader(ctx);
        const all = await resolveDisplay(model, doc, await contextAsset(ctx, b.asset_id), (id) => reader.asset(id));
        const trendWidgets = new Set((doc.widgets ?? []).filter((x) => x.type === 'trend').map((x) => x.id));
        const traces = all.filter((s) => trendWidgets.has(s.widget_id)).map((s) => ({
          widget_id: s.widget_id, pointer: s.pointer,
          attribute_id: s.resolved.kind === 'attribute-id' ? s.resolved.attribute_id : null, path: s.path,
          reason: s.resolved.kind === 'unresolved' ? s.resolved.reason : null,
        }));
        const ids = [...new Set(traces.flatMap((x) => (x.attribute_id ? [x.attribute_id] : [])))];
        const head = { window: { start_ns: w.startNs, end_ns: w.endNs }, overview: { start_ns: overview.startNs, end_ns: overview.endNs }, width, ...zoneOf(t), traces };
        const prefix = stringifyJson(head).slice(0, -1);
        if (ids.length === 0) return { body: { ...head, render: [] } };
        const r = await resolveRead(ctx.service, (c, target) => ctx.can(c, target), { select: { kind: 'attribute_ids', content: ids }, scope: {} }, overview);
        const base = readTaskBase(r, await unitPlans(ctx.service, r.attributes, undefined), { format: 'json' });
        const rendered = await runSliced(ctx, 'readRender', base, () => ({ width, mode: 'minmax-band' as const, stat: null }));
        if (rendered.kind !== 'bytes') throw new ServiceError('internal', 'BUG: the render read answered no bytes');
        try {
          const body = Buffer.concat([Buffer.from(`${prefix},"render":`), Buffer.from(rendered.bytes as Uint8Array), Buffer.from('}')]);
          return { kind: 'bytes', contentType: 'application/json', bytes: body };
        } finally {
          rendered.release?.();
        }
      },
    }),
  ];
}
