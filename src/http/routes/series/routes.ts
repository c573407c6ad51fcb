// Series storage area: the 12 routes that address a stored series by uuid (spec "Series
// storage"); they do not follow bindings. Scope of every per-series route: the owning
// asset of the series, or the staging root while it is unbound. Reads that touch many
// points (raw, render, rollups, gaps, raw-audit) run in the read worker pool and come
// back as finished bodies; the snapshot, chunk listing, watermark and policy are small
// reads done here.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError, invalid } from '../../../errors.js';
import { decodeCursor, encodeCursor } from '../../../cursor.js';
import type { Capability } from '../../../auth/capabilities.js';
import type { SeriesRecord } from '../../../series/records.js';
import type { ValueType } from '../../../storage/encoding/chunk-types.js';
import { listChunks, readSnapshot, readSnapshotAt } from '../../../storage/series-store.js';
import { enumMemberNames } from '../../../series/enum-members.js';
import { INT64_MAX, INT64_MIN } from '../../../storage/series-store.js';
import { rawCursorListing } from '../../../workers/tasks/raw-task.js';
import { MSGPACK_TYPE, type BodyFormat } from '../../../workers/task-protocol.js';
import type { ReadBody } from '../../../workers/read-pool.js';
import type { Reply } from '../../route.js';
import {
  SeriesParams, ListSeriesQuery, SeriesPage, ChunksQuery, ChunksResponse, FinalisedResponse, GapsQuery, GapsResponse,
  LifecyclePolicyResponse, PutLifecyclePolicyBody, RawQuery, RawResponse, RawColumnsResponse, RawColumnsJsonResponse, AuditQuery, AuditResponse, RollupsQuery,
  RollupsResponse, SnapshotResponse, WritableClassBody, RenderQuery, RenderResponse, SeriesRecordSchema, NoQuery, SnapshotQuery,
} from './schemas.js';

const AREA = 'Series storage';
const DEFAULT_LIST_LIMIT = 100;
const DEFAULT_RAW_LIMIT = 100_000;
const DEFAULT_AUDIT_LIMIT = 10_000;
const DEFAULT_ROLLUP_LIMIT = 10_000;

/** The series, once the caller may use `capability` on its scope (404 hides it otherwise). */
async function seriesFor(ctx: HandlerContext<{ uuid: string }>, capability: Capability): Promise<SeriesRecord> {
  const series = ctx.service.parts.series;
  const record = await series.require(ctx.params.uuid);
  await ctx.authorize(capability, await series.scopeOf(record.id), { hide: true });
  return record;
}

function recordBody(r: SeriesRecord, assetId: string | null) {
  return {
    series_id: r.id, source_name: r.sourceName, value_type: r.valueType, enum_set_id: r.enumSetId, writable_class: r.writableClass,
    placement: assetId === null ? 'staging' : 'bound', asset_id: assetId, created_tx: r.createdTx, created_ns: r.createdNs, tx_id: r.updatedTx,
  };
}

function range(q: { start_ns: number | bigint; end_ns: number | bigint }): { startNs: bigint; endNs: bigint } {
  const startNs = BigInt(q.start_ns), endNs = BigInt(q.end_ns);
  if (endNs <= startNs) throw invalid('query.end_ns', 'must be greater than start_ns');
  return { startNs, endNs };
}

/** msgpack when Accept asks for it, else JSON (what is produced is also what is declared). */
const bulkFormat = (ctx: HandlerContext): BodyFormat => (ctx.accepts(MSGPACK_TYPE) ? 'msgpack' : 'json');

/** A worker's body, sent from its slab; the server releases the slab once sent (ReadBody.release). */
const bytesReply = (b: ReadBody): Reply => ({ kind: 'bytes', contentType: b.contentType, bytes: b.bytes, release: b.release });

const continuityFor = (r: SeriesRecord, asked: 'continuous' | 'stepped' | undefined) => asked ?? (r.valueType === 'float64' ? 'continuous' : 'stepped');

