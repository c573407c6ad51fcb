-- Calculation rules, kept as history like the asset model: a version row is valid from
-- the transaction that wrote it (tx_from) until the one that replaced it (tx_to, NULL
-- while current). `definition` is the rule as the author sent it (spec "Calculation
-- rule"); the scope columns are copied out of it so lists filter by index.
CREATE TABLE calc_rule_version (
  rule_id        uuid    NOT NULL,
  version        integer NOT NULL,
  name           text    NOT NULL,
  template_id    uuid,
  asset_id       uuid,
  output_id      uuid    NOT NULL,
  definition     jsonb   NOT NULL,
  -- The attribute references its expressions read, as written (cycle checks read them back).
  input_refs     text[]  NOT NULL DEFAULT '{}',
  retired        boolean NOT NULL DEFAULT false,
  -- 'history' or 'from-now' for a version written by PUT; NULL for version 1 and retirements.
  recompute      text,
  valid_from_ns  bigint  NOT NULL,
  tx_from        bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to          bigint,
  PRIMARY KEY (rule_id, tx_from),
  CONSTRAINT calc_rule_scope CHECK ((template_id IS NULL) <> (asset_id IS NULL))
);
CREATE UNIQUE INDEX calc_rule_current ON calc_rule_version (rule_id) WHERE tx_to IS NULL;
CREATE INDEX calc_rule_template ON calc_rule_version (template_id) WHERE tx_to IS NULL;
CREATE INDEX calc_rule_asset ON calc_rule_version (asset_id) WHERE tx_to IS NULL;
CREATE INDEX calc_rule_history ON calc_rule_version (rule_id, tx_from);

-- Per (rule, asset): the instant through which outputs are durable. Written after the
-- storage write that made them durable, so a restart resumes after it: re-evaluating an
-- instant rewrites the same value (a no-op in storage), so nothing is lost or doubled.
CREATE TABLE calc_progress (
  rule_id              uuid    NOT NULL,
  asset_id             uuid    NOT NULL,
  evaluated_through_ns bigint  NOT NULL,
  rule_version         integer NOT NULL,
  evaluations          bigint  NOT NULL DEFAULT 0,
  errors               bigint  NOT NULL DEFAULT 0,
  last_error           text,
  last_error_ns        bigint,
  updated_ns           bigint  NOT NULL,
  PRIMARY KEY (rule_id, asset_id)
);

-- Lineage: which rule version produced which window of an output series. Consecutive
-- evaluations by one version extend the newest window instead of adding rows.
CREATE TABLE calc_lineage (
  rule_id         uuid    NOT NULL,
  asset_id        uuid    NOT NULL,
  output_series   uuid    NOT NULL,
  rule_version    integer NOT NULL,
  start_ns        bigint  NOT NULL,
  end_ns          bigint  NOT NULL,
  evaluated_at_ns bigint  NOT NULL,
  seq             bigserial PRIMARY KEY
);
CREATE INDEX calc_lineage_output ON calc_lineage (output_series, start_ns);
CREATE INDEX calc_lineage_rule ON calc_lineage (rule_id, asset_id, seq);

-- Backfill jobs: a preview computed first, then committed (written) or cancelled.
CREATE TABLE calc_backfill (
  job_id          uuid    PRIMARY KEY,
  rule_id         uuid    NOT NULL,
  rule_version    integer NOT NULL,
  mode            text    NOT NULL,
  asset_ids       uuid[]  NOT NULL,
  start_ns        bigint  NOT NULL,
  end_ns          bigint  NOT NULL,
  state           text    NOT NULL,
  windows_total   bigint  NOT NULL DEFAULT 0,
  windows_done    bigint  NOT NULL DEFAULT 0,
  points_written  bigint  NOT NULL DEFAULT 0,
  rate_limited_ms bigint  NOT NULL DEFAULT 0,
  -- Commit resumes after this instant of the asset at assets_done (see backfill-runner.ts).
  assets_done     integer NOT NULL DEFAULT 0,
  resume_after_ns bigint,
  preview         jsonb,
  operation_id    text    NOT NULL,
  principal       text    NOT NULL,
  error           text,
  created_ns      bigint  NOT NULL,
  CONSTRAINT calc_backfill_mode CHECK (mode IN ('fill-gaps', 'recalculate')),
  CONSTRAINT calc_backfill_state CHECK (state IN ('previewing', 'preview', 'committing', 'committed', 'cancelled', 'failed'))
);
CREATE INDEX calc_backfill_rule ON calc_backfill (rule_id, created_ns);
