// GET /v1/jobs: the background work the server runs and the state of each job
// (capability read, held anywhere). The work itself lives in src/background-work.
import { defineRoute, type AnyRoute } from '../../route.js';
import { JobsResponse } from './schemas.js';

export function backgroundWorkRoutes(): AnyRoute[] {
  return [
    defineRoute({
      operationId: 'listJobs', method: 'get', path: '/v1/jobs', area: 'Collectors and jobs',
      summary: 'Background work the server runs: lifecycle enforcement, sealing idle heads; last run, outcome and next run',
      access: { kind: 'capability', capability: 'read', scope: 'anywhere' },
      response: { status: 200, schema: JobsResponse },
      errors: [503],
      handler: async (ctx) => ({
        body: ctx.service.parts.jobs.list().map((j) => ({
          name: j.name, kind: j.kind, interval_ms: j.intervalMs, running: j.running,
          last_run_ns: j.lastStartedNs, last_finished_ns: j.lastFinishedNs, last_outcome: j.lastOutcome,
          last_summary: j.lastSummary, last_error: j.lastError, last_operation_id: j.lastOperationId,
          next_run_ns: j.nextRunNs, runs: j.runs,
        })),
      }),
    }),
  ];
}