export function seriesRoutes(): AnyRoute[] {
  const read = { kind: 'capability', capability: 'read', scope: 'handler' } as const;
  return [
    defineRoute({
      operationId: 'listSeries', method: 'get', path: '/v1/series', area: AREA,
      summary: 'Stored series in source-name order, filtered to those the caller may read',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: ListSeriesQuery,
      response: { status: 200, schema: SeriesPage },
      errors: [400, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        const limit = q.limit ?? DEFAULT_LIST_LIMIT;
        let afterName = q.cursor ? decodeCursor('series', q.cursor, 1)[0] : undefined;
        const series = ctx.service.parts.series;
        const items: ReturnType<typeof recordBody>[] = [];
        // Rows the caller may not read, or of the other placement, are skipped; keep reading
        // pages until this one is full or the table ends.
        const batch = Math.min(1000, limit + 1);
        let more = false;
        for (;;) {
          const rows = await series.list({ namePrefix: q.name_prefix, nameContains: q.name_contains, valueType: q.value_type as ValueType | undefined, afterName, limit: batch });
          for (const r of rows) {
            const scope = await series.scopeOf(r.id);
            const assetId = scope.kind === 'asset' ? scope.id : null;
            if (q.placement && (q.placement === 'bound') !== (assetId !== null)) { afterName = r.sourceName; continue; }
            if (!(await ctx.can('read', scope))) { afterName = r.sourceName; continue; }
            if (items.length === limit) { more = true; break; }
            items.push(recordBody(r, assetId));
            afterName = r.sourceName;
          }
          if (more || rows.length < batch) break;
        }
        const last = items[items.length - 1];
        return { body: { items, next_cursor: more && last ? encodeCursor('series', [last.source_name]) : null } };
      },
    }),
    defineRoute({
      operationId: 'listSeriesChunks', method: 'get', path: '/v1/series/{uuid}/chunks', area: AREA,
      summary: 'Sealed chunks (and the open head) of a series: time span, point count and stored bytes',
      access: read, params: SeriesParams, query: ChunksQuery,
      response: { status: 200, schema: ChunksResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const startNs = ctx.query.start_ns === undefined ? INT64_MIN : BigInt(ctx.query.start_ns);
        const endNs = ctx.query.end_ns === undefined ? INT64_MAX : BigInt(ctx.query.end_ns);
        if (endNs <= startNs) throw invalid('query.end_ns', 'must be greater than start_ns');
        const limit = ctx.query.limit ?? 10_000;
        const chunks = ctx.service.parts.storage.read((v) => listChunks(v, r.id, { startNs, endNs, limit: limit + 1 }));
        return {
          body: {
            series: r.id,
            chunks: chunks.slice(0, limit).map((c) => ({ start_ns: c.startNs, end_ns: c.endNs, count: c.count, bytes: c.bytes, sealed: c.sealed })),
            truncated: chunks.length > limit,
          },
        };
      },
    }),
    defineRoute({
      operationId: 'getSeriesFinalised', method: 'get', path: '/v1/series/{uuid}/finalised', area: AREA,
      summary: 'The time through which the series is complete (collector watermark or end of a committed backfill)',
      access: read, params: SeriesParams, query: NoQuery,
      response: { status: 200, schema: FinalisedResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        return { body: { series: r.id, finalised_ns: ctx.service.parts.storage.meta(r.id)?.finalisedNs ?? null } };
      },
    }),
    defineRoute({
      operationId: 'getSeriesGaps', method: 'get', path: '/v1/series/{uuid}/gaps', area: AREA,
      summary: 'Intervals without data: declared by the collector, or longer than 3x the series\' median cadence',
      access: read, params: SeriesParams, query: GapsQuery,
      response: { status: 200, schema: GapsResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const { startNs, endNs } = range(ctx.query);
        return bytesReply(await ctx.service.parts.readPool.run('gaps', { series: r.id, startNs: String(startNs), endNs: String(endNs) }));
      },
    }),
    defineRoute({
      operationId: 'getSeriesLifecyclePolicy', method: 'get', path: '/v1/series/{uuid}/lifecycle-policy', area: AREA,
      summary: 'The lifecycle policy of a series and its version (both null when none was set)',
      access: read, params: SeriesParams, query: NoQuery,
      response: { status: 200, schema: LifecyclePolicyResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const lc = ctx.service.parts.storage.meta(r.id)?.lifecycle ?? null;
        return { body: { policy: lc?.policy ?? null, version: lc?.version ?? null } };
      },
    }),
    defineRoute({
      operationId: 'putSeriesLifecyclePolicy', method: 'put', path: '/v1/series/{uuid}/lifecycle-policy', area: AREA,
      summary: 'Sets a new version of the series\' lifecycle policy (service-lifecycle-policy/v1)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' }, params: SeriesParams, query: NoQuery, body: PutLifecyclePolicyBody,
      response: { status: 200, schema: LifecyclePolicyResponse },
      errors: [400, 404, 409, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'model-edit');
        const expected = ctx.body.version === undefined ? undefined : ctx.body.version === null ? null : BigInt(ctx.body.version);
        const lc = await ctx.service.parts.storage.setLifecyclePolicy(r.id, ctx.body.policy, expected);
        ctx.log.info({ series: r.id, version: lc.version, principal: ctx.principal?.subject }, 'lifecycle policy set');
        return { body: { policy: lc.policy, version: lc.version } };
      },
    }),
    defineRoute({
      operationId: 'getSeriesRaw', method: 'get', path: '/v1/series/{uuid}/raw', area: AREA,
      summary: 'Stored points in [start_ns, end_ns), exact types, paged with a cursor',
      access: read, params: SeriesParams, query: RawQuery,
      response: { status: 200, schema: Type.Union([RawResponse, RawColumnsJsonResponse]), alsoProduces: [MSGPACK_TYPE], schemaFor: { [MSGPACK_TYPE]: Type.Union([RawResponse, RawColumnsResponse]) } },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const layout = ctx.query.layout ?? 'rows';
        const format = bulkFormat(ctx);
        const r = await seriesFor(ctx, 'read');
        const { startNs, endNs } = range(ctx.query);
        let afterNs: string | null = null;
        if (ctx.query.cursor) {
          afterNs = decodeCursor(rawCursorListing(r.id), ctx.query.cursor, 1)[0];
          // a forged cursor's time must still be an int64: the worker parses it with BigInt
          if (!/^-?[0-9]{1,19}$/.test(afterNs) || BigInt(afterNs) > INT64_MAX || BigInt(afterNs) < INT64_MIN) {
            throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
          }
        }
        // rows add each enum point's member name (columns keep bare ordinals; raw-task.ts)
        const members = r.valueType === 'enum' && r.enumSetId !== null && layout === 'rows' ? await enumMemberNames(ctx.service.db, r.enumSetId) : null;
        const task = { series: r.id, startNs: String(startNs), endNs: String(endNs), limit: ctx.query.limit ?? DEFAULT_RAW_LIMIT, afterNs, format, layout, members };
        return bytesReply(await ctx.service.parts.readPool.run('raw', task));
      },
    }),
    defineRoute({
      operationId: 'getSeriesRawAudit', method: 'get', path: '/v1/series/{uuid}/raw-audit', area: AREA,
      summary: 'Superseded values with their time in the range: the old value and quality, who replaced it and when',
      access: read, params: SeriesParams, query: AuditQuery,
      response: { status: 200, schema: AuditResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const { startNs, endNs } = range(ctx.query);
        return bytesReply(await ctx.service.parts.readPool.run('audit', { series: r.id, startNs: String(startNs), endNs: String(endNs), limit: ctx.query.limit ?? DEFAULT_AUDIT_LIMIT }));
      },
    }),
    defineRoute({
      operationId: 'getSeriesRollups', method: 'get', path: '/v1/series/{uuid}/rollups', area: AREA,
      summary: 'Stored rollup buckets (count, min, max, first, last, twa, percent good) at 1h or 1d',
      access: read, params: SeriesParams, query: RollupsQuery,
      response: { status: 200, schema: RollupsResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const { startNs, endNs } = range(ctx.query);
        return bytesReply(await ctx.service.parts.readPool.run('rollups', {
          series: r.id, startNs: String(startNs), endNs: String(endNs), interval: ctx.query.interval,
          continuity: continuityFor(r, ctx.query.continuity), limit: ctx.query.limit ?? DEFAULT_ROLLUP_LIMIT,
        }));
      },
    }),
    defineRoute({
      operationId: 'getSeriesSnapshot', method: 'get', path: '/v1/series/{uuid}/snapshot', area: AREA,
      summary: 'The latest stored point of a series, or with as_of_ns the latest point at or before that instant (null when there is none)',
      access: read, params: SeriesParams, query: SnapshotQuery,
      response: { status: 200, schema: SnapshotResponse },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const asOf = ctx.query.as_of_ns;
        const p = ctx.service.parts.storage.read((v) => (asOf === undefined ? readSnapshot(v, r.id) : readSnapshotAt(v, r.id, BigInt(asOf))));
        let value: unknown = p === null ? null : p.value;
        if (p !== null && r.valueType === 'enum') {
          const names = r.enumSetId === null ? {} : await enumMemberNames(ctx.service.db, r.enumSetId);
          value = { enum_set: r.enumSetId, ordinal: p.value, member: names[String(p.value)] ?? null };
        }
        return { body: { series: r.id, snapshot: p === null ? null : { ts_ns: p.ts, value, quality: p.quality } } };
      },
    }),
    defineRoute({
      operationId: 'putSeriesWritableClass', method: 'put', path: '/v1/series/{uuid}/writable-class', area: AREA,
      summary: 'Changes who may write the series\' points (a model change with a tx_id)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' }, params: SeriesParams, query: NoQuery, body: WritableClassBody,
      response: { status: 200, schema: SeriesRecordSchema },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'model-edit');
        const series = ctx.service.parts.series;
        const updated = await series.setWritableClass(r.id, ctx.body.writable_class, { principal: ctx.principal?.subject ?? 'anonymous' });
        const scope = await series.scopeOf(r.id);
        return { body: recordBody(updated, scope.kind === 'asset' ? scope.id : null) };
      },
    }),
    defineRoute({
      operationId: 'renderSeries', method: 'get', path: '/v1/series/{uuid}/render', area: AREA,
      summary: 'What a line chart of `width` pixels needs: M4 significant points (pixel-exact) or a per-column min/max band',
      access: read, params: SeriesParams, query: RenderQuery,
      response: { status: 200, schema: RenderResponse, alsoProduces: [MSGPACK_TYPE] },
      errors: [400, 404, 503],
      handler: async (ctx) => {
        const r = await seriesFor(ctx, 'read');
        const { startNs, endNs } = range(ctx.query);
        if (r.valueType === 'string') throw invalid('series', 'a string series has no numeric view and cannot be rendered');
        const mode = ctx.query.mode ?? 'significant-points';
        if (mode === 'significant-points' && ctx.query.stat !== undefined) throw invalid('query.stat', 'applies to mode=minmax-band only');
        return bytesReply(await ctx.service.parts.readPool.run('render', {
          series: r.id, startNs: String(startNs), endNs: String(endNs), width: ctx.query.width, mode,
          stat: (ctx.query.stat ?? null) as 'count' | 'min' | 'max' | 'first' | 'last' | 'twa' | 'percent_good' | null,
          continuity: continuityFor(r, ctx.query.continuity), format: bulkFormat(ctx),
        }));
      },
    }),
  ];
}


