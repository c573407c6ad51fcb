// The interval reads of the Resolved reads area: summary (per-interval statistics) and
// render (the series render through resolution). Both resolve on this thread, then run
// over the read pool in slices joined into one body, as the point reads do (split-tasks.ts). Scope "each resolved result": attributes the caller may not read are
// left out, never refused.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { invalid } from '../../../errors.js';
import { Int64, Nullable, Uuid } from '../../schemas/common.js';
import { resolveRead, type ResolveRequest } from '../../../reads/read-resolution.js';
import { unitPlans, type ReadUnitsRequest } from '../../../reads/read-units.js';
import { readTaskBase } from '../../../reads/read-plan.js';
import { parseInterval, summaryBoundaries, totalPlans } from '../../../reads/read-summary.js';
import { MSGPACK_TYPE, SUMMARY_STATS, type BodyFormat, type SummaryStat } from '../../../workers/task-protocol.js';
import { RENDER_STATS } from '../../../storage/series-store.js';
import { runSliced } from './split-tasks.js';
import { attachToRead } from './read-attachments.js';
import { ExcludeQuality, Provenance, readBodyMembers, windowMembers, bareArray, attachRequestMembers, attachedResultMembers } from './schemas.js';

const AREA = 'Reads';
const READ = { kind: 'capability', capability: 'read', scope: 'each-result' } as const;
const BODY_LIMIT = 16 * 1024 * 1024;
/** Most interval cells (attributes x intervals) one summary answers. */
const MAX_CELLS = 10_000_000;
const closed = { additionalProperties: false } as const;

const bulkFormat = (ctx: HandlerContext): BodyFormat => (ctx.accepts(MSGPACK_TYPE) ? 'msgpack' : 'json');

const SummaryBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...windowMembers,
  interval: Type.Union([
    Type.String({ pattern: '^[0-9]{1,15}(ns|us|ms|s|m|h|d)$', 'x-expected': 'a duration such as `500ms`, `30s`, `15m`, `1h` or `1d` (digits, then ns, us, ms, s, m, h or d)' }),
    Int64({ minimum: 1 }),
  ], {
    description: 'Interval length: a duration ("500ms", "30s", "15m", "1h", "1d") or ns. Intervals start at start_ns, start_ns + interval, ...; the last ends at end_ns',
  }),
  stats: Type.Array(Type.Union(SUMMARY_STATS.map((s) => Type.Literal(s))), {
    minItems: 1, uniqueItems: true,
    description: 'Statistics per interval. mean, stddev, duration_bad_ns and duration_uncertain_ns read every point; the others take aligned interior hours from the rollups',
  }),
  exclude_quality: Type.Optional(ExcludeQuality),
}, closed);

const Stat = Nullable(Type.Number());
const SummaryInterval = Type.Object({
  start_ns: Int64(), end_ns: Int64(),
  count: Type.Optional(Type.Integer({ minimum: 0 })),
  min: Type.Optional(Stat), max: Type.Optional(Stat), first: Type.Optional(Stat), last: Type.Optional(Stat),
  mean: Type.Optional(Stat), twa: Type.Optional(Stat), total: Type.Optional(Stat), range: Type.Optional(Stat), stddev: Type.Optional(Stat),
  percent_good: Type.Optional(Stat),
  duration_good_ns: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  duration_bad_ns: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  duration_uncertain_ns: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
}, closed);
const SummaryItem = Type.Object({
  attribute_id: Uuid(), path: Type.String(),
  unit_id: Nullable(Uuid({ description: 'The unit of min, max, first, last, mean, twa, range and stddev' })),
  total_unit_id: Type.Optional(Nullable(Uuid({ description: 'The unit of total: the canonical unit of the quantity kind the attribute\'s kind integrates to; null when it integrates to none' }))),
  intervals: Type.Array(SummaryInterval),
  provenance: Provenance,
  ...attachedResultMembers,
}, closed);

