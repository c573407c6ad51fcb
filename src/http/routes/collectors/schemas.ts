import { Type } from '@sinclair/typebox';
import { Int64, Nullable, Uuid } from '../../schemas/common.js';

const diagnosticFields = {
  collector_id: Type.String(),
  session_epoch: Int64({ minimum: 0, description: 'Highest session epoch granted to the collector' }),
  streams: Type.Array(Type.String(), { description: 'Stream names of the latest session' }),
  last_batch_arrival_ns: Int64({ description: 'Server time the last batch arrived (0: never)' }),
  last_collector_receipt_ns: Int64({ description: 'Collector time it read the newest point it sent (0: never)' }),
  watermark_ns: Int64({ description: 'Lowest finalised watermark over the streams that declared one (0: none)' }),
  acked_through: Int64({ minimum: 0, description: 'Batches of the latest session settled (acknowledged or rejected), live plus backfill lane' }),
  credit_live: Int64({ minimum: 0, description: 'Live-lane credit the current session holds, in points' }),
  credit_backfill: Int64({ minimum: 0, description: 'Backfill-lane credit the current session holds, in points' }),
  fenced_streams_total: Int64({ minimum: 0 }),
  last_fenced_ns: Nullable(Int64()),
};

/** The spec's Collector diagnostic: exactly these fields, all required. */
export const CollectorDiagnostic = Type.Object(diagnosticFields, { $id: 'CollectorDiagnostic', additionalProperties: false });

const Lane = Type.Object({
  expected_seq: Int64({ minimum: 0 }),
  acked_through: Int64({ minimum: 0 }),
  credit: Int64({ description: 'Negative after an over-credit batch' }),
  batches_accepted: Int64({ minimum: 0 }),
  batches_rejected: Int64({ minimum: 0 }),
  points_written: Int64({ minimum: 0 }),
  points_refused: Int64({ minimum: 0 }),
  over_credit_total: Int64({ minimum: 0 }),
  credit_wait_ms: Int64({ minimum: 0, description: 'Time this lane held no credit' }),
}, { additionalProperties: false });

const StreamDetail = Type.Object({
  name: Type.String(),
  series_id: Nullable(Uuid()),
  value_type: Type.Union(['float64', 'int64', 'boolean', 'string', 'enum'].map((v) => Type.Literal(v))),
  accepted: Type.Boolean(),
  refusal: Nullable(Type.String()),
  points_written: Int64({ minimum: 0 }),
  points_refused: Int64({ minimum: 0 }),
  batches_rejected: Int64({ minimum: 0 }),
  last_ts_ns: Nullable(Int64()),
  watermark_ns: Nullable(Int64()),
}, { additionalProperties: false });

export const CollectorDetail = Type.Object({
  ...diagnosticFields,
  connected: Type.Boolean(),
  session_id: Nullable(Uuid()),
  identity: Nullable(Type.String()),
  agent: Type.String(),
  opened_ns: Nullable(Int64()),
  live: Nullable(Lane),
  backfill: Nullable(Lane),
  backfill_rate_limited_ms: Int64({ minimum: 0, description: 'Time backfill credit was withheld so live data kept its latency' }),
  rejections: Type.Record(Type.String(), Int64({ minimum: 0 }), { description: 'Rejected batches by reason since the worker started' }),
  stream_detail: Type.Array(StreamDetail),
}, { $id: 'CollectorDetail', additionalProperties: false });

export const CollectorIdParams = Type.Object({
  collector_id: Type.String({ minLength: 1, maxLength: 200 }),
}, { additionalProperties: false });
