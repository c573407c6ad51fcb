// Administration: change sets. Created with a server-derived preview and its hash,
// read, committed with that hash (409 on drift, mismatch or a final state), cancelled.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { modelOf } from '../model/context.js';
import { createChangeSet, getChangeSet, commitChangeSet, cancelChangeSet, type ChangeSet as ChangeSetValue, type ChangeSetDeps } from '../../../change-sets/change-sets.js';
import type { RenameOperation } from '../../../change-sets/asset-rename.js';
import { ChangeSet, CreateChangeSetBody, CommitChangeSetBody, ChangeSetParams } from './schemas.js';

const AREA = 'Administration';

function deps(ctx: HandlerContext): ChangeSetDeps {
  return { db: ctx.service.db, model: modelOf(ctx), operations: ctx.service.operations };
}

/** Loads a change set the caller may see: the capability on every asset it touches (404 otherwise, so ids do not leak). */
async function visible(ctx: HandlerContext, id: string, capability: 'read' | 'model-edit'): Promise<ChangeSetValue> {
  const cs = await getChangeSet(ctx.service.db, id);
  if (!cs) throw new ServiceError('not-found', `change set ${id} not found`);
  for (const op of cs.operations) await ctx.authorize(capability, { kind: 'asset', id: op.asset_id }, { hide: true });
  return cs;
}

export function changeSetRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createChangeSet', method: 'post', path: '/v1/admin/change-sets', area: AREA,
      summary: 'Create a change set with one asset.rename operation; the server derives its preview and preview_hash',
      description: 'preview_hash is the lowercase hex SHA-256 of the canonical JSON of preview: object keys sorted, no whitespace, strings escaped as JSON.stringify does.',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      body: CreateChangeSetBody,
      idempotency: 'required',
      response: { status: 201, schema: ChangeSet },
      errors: [400, 401, 403, 404, 409, 500, 503],
      handler: async (ctx) => {
        const op = ctx.body.operations[0];
        await ctx.authorize('model-edit', { kind: 'asset', id: op.asset_id });
        const cs = await createChangeSet(deps(ctx), ctx.principal?.subject ?? 'anonymous', ctx.body.reason, ctx.body.operations as RenameOperation[]);
        return { status: 201, body: cs };
      },
    }),
    defineRoute({
      operationId: 'getChangeSet', method: 'get', path: '/v1/admin/change-sets/{id}', area: AREA,
      summary: 'One change set, with its preview and, once committed, its receipt',
      access: { kind: 'capability', capability: 'read', scope: 'handler' },
      params: ChangeSetParams,
      response: { status: 200, schema: ChangeSet },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await visible(ctx, ctx.params.id, 'read') }),
    }),
    defineRoute({
      operationId: 'commitChangeSet', method: 'post', path: '/v1/admin/change-sets/{id}/commit', area: AREA,
      summary: 'Commit a previewed change set; 409 conflict (Drift details) when the asset changed since base_tx, 409 hash-mismatch, 409 conflict (State details) from a final state',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      params: ChangeSetParams, body: CommitChangeSetBody,
      response: { status: 200, schema: ChangeSet },
      errors: [400, 401, 403, 404, 409, 500, 503],
      handler: async (ctx) => {
        await visible(ctx, ctx.params.id, 'model-edit');
        return { body: await commitChangeSet(deps(ctx), ctx.params.id, ctx.body.preview_hash, ctx.principal?.subject ?? 'anonymous') };
      },
    }),
    defineRoute({
      operationId: 'cancelChangeSet', method: 'post', path: '/v1/admin/change-sets/{id}/cancel', area: AREA,
      summary: 'Cancel a previewed change set; 409 conflict (State details) from a final state',
      access: { kind: 'capability', capability: 'model-edit', scope: 'handler' },
      params: ChangeSetParams,
      response: { status: 200, schema: ChangeSet },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await visible(ctx, ctx.params.id, 'model-edit');
        return { body: await cancelChangeSet(deps(ctx), ctx.params.id) };
      },
    }),
  ];
}
