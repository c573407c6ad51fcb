-- Episodes (issue #28): templates, episodes, the assets they involve, and genealogy links,
-- kept as history in transaction time like the asset model (a row is valid from tx_from
-- until tx_to, NULL while current), so every change is one model transaction and any of
-- them reads as of a time.

-- A template keeps every version: episodes name the version they were made with.
CREATE TABLE episode_template_version (
  template_id uuid    NOT NULL,
  version     integer NOT NULL,
  name        text    NOT NULL,
  family      text    NOT NULL,
  -- the validated creation body (roles, attributes with capture rules, overlap, trigger...)
  definition  jsonb   NOT NULL,
  tx_from     bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to       bigint,
  PRIMARY KEY (template_id, version)
);
CREATE UNIQUE INDEX episode_template_current ON episode_template_version (template_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX episode_template_name_current ON episode_template_version (name) WHERE tx_to IS NULL;
CREATE INDEX episode_template_history ON episode_template_version (template_id, tx_from);

CREATE TABLE episode_version (
  episode_id       uuid    NOT NULL,
  version          integer NOT NULL,
  template_id      uuid    NOT NULL,
  template_version integer NOT NULL,
  name             text    NOT NULL,
  state            text    NOT NULL CHECK (state IN ('open', 'closed', 'void')),
  start_ns         bigint  NOT NULL,
  end_ns           bigint,
  parent_id        uuid,
  -- [{role, asset_id}]
  assets           jsonb   NOT NULL,
  -- {name: {value, source, ...}}: entered and captured attribute values
  attributes       jsonb   NOT NULL,
  void_reason      text,
  origin           text    NOT NULL,
  tx_from          bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to            bigint,
  PRIMARY KEY (episode_id, version)
);
CREATE UNIQUE INDEX episode_current ON episode_version (episode_id) WHERE tx_to IS NULL;
CREATE INDEX episode_history ON episode_version (episode_id, tx_from);
CREATE INDEX episode_current_template ON episode_version (template_id, start_ns) WHERE tx_to IS NULL;
CREATE INDEX episode_current_start ON episode_version (start_ns, episode_id) WHERE tx_to IS NULL;
CREATE INDEX episode_children ON episode_version (parent_id) WHERE tx_to IS NULL AND parent_id IS NOT NULL;

-- The current episodes per asset, rewritten with each episode version: what the query by
-- asset, subtree or view and time overlap reads. Closed episodes are found by start_ns
-- within [query start - longest span, query end) on the (asset_id, start_ns) btree; open
-- ones (end_ns NULL) by the partial index. A GiST over int8range would need btree_gist
-- for the asset key, which the embedded PGlite does not load (docs/decisions.md).
CREATE TABLE episode_asset (
  episode_id  uuid   NOT NULL,
  asset_id    uuid   NOT NULL,
  role        text   NOT NULL,
  template_id uuid   NOT NULL,
  state       text   NOT NULL,
  start_ns    bigint NOT NULL,
  end_ns      bigint,
  PRIMARY KEY (episode_id, asset_id, role)
);
CREATE INDEX episode_asset_time ON episode_asset (asset_id, start_ns);
CREATE INDEX episode_asset_open ON episode_asset (asset_id, start_ns) WHERE end_ns IS NULL;

-- The longest span (end - start) of any closed episode ever written: the lower bound of
-- the start_ns range an overlap query scans. It only grows (a shortened episode leaves it
-- wider than needed, never too narrow).
CREATE TABLE episode_span_bound (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  max_span_ns bigint  NOT NULL
);
INSERT INTO episode_span_bound (singleton, max_span_ns) VALUES (true, 0);

-- Typed, directed genealogy links between episodes; the type is a link-types registry entry.
CREATE TABLE episode_link_version (
  link_id      uuid   NOT NULL,
  from_episode uuid   NOT NULL,
  to_episode   uuid   NOT NULL,
  link_type_id uuid   NOT NULL,
  retired      boolean NOT NULL DEFAULT false,
  tx_from      bigint NOT NULL REFERENCES model_tx (tx_id),
  tx_to        bigint,
  PRIMARY KEY (link_id, tx_from)
);
CREATE UNIQUE INDEX episode_link_current ON episode_link_version (link_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX episode_link_unique ON episode_link_version (from_episode, to_episode, link_type_id) WHERE tx_to IS NULL AND NOT retired;
CREATE INDEX episode_link_from ON episode_link_version (from_episode) WHERE tx_to IS NULL;
CREATE INDEX episode_link_to ON episode_link_version (to_episode) WHERE tx_to IS NULL;
CREATE INDEX episode_link_history ON episode_link_version (from_episode, tx_from);
