// The point reads of the Resolved reads area: snapshot, raw, at, sampled, as-of and
// raw-audit. Each resolves its body on this thread (src/reads: the model, the caller's
// permissions, units) and hands the point work to the read pool, which answers with the
// finished body in a shared slab; a read over many attributes runs as slices, one task
// each, joined here (split-tasks.ts). Scope "each resolved result": attributes on assets the
// caller may not read are left out of the answer, never refused.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { LARGE_BODY_SLICES_PER_WORKER, runSliced } from './split-tasks.js';
import { attachToRead } from './read-attachments.js';
import { snapshotRead } from './snapshot-read.js';
import { invalid } from '../../../errors.js';
import { nowNs } from '../../../clock.js';
import { resolveRead, type ReadResolution, type ResolveRequest } from '../../../reads/read-resolution.js';
import { memberNamesOf } from '../../../reads/read-members.js';
import { unitPlans, type ReadUnitsRequest } from '../../../reads/read-units.js';
import { readTaskBase, type ReadTaskOptions } from '../../../reads/read-plan.js';
import { MSGPACK_TYPE, type BodyFormat } from '../../../workers/task-protocol.js';
import type { ResolvedTaskBase } from '../../../workers/resolved-points.js';
import {
  SnapshotBody, SnapshotItem, RawBody, RawItem, AtBody, SampledBody, InstantItem, AsOfBody, AsOfItem, RawAuditBody, RawAuditItem, bareArray,
} from './schemas.js';

const AREA = 'Reads';
const READ = { kind: 'capability', capability: 'read', scope: 'each-result' } as const;
/** Resolve bodies name up to 200,000 attribute ids. */
const BODY_LIMIT = 16 * 1024 * 1024;
/** Most instants one at/sampled read answers per attribute. */
const MAX_INSTANTS = 100_000;
const DEFAULT_MAX_ENTRIES = 10_000;

const bulkFormat = (ctx: HandlerContext): BodyFormat => (ctx.accepts(MSGPACK_TYPE) ? 'msgpack' : 'json');

function window(b: { start_ns: number | bigint; end_ns: number | bigint }): { startNs: bigint; endNs: bigint } {
  const startNs = BigInt(b.start_ns), endNs = BigInt(b.end_ns);
  if (endNs <= startNs) throw invalid('end_ns', 'must be greater than start_ns');
  return { startNs, endNs };
}

interface CommonBody { resolve: unknown; units?: ReadUnitsRequest; exclude_quality?: 'bad' | 'bad_and_uncertain'; max_points?: number }

/** Resolves the body over the window and builds the task members every point read shares. */
async function planned(ctx: HandlerContext, body: CommonBody, w: { startNs: bigint; endNs: bigint } | { atNs: bigint }, req: ResolveRequest, o: Partial<ReadTaskOptions> = {}): Promise<{ r: ReadResolution; base: ResolvedTaskBase }> {
  const r = await resolveRead(ctx.service, (c, t) => ctx.can(c, t), req, w);
  const units = await unitPlans(ctx.service, r.attributes, body.units);
  const members = await memberNamesOf(ctx.service, r);
  const base = readTaskBase(r, units, { excludeQuality: body.exclude_quality ?? null, format: o.format ?? 'json', maxPoints: o.maxPoints ?? body.max_points, members });
  return { r, base };
}

