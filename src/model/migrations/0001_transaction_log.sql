-- The model transaction log: every model change commits through one row here, and its
-- events feed GET /v1/model/events. tx_id is the model's version number.
CREATE TABLE model_tx (
  tx_id        bigserial PRIMARY KEY,
  committed_ns bigint NOT NULL,
  principal    text   NOT NULL,
  reason       text   NOT NULL DEFAULT ''
);
CREATE INDEX model_tx_committed ON model_tx (committed_ns);

CREATE TABLE model_event (
  tx_id       bigint  NOT NULL REFERENCES model_tx (tx_id),
  seq         integer NOT NULL,
  entity_kind text    NOT NULL,
  entity_id   uuid    NOT NULL,
  action      text    NOT NULL,
  details     jsonb   NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (tx_id, seq)
);
CREATE INDEX model_event_entity ON model_event (entity_id, tx_id);
