-- Collectors the ingest worker has met: the highest session epoch granted (a restart must
-- not forget it, or a stale collector could write again) and the counters of the Collector
-- diagnostic, persisted every few seconds by the worker through the main thread.
CREATE TABLE ingest_collector (
  collector_id              text    PRIMARY KEY,
  session_epoch             bigint  NOT NULL,
  identity                  text    NOT NULL DEFAULT '',
  streams                   jsonb   NOT NULL DEFAULT '[]'::jsonb,
  last_batch_arrival_ns     bigint  NOT NULL DEFAULT 0,
  last_collector_receipt_ns bigint  NOT NULL DEFAULT 0,
  watermark_ns              bigint  NOT NULL DEFAULT 0,
  fenced_streams_total      bigint  NOT NULL DEFAULT 0,
  last_fenced_ns            bigint,
  updated_ns                bigint  NOT NULL
);
