-- Model jobs: bulk model work created with a server-computed preview and committed as
-- exactly that preview in one model transaction. preview_tx is the newest model
-- transaction when the preview was computed.
CREATE TABLE model_job (
  job_id       bigserial PRIMARY KEY,
  kind         text   NOT NULL,
  state        text   NOT NULL,
  params       jsonb  NOT NULL,
  preview      jsonb,
  preview_tx   bigint NOT NULL,
  created_ns   bigint NOT NULL,
  committed_ns bigint,
  committed_tx bigint,
  principal    text   NOT NULL,
  error        text,
  CONSTRAINT model_job_state CHECK (state IN ('preview', 'committed', 'failed'))
);
CREATE INDEX model_job_created ON model_job (created_ns, job_id);
