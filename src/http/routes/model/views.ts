// Views: alternate hierarchies over the same assets. The View projection is exactly
// {view_id, name, retired, tx_id}; the hierarchy is read through /tree.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { createView, patchView, viewsAt, viewMembersAt } from '../../../model/views/views.js';
import { modelOf, who } from './context.js';
import { UuidParams, AsOfQuery, View, CreateViewBody, PatchViewBody, ViewListQuery, ViewList, ViewTreeResponse, type TreeNodeShape } from './schemas.js';

async function viewOf(ctx: HandlerContext, id: string, asOfNs?: number | bigint) {
  const model = modelOf(ctx);
  const [v] = await viewsAt(model.db, await readTxFor(model.db, asOfNs), { id });
  if (!v) throw new ServiceError('not-found', `view ${id} not found`);
  return v;
}

export function viewRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listViews', method: 'get', path: '/v1/model/views', area: 'Model',
      summary: 'The views the caller may read',
      access: { kind: 'capability', capability: 'read', scope: 'each-result' },
      query: ViewListQuery,
      response: { status: 200, schema: ViewList },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const all = await viewsAt(model.db, await readTxFor(model.db, ctx.query.as_of_ns), { includeRetired: ctx.query.include_retired });
        const views = [];
        for (const v of all) if (await ctx.can('read', { kind: 'view', id: v.view_id })) views.push(v);
        return { body: { views } };
      },
    }),
    defineRoute({
      operationId: 'createView', method: 'post', path: '/v1/model/views', area: 'Model',
      summary: 'Create a view: a name and members, each an asset placed under another member or at the top',
      access: { kind: 'capability', capability: 'model-edit', scope: 'global' },
      body: CreateViewBody,
      response: { status: 201, schema: View },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        const { viewId } = await createView(modelOf(ctx), who(ctx, ctx.body.reason), ctx.body);
        return { status: 201, body: await viewOf(ctx, viewId) };
      },
    }),
    defineRoute({
      operationId: 'getView', method: 'get', path: '/v1/model/views/{uuid}', area: 'Model',
      summary: 'One view, optionally as of a time',
      access: { kind: 'capability', capability: 'read', scope: 'path-view' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: View },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await viewOf(ctx, ctx.params.uuid, ctx.query.as_of_ns) }),
    }),
    defineRoute({
      operationId: 'patchView', method: 'patch', path: '/v1/model/views/{uuid}', area: 'Model',
      summary: 'Rename, retire, unretire a view, or replace its members',
      access: { kind: 'capability', capability: 'model-edit', scope: 'path-view' },
      params: UuidParams, body: PatchViewBody,
      response: { status: 200, schema: View },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await patchView(modelOf(ctx), who(ctx, ctx.body.reason), ctx.params.uuid, ctx.body);
        return { body: await viewOf(ctx, ctx.params.uuid) };
      },
    }),
    defineRoute({
      operationId: 'getViewTree', method: 'get', path: '/v1/model/views/{uuid}/tree', area: 'Model',
      summary: 'The hierarchy of a view: its members nested as the view places them, with their asset paths',
      access: { kind: 'capability', capability: 'read', scope: 'path-view' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: ViewTreeResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, ctx.query.as_of_ns);
        const view = await viewOf(ctx, ctx.params.uuid, ctx.query.as_of_ns);
        const [members, tree] = [await viewMembersAt(model.db, tx, view.view_id), await model.tree(tx)];
        const nodes = new Map<string, TreeNodeShape>();
        const roots: TreeNodeShape[] = [];
        for (const m of members) {
          const a = tree.get(m.asset_id);
          if (!a) continue; // an asset absent at this read (cannot happen for current reads)
          nodes.set(m.asset_id, { asset_id: a.asset_id, name: a.name, path: tree.path(a), template_id: a.template_id, retired: a.retired, tx_id: a.tx_id, children: [] });
        }
        for (const m of members) {
          const n = nodes.get(m.asset_id);
          if (!n) continue;
          const p = m.parent_asset_id === null ? undefined : nodes.get(m.parent_asset_id);
          (p ? p.children : roots).push(n);
        }
        return { body: { view, roots } };
      },
    }),
  ];
}
