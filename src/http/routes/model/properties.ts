// Asset properties: own rows, or rows inherited down the tree with effective=true.
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { readTxFor } from '../../../model/versions/history.js';
import { propertiesOf, effectiveProperties, putProperty, deleteProperty } from '../../../model/assets/properties.js';
import { modelOf, who } from './context.js';
import { UuidParams, PropertiesQuery, PropertiesResponse, PropertyParams, PutPropertyBody, OwnProperty, DeletePropertyQuery } from './schemas.js';

export function propertyRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listAssetProperties', method: 'get', path: '/v1/model/assets/{uuid}/properties', area: 'Model',
      summary: 'An asset\'s own properties, or with effective=true the properties it inherits (nearest ancestor wins)',
      access: { kind: 'capability', capability: 'read', scope: 'path-asset' },
      params: UuidParams, query: PropertiesQuery,
      response: { status: 200, schema: PropertiesResponse },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const model = modelOf(ctx);
        const tx = await readTxFor(model.db, ctx.query.as_of_ns);
        const tree = await model.tree(tx);
        const n = tree.get(ctx.params.uuid);
        if (!n) throw new ServiceError('not-found', `asset ${ctx.params.uuid} not found`);
        const properties = ctx.query.effective ? await effectiveProperties(model.db, tx, tree.ancestry(n)) : await propertiesOf(model.db, tx, [n.asset_id]);
        return { body: { properties } };
      },
    }),
    defineRoute({
      operationId: 'putAssetProperty', method: 'put', path: '/v1/model/assets/{uuid}/properties/{key}', area: 'Model',
      summary: 'Set a property of an asset (a new version of it when the key exists)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'path-asset' },
      params: PropertyParams, body: PutPropertyBody,
      response: { status: 200, schema: OwnProperty },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const b = ctx.body;
        if (b.value === undefined) throw new ServiceError('invalid-request', 'value: required', { errors: [{ field: 'body.value', problem: 'required' }] });
        const { property } = await putProperty(modelOf(ctx), who(ctx, b.reason), ctx.params.uuid, ctx.params.key, b.value,
          b.valid_from_ns === undefined ? undefined : BigInt(b.valid_from_ns));
        return { body: property };
      },
    }),
    defineRoute({
      operationId: 'deleteAssetProperty', method: 'delete', path: '/v1/model/assets/{uuid}/properties/{key}', area: 'Model',
      summary: 'Remove a property from an asset (its history stays readable with as_of_ns)',
      access: { kind: 'capability', capability: 'model-edit', scope: 'path-asset' },
      params: PropertyParams, query: DeletePropertyQuery,
      response: { status: 204 },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        await deleteProperty(modelOf(ctx), who(ctx, ctx.query.reason), ctx.params.uuid, ctx.params.key);
        return { kind: 'empty', status: 204 };
      },
    }),
  ];
}
