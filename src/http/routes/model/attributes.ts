// Attributes (the Effective attribute) and their bindings. Access is checked on the
// asset that carries the attribute, hidden as 404 when the caller cannot read it.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor, type ReadTx } from '../../../model/versions/history.js';
import { attributesWhere, effectiveAttributes, type EffectiveAttribute } from '../../../model/attributes/effective.js';
import { createAttribute, patchAttribute } from '../../../model/attributes/attributes.js';
import { bind, bindingHistory } from '../../../model/bindings/bindings.js';
import type { Capability } from '../../../auth/capabilities.js';
import { modelOf, who } from './context.js';
import {
  UuidParams, AsOfQuery, EffectiveAttribute as EffectiveAttributeSchema, CreateAttributeBody, PatchAttributeBody,
  CreateBindingBody, BindingResult, BindingHistory,
} from './schemas.js';

/** The attribute at the read, after checking the capability on its asset (404 when hidden or absent). */
async function attributeFor(ctx: HandlerContext, id: string, tx: ReadTx, cap: Capability): Promise<EffectiveAttribute> {
  const model = modelOf(ctx);
  const rows = await attributesWhere(model.db, tx, (a) => `a.attribute_id = ${a.add(id)}`);
  if (!rows[0]) throw new ServiceError('not-found', `attribute ${id} not found`);
  await ctx.authorize(cap, { kind: 'asset', id: rows[0].asset_id }, { hide: true });
  return (await effectiveAttributes(model.db, tx, rows))[0];
}

export function attributeRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createAttribute', method: 'post', path: '/v1/model/attributes', area: 'Model',
      summary: 'Create an attribute on one asset: following a definition of the asset\'s template, or with its own definition',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      body: CreateAttributeBody,
      response: { status: 201, schema: EffectiveAttributeSchema },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await ctx.authorize('model-edit', { kind: 'asset', id: ctx.body.asset_id });
        const { attributeId } = await createAttribute(modelOf(ctx), who(ctx, ctx.body.reason), ctx.body);
        return { status: 201, body: await attributeFor(ctx, attributeId, null, 'read') };
      },
    }),
    defineRoute({
      operationId: 'getAttribute', method: 'get', path: '/v1/model/attributes/{uuid}', area: 'Model',
      summary: 'The Effective attribute: its definition with the asset\'s overrides applied',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: EffectiveAttributeSchema },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        return { body: await attributeFor(ctx, ctx.params.uuid, await readTxFor(model.db, ctx.query.as_of_ns), 'read') };
      },
    }),
    defineRoute({
      operationId: 'patchAttribute', method: 'patch', path: '/v1/model/attributes/{uuid}', area: 'Model',
      summary: 'Override the fields the definition lets the asset override, retire or unretire an attribute',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      params: UuidParams, body: PatchAttributeBody,
      response: { status: 200, schema: EffectiveAttributeSchema },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await attributeFor(ctx, ctx.params.uuid, null, 'model-edit');
        await patchAttribute(modelOf(ctx), who(ctx, ctx.body.reason), ctx.params.uuid, ctx.body);
        return { body: await attributeFor(ctx, ctx.params.uuid, null, 'read') };
      },
    }),
    defineRoute({
      operationId: 'listAttributeBindings', method: 'get', path: '/v1/model/attributes/{uuid}/bindings', area: 'Model',
      summary: 'The whole binding history of an attribute, by valid time',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: UuidParams, query: AsOfQuery,
      response: { status: 200, schema: BindingHistory },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, ctx.query.as_of_ns);
        await attributeFor(ctx, ctx.params.uuid, tx, 'read');
        return { body: { bindings: await bindingHistory(model.db, tx, ctx.params.uuid) } };
      },
    }),
    defineRoute({
      operationId: 'createBinding', method: 'post', path: '/v1/model/bindings', area: 'Model',
      summary: 'Bind an attribute to a series from a time on; an open binding starting earlier closes at that instant',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      body: CreateBindingBody,
      response: { status: 201, schema: BindingResult },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        await attributeFor(ctx, b.attribute_id, null, 'model-edit');
        const r = await bind(modelOf(ctx), who(ctx, b.reason), {
          attribute_id: b.attribute_id, series_id: b.series_id, from_ns: BigInt(b.from_ns), to_ns: b.to_ns == null ? null : BigInt(b.to_ns),
        });
        return { status: 201, body: { binding: r.binding, closed: r.closed, tx_id: r.txId } };
      },
    }),
  ];
}
