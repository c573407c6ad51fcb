// Resolve (selectors to attributes, paths and covering bindings; filtered per result)
// and staging (series no binding covers).
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor } from '../../../cursor.js';
import { resolve } from '../../../model/resolve/resolve.js';
import { stagedSeries } from '../../../model/series-owner.js';
import { modelOf, assetReader } from './context.js';
import { ResolveObject, ResolveResponse, StagingQuery, StagingPage } from './schemas.js';
import { UUID_RE } from '../../../uuid.js';


export function resolveRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'resolveModel', method: 'post', path: '/v1/model/resolve', area: 'Model',
      summary: 'Turn a resolve object into attributes with their paths and the bindings covering the range',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      body: ResolveObject,
      bodyLimit: 16 * 1024 * 1024,
      response: { status: 200, schema: ResolveResponse },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const reader = await assetReader(ctx);
        return { body: await resolve(modelOf(ctx), ctx.body, (id) => reader.asset(id)) };
      },
    }),
    defineRoute({
      operationId: 'listStaging', method: 'get', path: '/v1/model/staging', area: 'Model',
      summary: 'Series that no binding covers now or later (staging), by series id',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      query: StagingQuery,
      response: { status: 200, schema: StagingPage },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        await ctx.authorize('read', { kind: 'staging' });
        const limit = ctx.query.limit ?? 100;
        let after: string | null = null;
        if (ctx.query.cursor) {
          [after] = decodeCursor('staging', ctx.query.cursor, 1);
          if (!UUID_RE.test(after)) throw new ServiceError('invalid-cursor', 'cursor: not a cursor issued for this listing');
        }
        const rows = await stagedSeries(modelOf(ctx).db, limit + 1, after);
        const items = rows.slice(0, limit);
        const next = rows.length > limit ? encodeCursor('staging', [items[items.length - 1].series_id]) : null;
        return { body: { items, next_cursor: next } };
      },
    }),
  ];
}
