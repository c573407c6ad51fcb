// Model jobs: bulk model work previewed by the server and committed as previewed.
import { defineRoute, type AnyRoute, type HandlerContext } from '../../route.js';
import { ServiceError } from '../../../errors.js';
import { encodeCursor, decodeCursor, cursorInt64 } from '../../../cursor.js';
import { createJob, getJob, listJobs, commitJob } from '../../../model/bulk-jobs/bulk-jobs.js';
import { ModelJob, CreateJobBody, JobParams, ListJobsQuery, JobPage } from './schemas.js';

const AREA = 'Model';

/** Holders of admin see every job; others their own. */
async function owner(ctx: HandlerContext): Promise<string | undefined> {
  return (await ctx.can('admin', { kind: 'global' })) ? undefined : ctx.principal?.subject ?? 'anonymous';
}

async function visibleJob(ctx: HandlerContext, id: string) {
  const job = await getJob(ctx.service.db, BigInt(id));
  const who = await owner(ctx);
  if (!job || (who !== undefined && job.principal !== who)) throw new ServiceError('not-found', `model job ${id} not found`);
  return job;
}

export function bulkJobsRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'createModelJob', method: 'post', path: '/v1/model/jobs', area: AREA,
      summary: 'Create a model job in preview with a server-computed preview of what it will change',
      access: { kind: 'capability', capability: 'model-edit', scope: 'anywhere' },
      body: CreateJobBody, idempotency: 'optional',
      response: { status: 200, schema: ModelJob },
      errors: [400, 401, 403, 409, 503],
      handler: async (ctx) => ({ body: await createJob(ctx.service.db, ctx.principal?.subject ?? 'anonymous', ctx.body.kind, ctx.body.params) }),
    }),
    defineRoute({
      operationId: 'listModelJobs', method: 'get', path: '/v1/model/jobs', area: AREA,
      summary: 'Model jobs the caller created (all of them for administrators), oldest first',
      access: { kind: 'capability', capability: 'model-edit', scope: 'anywhere' },
      query: ListJobsQuery,
      response: { status: 200, schema: JobPage },
      errors: [400, 401, 403, 503],
      handler: async (ctx) => {
        let after: bigint | undefined;
        if (ctx.query.cursor) {
          const [id] = decodeCursor('model-jobs', ctx.query.cursor, 1);
          after = cursorInt64(id);
        }
        const page = await listJobs(ctx.service.db, { principal: await owner(ctx), after, limit: ctx.query.limit ?? 100 });
        const last = page.items[page.items.length - 1];
        return { body: { items: page.items, next_cursor: page.more && last ? encodeCursor('model-jobs', [String(last.job_id)]) : null } };
      },
    }),
    defineRoute({
      operationId: 'getModelJob', method: 'get', path: '/v1/model/jobs/{id}', area: AREA,
      summary: 'One model job with its preview',
      access: { kind: 'capability', capability: 'model-edit', scope: 'anywhere' },
      params: JobParams,
      response: { status: 200, schema: ModelJob },
      errors: [400, 401, 403, 404, 503],
      handler: async (ctx) => ({ body: await visibleJob(ctx, ctx.params.id) }),
    }),
    defineRoute({
      operationId: 'commitModelJob', method: 'post', path: '/v1/model/jobs/{id}/commit', area: AREA,
      summary: 'Apply exactly the preview in one model transaction; 409 conflict when the model moved since the preview or the job is not in preview',
      access: { kind: 'capability', capability: 'model-edit', scope: 'anywhere' },
      params: JobParams,
      response: { status: 200, schema: ModelJob },
      errors: [400, 401, 403, 404, 409, 503],
      handler: async (ctx) => {
        await visibleJob(ctx, ctx.params.id);
        return { body: await commitJob(ctx.service.db, { principal: ctx.principal?.subject ?? 'anonymous', reason: `model job ${ctx.params.id}` }, BigInt(ctx.params.id)) };
      },
    }),
  ];
}
