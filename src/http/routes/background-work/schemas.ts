// GET /v1/jobs: the background work the server runs (lifecycle enforcement, sealing of
// idle heads; calculation schedules later), with the state of each job.
import { Type } from '@sinclair/typebox';
import { Int64, Nullable } from '../../schemas/common.js';

export const JobsResponse = Type.Array(Type.Object({
  name: Type.String(),
  kind: Type.String(),
  interval_ms: Type.Integer({ minimum: 1 }),
  running: Type.Boolean(),
  last_run_ns: Nullable(Int64({ description: 'when the last run started' })),
  last_finished_ns: Nullable(Int64()),
  last_outcome: Nullable(Type.Union([Type.Literal('succeeded'), Type.Literal('failed')])),
  last_summary: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  last_operation_id: Nullable(Type.String()),
  next_run_ns: Nullable(Int64()),
  runs: Type.Integer({ minimum: 0 }),
}, { additionalProperties: false }));
