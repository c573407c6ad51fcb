// Resolve (GET /v1/displays/resolve): a display and a context asset give every widget's
// selectors as attribute ids, or `unresolved` with a reason (PI Vision's swap asset).
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { Int64, Uuid, Nullable } from '../../schemas/common.js';
import type { AssetNode } from '../../../model/assets/asset-tree.js';
import { resolveDisplay } from '../../../displays/display-resolve.js';
import { modelOf, assetReader } from '../model/context.js';
import { visibleVersion } from './document-routes.js';
import { AttributeSelector } from './schemas.js';

const AREA = 'Displays';
const closed = { additionalProperties: false } as const;

export const ResolvedSelectorSchema = Type.Union([
  Type.Object({ kind: Type.Literal('attribute-id'), attribute_id: Uuid() }, closed),
  Type.Object({ kind: Type.Literal('unresolved'), name: Type.String(), reason: Type.String() }, closed),
]);

export const DisplayResolution = Type.Object({
  display_id: Uuid(), tx_id: Int64({ description: 'The display version resolved' }),
  asset_id: Nullable(Uuid()), asset_path: Nullable(Type.String()),
  selectors: Type.Array(Type.Object({
    widget_id: Type.String(),
    pointer: Type.String({ description: 'JSON pointer of the selector in the document' }),
    selector: AttributeSelector,
    resolved: ResolvedSelectorSchema,
    path: Nullable(Type.String({ description: 'The attribute path when resolved' })),
  }, closed)),
}, { ...closed, $id: 'DisplayResolution' });

const ResolveQuery = Type.Object({
  display_id: Uuid(),
  asset_id: Type.Optional(Uuid({ description: 'The context asset; without it template-relative selectors stay unresolved' })),
  version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
}, closed);

/** The context asset, which the caller must be able to read (else 404, existence not leaked). */
export async function contextAsset(ctx: HandlerContext, id: string | undefined): Promise<AssetNode | null> {
  if (id === undefined) return null;
  const n = (await modelOf(ctx).tree()).get(id);
  if (!n || !(await ctx.can('read', { kind: 'asset', id }))) throw new ServiceError('not-found', `asset ${id} not found`);
  return n;
}

export function resolveRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'resolveDisplay', method: 'get', path: '/v1/displays/resolve', area: AREA,
      summary: 'Every selector of a display\'s widgets resolved in a context asset: template-relative names become attribute ids (swap asset); what cannot resolve says why',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      query: ResolveQuery,
      response: { status: 200, schema: DisplayResolution },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        const row = await visibleVersion(ctx, q.display_id, q.version);
        const model = modelOf(ctx);
        const asset = await contextAsset(ctx, q.asset_id);
        const reader = await assetReader(ctx);
        const selectors = await resolveDisplay(model, row.document, asset, (id) => reader.asset(id));
        const tree = await model.tree();
        return { body: { display_id: row.display_id, tx_id: row.tx_id, asset_id: asset?.asset_id ?? null, asset_path: asset ? tree.path(asset) : null, selectors } };
      },
    }),
  ];
}
