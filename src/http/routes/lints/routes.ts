// Model lints: what a modeller must fix or look at, filtered to the assets the caller may read.
import { defineRoute, type AnyRoute } from '../../route.js';
import { modelLints } from '../../../model/lints/model-lints.js';
import { modelOf, assetReader } from '../model/context.js';
import { LintsResponse, LintsQuery } from './schemas.js';

export function lintsRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listModelLints', method: 'get', path: '/v1/model/lints', area: 'Model',
      summary: 'Model problems with a stable code, severity, the resource and a message (errors first)',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: LintsQuery,
      response: { status: 200, schema: LintsResponse },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const all = await modelLints(model.db, await model.tree());
        const reader = await assetReader(ctx);
        const rank = { error: 0, warning: 1, info: 2 } as const;
        const items = [];
        for (const l of all) {
          if (ctx.query.code && l.code !== ctx.query.code) continue;
          if (ctx.query.severity && l.severity !== ctx.query.severity) continue;
          if (l.resource.asset_id && !(await reader.asset(l.resource.asset_id))) continue;
          items.push(l);
        }
        items.sort((a, b) => rank[a.severity] - rank[b.severity] || a.code.localeCompare(b.code) || (a.resource.path ?? '').localeCompare(b.resource.path ?? ''));
        return { body: { items } };
      },
    }),
  ];
}
