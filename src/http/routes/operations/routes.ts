// Operations area: long-running server work, filtered to what the caller may inspect
// (its own work; everything for holders of `admin`).
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import { OPERATION_ID_RE } from '../../../operations/catalogue.js';
import { OperationRecord, OperationPage, ListOperationsQuery, OperationIdParams } from './schemas.js';

const DEFAULT_LIMIT = 100;

/** Administrators inspect all work; everyone else only their own. */
async function visibleOwner(ctx: HandlerContext): Promise<string | undefined> {
  const p = ctx.principal;
  if (!p) throw new ServiceError('unauthenticated', 'authentication required');
  return (await ctx.can('admin', { kind: 'global' })) ? undefined : p.subject;
}

export function operationsRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listOperations', method: 'get', path: '/v1/operations', area: 'Operations',
      summary: 'List long-running work the caller may inspect, oldest first',
      access: { kind: 'authenticated', scope: 'owner-or-admin' },
      query: ListOperationsQuery,
      response: { status: 200, schema: OperationPage },
      errors: [400, 500, 503],
      handler: async (ctx) => {
        const q = ctx.query;
        const limit = q.limit ?? DEFAULT_LIMIT;
        let after: { createdNs: bigint; id: string } | undefined;
        if (q.cursor) {
          const [created, id] = decodeCursor('operations', q.cursor, 2);
          after = { createdNs: cursorInt64(created), id };
        }
        let page;
        try {
          page = await ctx.service.operations.list({ kind: q.kind, state: q.state, principal: await visibleOwner(ctx), limit, after });
        } catch (e) {
          if (e instanceof ServiceError) throw e;
          ctx.log.error({ err: e }, 'operations catalogue failed');
          throw new ServiceError('operations-catalogue-failed', 'the operations catalogue could not be read');
        }
        const last = page.items[page.items.length - 1];
        return { body: { items: page.items, next_cursor: page.more && last ? encodeCursor('operations', [last.created_ns, last.id]) : null } };
      },
    }),
    defineRoute({
      operationId: 'getOperation', method: 'get', path: '/v1/operations/{id}', area: 'Operations',
      summary: 'One operation record, if the caller may inspect it',
      access: { kind: 'authenticated', scope: 'owner-or-admin' },
      params: OperationIdParams,
      response: { status: 200, schema: OperationRecord },
      errors: [400, 404, 500, 503],
      handler: async (ctx) => {
        const { id } = ctx.params;
        if (!OPERATION_ID_RE.test(id)) throw new ServiceError('invalid-request', 'id: not a namespaced operation id (namespace:local-id)', { errors: [{ field: 'path.id', problem: 'not a namespaced operation id' }] });
        const owner = await visibleOwner(ctx);
        const op = await ctx.service.operations.get(id);
        if (!op || (owner !== undefined && op.principal !== owner)) throw new ServiceError('not-found', `operation ${id} not found`);
        return { body: op };
      },
    }),
  ];
}
