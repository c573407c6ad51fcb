-- Administration change sets: a previewed, hashed set of model operations that is
-- committed (with a receipt) or cancelled. Not versioned: the change set is the record.
CREATE TABLE change_set (
  change_set_id uuid   PRIMARY KEY,
  state         text   NOT NULL,
  reason        text   NOT NULL,
  operations    jsonb  NOT NULL,
  preview       jsonb  NOT NULL,
  preview_hash  text   NOT NULL,
  created_ns    bigint NOT NULL,
  committed_ns  bigint,
  principal     text   NOT NULL,
  receipt       jsonb,
  error         jsonb,
  CONSTRAINT change_set_state CHECK (state IN ('preview', 'committed', 'cancelled', 'failed')),
  CONSTRAINT change_set_hash CHECK (preview_hash ~ '^[0-9a-f]{64}$')
);
CREATE INDEX change_set_created ON change_set (created_ns);
