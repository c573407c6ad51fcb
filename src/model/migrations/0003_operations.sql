-- Operation records for long-running server work (spec "Operation record").
CREATE TABLE operation (
  id                       text   PRIMARY KEY,
  kind                     text   NOT NULL,
  principal                text   NOT NULL,
  reason                   text   NOT NULL DEFAULT '',
  source_change_set_id     uuid,
  state                    text   NOT NULL,
  stage                    text   NOT NULL DEFAULT '',
  progress_completed       bigint NOT NULL DEFAULT 0,
  progress_total           bigint,
  progress_unit            text   NOT NULL DEFAULT 'items',
  rate                     double precision,
  estimated_work_remaining bigint,
  affected_resources       jsonb  NOT NULL DEFAULT '[]'::jsonb,
  cancellable              boolean NOT NULL DEFAULT false,
  cancel_requested         boolean NOT NULL DEFAULT false,
  created_ns               bigint NOT NULL,
  completed_ns             bigint,
  detail                   jsonb  NOT NULL,
  receipt                  jsonb,
  error                    jsonb,
  CONSTRAINT operation_state CHECK (state IN ('queued','running','awaiting-commit','completed','cancelled','failed'))
);
CREATE INDEX operation_listing ON operation (created_ns, id);
CREATE INDEX operation_principal ON operation (principal, created_ns, id);