export function pointReadRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'readSnapshot', method: 'post', path: '/v1/read/snapshot', area: AREA,
      summary: 'The latest value of each resolved attribute (null when unbound or without a point since its binding began)',
      access: READ, body: SnapshotBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(SnapshotItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: (ctx) => snapshotRead(ctx, ctx.body, bulkFormat(ctx)),
    }),
    defineRoute({
      operationId: 'readRaw', method: 'post', path: '/v1/read/raw', area: AREA,
      summary: 'The stored points of each resolved attribute in [start_ns, end_ns), one segment per binding (a sensor swap gives two)',
      access: READ, body: RawBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(RawItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const { r, base } = await planned(ctx, ctx.body, w, ctx.body.resolve as ResolveRequest, { format: bulkFormat(ctx) });
        const includePrior = ctx.body.include_prior ?? false;
        const layout = ctx.body.layout ?? 'rows';
        // rows take 3-4x the bytes of the columns layout (41-66 bytes a point against 15-17)
        const slicesPerWorker = layout === 'rows' ? LARGE_BODY_SLICES_PER_WORKER : 1;
        return attachToRead(ctx, ctx.body, r.attributes, w, await runSliced(ctx, 'readRaw', base, () => ({ includePrior, layout }), { limitPoints: true, pieces: true, slicesPerWorker }));
      },
    }),
    defineRoute({
      operationId: 'readAt', method: 'post', path: '/v1/read/at', area: AREA,
      summary: 'Values of each resolved attribute at the given instants, interpolated by its continuity',
      access: READ, body: AtBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(InstantItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const instants = [...new Set(ctx.body.instants.map((x) => BigInt(x)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const w = { startNs: instants[0], endNs: instants[instants.length - 1] + 1n };
        const { r, base } = await planned(ctx, ctx.body, w, ctx.body.resolve as ResolveRequest, { format: bulkFormat(ctx) });
        const text = instants.map(String);
        return attachToRead(ctx, ctx.body, r.attributes, w, await runSliced(ctx, 'readAt', base, () => ({ instants: text, grid: null })));
      },
    }),
    defineRoute({
      operationId: 'readSampled', method: 'post', path: '/v1/read/sampled', area: AREA,
      summary: 'Values of each resolved attribute every interval_ns from start_ns, interpolated by its continuity',
      access: READ, body: SampledBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(InstantItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const interval = BigInt(ctx.body.interval_ns);
        const count = (w.endNs - w.startNs + interval - 1n) / interval;
        if (count > BigInt(MAX_INSTANTS)) throw invalid('interval_ns', `gives ${count} samples per attribute, more than ${MAX_INSTANTS}; widen the interval or narrow the window`);
        const { r, base } = await planned(ctx, ctx.body, w, ctx.body.resolve as ResolveRequest, { format: bulkFormat(ctx) });
        const grid = { startNs: String(w.startNs), intervalNs: String(interval), count: Number(count) };
        return attachToRead(ctx, ctx.body, r.attributes, w, await runSliced(ctx, 'readAt', base, () => ({ instants: null, grid })));
      },
    }),
    defineRoute({
      operationId: 'readAsOf', method: 'post', path: '/v1/read/as-of', area: AREA,
      summary: 'The points of each resolved attribute in [start_ns, end_ns) as they were known at known_at_ns (superseded values as they were then)',
      access: READ, body: AsOfBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(AsOfItem), alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const knownAt = BigInt(ctx.body.known_at_ns);
        const req = ctx.body.resolve as ResolveRequest;
        // the model as the reader saw it then, unless the body asks for another model instant
        const asked: ResolveRequest = req.as_of_ns == null ? { ...req, as_of_ns: knownAt } : req;
        const { r, base } = await planned(ctx, ctx.body, w, asked, { format: bulkFormat(ctx) });
        return attachToRead(ctx, ctx.body, r.attributes, w, await runSliced(ctx, 'readAsOf', base, () => ({ knownAtNs: String(knownAt) }), { limitPoints: true }));
      },
    }),
    defineRoute({
      operationId: 'readRawAudit', method: 'post', path: '/v1/read/raw-audit', area: AREA,
      summary: 'The edit history of each resolved attribute\'s points in [start_ns, end_ns): old and new value, who, when',
      access: READ, body: RawAuditBody, bodyLimit: BODY_LIMIT,
      response: { status: 200, schema: bareArray(RawAuditItem) },
      errors: [400, 503],
      handler: async (ctx) => {
        const w = window(ctx.body);
        const { base } = await planned(ctx, ctx.body, w, ctx.body.resolve as ResolveRequest, { format: 'json', maxPoints: ctx.body.max_entries ?? DEFAULT_MAX_ENTRIES });
        return runSliced(ctx, 'readAudit', base, () => ({}));
      },
    }),
  ];
}
