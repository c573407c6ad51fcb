// Collectors area: diagnostics of the collector ingest stream. The live numbers come from
// the ingest worker; a collector seen before a restart keeps its epoch and counters.
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { CollectorDetail, CollectorDiagnostic, CollectorIdParams } from './schemas.js';

export function collectorsRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listCollectors', method: 'get', path: '/v1/collectors', area: 'Collectors and jobs',
      summary: 'Diagnostics of every collector the service has met, by collector_id',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      response: { status: 200, schema: Type.Array(CollectorDiagnostic) },
      errors: [401, 403, 503],
      handler: async (ctx) => ({ body: await ctx.service.parts.ingest.diagnostics() }),
    }),
    defineRoute({
      operationId: 'getCollector', method: 'get', path: '/v1/collectors/{collector_id}', area: 'Collectors and jobs',
      summary: 'One collector\'s diagnostic with its session, lanes and per-stream detail',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      params: CollectorIdParams,
      response: { status: 200, schema: CollectorDetail },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => {
        const d = await ctx.service.parts.ingest.detail(ctx.params.collector_id);
        if (!d) throw new ServiceError('not-found', `collector ${ctx.params.collector_id} not found`, { collector_id: ctx.params.collector_id });
        return { body: d };
      },
    }),
  ];
}
