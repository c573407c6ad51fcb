-- Idempotency-Key records: one per (principal, route, key). A row with status NULL is a
-- request still running; it holds the key so a concurrent duplicate waits or conflicts.
CREATE TABLE idempotency_record (
  principal    text   NOT NULL,
  route        text   NOT NULL,
  key          text   NOT NULL,
  body_hash    bytea  NOT NULL,
  status       integer,
  headers      jsonb,
  body         bytea,
  created_ns   bigint NOT NULL,
  PRIMARY KEY (principal, route, key)
);
CREATE INDEX idempotency_record_created ON idempotency_record (created_ns);
