// Links: typed, directed edges between assets. Reading a link needs read on both ends;
// creating or changing one needs model-edit on both.
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { createLink, patchLink, linksOfAsset, linkAt } from '../../../model/links/links.js';
import { modelOf, who, assetReader } from './context.js';
import { UuidParams, Link, CreateLinkBody, PatchLinkBody, AssetLinksQuery, LinkList } from './schemas.js';

export function linkRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createLink', method: 'post', path: '/v1/model/links', area: 'Model',
      summary: 'Link two assets with a typed, directed link (from_asset to to_asset)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      body: CreateLinkBody,
      response: { status: 201, schema: Link },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => {
        await ctx.authorize('model-edit', { kind: 'asset', id: ctx.body.from_asset });
        await ctx.authorize('model-edit', { kind: 'asset', id: ctx.body.to_asset });
        const { link } = await createLink(modelOf(ctx), who(ctx, ctx.body.reason), ctx.body);
        return { status: 201, body: link };
      },
    }),
    defineRoute({
      operationId: 'patchLink', method: 'patch', path: '/v1/model/links/{uuid}', area: 'Model',
      summary: 'Retire or restore a link',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      params: UuidParams, body: PatchLinkBody,
      response: { status: 200, schema: Link },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const cur = await linkAt(model.db, null, ctx.params.uuid);
        if (!cur) throw new ServiceError('not-found', `link ${ctx.params.uuid} not found`);
        await ctx.authorize('model-edit', { kind: 'asset', id: cur.from_asset }, { hide: true });
        await ctx.authorize('model-edit', { kind: 'asset', id: cur.to_asset }, { hide: true });
        const { link } = await patchLink(model, who(ctx, ctx.body.reason), ctx.params.uuid, ctx.body);
        return { body: link };
      },
    }),
    defineRoute({
      operationId: 'listAssetLinks', method: 'get', path: '/v1/model/assets/{uuid}/links', area: 'Model',
      summary: 'Links of an asset: outgoing, incoming or both; retired ones on request',
      access: { kind: 'capability', capability: 'read', scope: 'path-asset' },
      params: UuidParams, query: AssetLinksQuery,
      response: { status: 200, schema: LinkList },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, ctx.query.as_of_ns);
        if (!(await model.tree(tx)).get(ctx.params.uuid)) throw new ServiceError('not-found', `asset ${ctx.params.uuid} not found`);
        const all = await linksOfAsset(model.db, tx, ctx.params.uuid, ctx.query.direction ?? 'both', ctx.query.include_retired ?? false);
        const reader = await assetReader(ctx);
        const links = [];
        for (const l of all) if (await reader.asset(l.from_asset) && await reader.asset(l.to_asset)) links.push(l);
        return { body: { links } };
      },
    }),
  ];
}