const RenderBody = Type.Object({
  ...readBodyMembers, ...attachRequestMembers, ...windowMembers,
  width: Type.Integer({ minimum: 0, maximum: 100_000, description: 'Pixel columns' }),
  mode: Type.Optional(Type.Union([Type.Literal('significant-points'), Type.Literal('minmax-band')])),
  stat: Type.Optional(Type.Union(RENDER_STATS.map((s) => Type.Literal(s)), { description: 'minmax-band only: one statistic per column' })),
}, closed);
const RenderItem = Type.Object({
  attribute_id: Uuid(), path: Type.String(), unit_id: Nullable(Uuid()),
  render: Nullable(Type.Unknown({ description: 'The body GET /v1/series/{uuid}/render answers, drawn from the union of the attribute\'s segments (transitions add kind "binding" where a segment starts inside the range); null for string values or no binding in the range' })),
  provenance: Provenance,
  ...attachedResultMembers,
}, closed);

function window(b: { start_ns: number | bigint; end_ns: number | bigint }): { startNs: bigint; endNs: bigint } {
  const startNs = BigInt(b.start_ns), endNs = BigInt(b.end_ns);
  if (endNs <= startNs) throw invalid('end_ns', 'must be greater than start_ns');
  return { startNs, endNs };
}

interface IntervalBody { resolve: unknown; units?: ReadUnitsRequest; start_ns: number | bigint; end_ns: number | bigint; exclude_quality?: 'bad' | 'bad_and_uncertain' }

async function plan(ctx: HandlerContext, body: IntervalBody, w: { startNs: bigint; endNs: bigint }, format: BodyFormat) {
  const r = await resolveRead(ctx.service, (c, t) => ctx.can(c, t), body.resolve as ResolveRequest, w);
  const units = await unitPlans(ctx.service, r.attributes, body.units);
  return { r, base: readTaskBase(r, units, { format, excludeQuality: body.exclude_quality ?? null }) };
}

export function intervalReadRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'readSummary', method: 'post', path: '/v1/read/summary', area: AREA,
      summary: 'Per-interval statistics of each resolved attribute, stitched across its bindings; the value before each interval weights its start',
      access: READ, body: SummaryBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(SummaryItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const boundaries = summaryBoundaries(w.startNs, w.endNs, parseInterval(ctx.body.interval));
        const stats = ctx.body.stats as SummaryStat[];
        const { r, base } = await plan(ctx, ctx.body, w, bulkFormat(ctx));
        const cells = (boundaries.length - 1) * r.attributes.length;
        if (cells > MAX_CELLS) throw invalid('interval', `gives ${cells} interval rows over ${r.attributes.length} attributes, more than ${MAX_CELLS}; widen the interval, narrow the window or the selection`);
        const totals = stats.includes('total') ? await totalPlans(ctx.service, r.attributes) : r.attributes.map(() => null);
        const bounds = Array.from(boundaries, String);
        // the slices' bodies go out as pieces from their slabs: joining the 1-minute twa of 950
        // attributes (4.7 MB) cost the HTTP thread a copy into fresh memory per read
        const reply = await runSliced(ctx, 'readSummary', base, (_slice, from) => ({ boundaries: bounds, stats, totals: totals.slice(from, from + _slice.length) }), { pieces: true });
        return attachToRead(ctx, ctx.body, r.attributes, w, reply);
      },
    }),
    defineRoute({
      operationId: 'readRender', method: 'post', path: '/v1/read/render', area: AREA,
      summary: 'The series render (significant points or a min/max band) of each resolved attribute, stitched across its bindings into one pixel grid',
      access: READ, body: RenderBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(RenderItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const mode = ctx.body.mode ?? 'significant-points';
        if (mode === 'significant-points' && ctx.body.stat !== undefined) throw invalid('stat', 'applies to mode=minmax-band only');
        const { r, base } = await plan(ctx, ctx.body, w, bulkFormat(ctx));
        const reply = await runSliced(ctx, 'readRender', base, () => ({ width: ctx.body.width, mode, stat: ctx.body.stat ?? null }));
        return attachToRead(ctx, ctx.body, r.attributes, w, reply);
      },
    }),
  ];
}

