-- The asset model, kept as history. Every entity is a chain of versions: a row is valid
-- from the transaction that wrote it (tx_from) until the transaction that replaced it
-- (tx_to, NULL while current). A read as of transaction T takes the rows with
-- tx_from <= T AND (tx_to IS NULL OR tx_to > T). The partial indexes on tx_to IS NULL
-- serve current reads; the plain ones serve as-of reads.
-- Names are unique among current siblings (retired ones too: unretiring must never clash).

CREATE TABLE asset_version (
  asset_id    uuid    NOT NULL,
  parent_id   uuid,
  name        text    NOT NULL,
  template_id uuid,
  timezone    text,
  retired     boolean NOT NULL DEFAULT false,
  tx_from     bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to       bigint,
  PRIMARY KEY (asset_id, tx_from)
);
CREATE UNIQUE INDEX asset_current ON asset_version (asset_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX asset_sibling_name ON asset_version
  (COALESCE(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name) WHERE tx_to IS NULL;
CREATE INDEX asset_children ON asset_version (parent_id) WHERE tx_to IS NULL;
CREATE INDEX asset_history ON asset_version (tx_from);

CREATE TABLE asset_property_version (
  property_id   uuid   NOT NULL,
  asset_id      uuid   NOT NULL,
  key           text   NOT NULL,
  value         jsonb  NOT NULL,
  valid_from_ns bigint NOT NULL,
  tx_from       bigint NOT NULL REFERENCES model_tx (tx_id),
  tx_to         bigint,
  PRIMARY KEY (property_id, tx_from)
);
CREATE UNIQUE INDEX asset_property_current ON asset_property_version (asset_id, key) WHERE tx_to IS NULL;
CREATE INDEX asset_property_history ON asset_property_version (asset_id, tx_from);

CREATE TABLE template_version (
  template_id        uuid    NOT NULL,
  name               text    NOT NULL,
  notes              text    NOT NULL DEFAULT '',
  permitted_children uuid[]  NOT NULL DEFAULT '{}',
  version            integer NOT NULL,
  tx_from            bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to              bigint,
  PRIMARY KEY (template_id, tx_from)
);
CREATE UNIQUE INDEX template_current ON template_version (template_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX template_name_current ON template_version (name) WHERE tx_to IS NULL;

-- A template's attribute definitions. A definition keeps its attr_def_id across template
-- versions while its name stays (a PATCH matches definitions by name).
CREATE TABLE attr_def_version (
  attr_def_id uuid    NOT NULL,
  template_id uuid    NOT NULL,
  ordinal     integer NOT NULL,
  name        text    NOT NULL,
  definition  jsonb   NOT NULL,
  tx_from     bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to       bigint,
  PRIMARY KEY (attr_def_id, tx_from)
);
CREATE INDEX attr_def_current ON attr_def_version (template_id) WHERE tx_to IS NULL;
CREATE INDEX attr_def_history ON attr_def_version (template_id, tx_from);

-- An attribute either follows a template definition (attr_def_id, with overrides) or
-- carries its own definition (attr_def_id NULL, definition set).
CREATE TABLE attribute_version (
  attribute_id uuid    NOT NULL,
  asset_id     uuid    NOT NULL,
  name         text    NOT NULL,
  attr_def_id  uuid,
  definition   jsonb,
  overrides    jsonb   NOT NULL DEFAULT '{}'::jsonb,
  retired      boolean NOT NULL DEFAULT false,
  tx_from      bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to        bigint,
  PRIMARY KEY (attribute_id, tx_from),
  CONSTRAINT attribute_definition_source CHECK ((attr_def_id IS NULL) = (definition IS NOT NULL))
);
CREATE UNIQUE INDEX attribute_current ON attribute_version (attribute_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX attribute_name_current ON attribute_version (asset_id, name) WHERE tx_to IS NULL;
CREATE INDEX attribute_history ON attribute_version (asset_id);
CREATE INDEX attribute_name_lookup ON attribute_version (name) WHERE tx_to IS NULL;

-- Bindings: valid time [from_ns, to_ns) per attribute, never overlapping for one
-- attribute nor for one series; versioned in transaction time like everything else.
CREATE TABLE binding_version (
  binding_id   uuid   NOT NULL,
  attribute_id uuid   NOT NULL,
  series_id    uuid   NOT NULL,
  from_ns      bigint NOT NULL,
  to_ns        bigint,
  tx_from      bigint NOT NULL REFERENCES model_tx (tx_id),
  tx_to        bigint,
  PRIMARY KEY (binding_id, tx_from),
  CONSTRAINT binding_range CHECK (to_ns IS NULL OR to_ns > from_ns)
);
CREATE INDEX binding_attribute_current ON binding_version (attribute_id) WHERE tx_to IS NULL;
CREATE INDEX binding_series_current ON binding_version (series_id) WHERE tx_to IS NULL;
CREATE INDEX binding_attribute_history ON binding_version (attribute_id, tx_from);

CREATE TABLE view_version (
  view_id uuid    NOT NULL,
  name    text    NOT NULL,
  retired boolean NOT NULL DEFAULT false,
  tx_from bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to   bigint,
  PRIMARY KEY (view_id, tx_from)
);
CREATE UNIQUE INDEX view_current ON view_version (view_id) WHERE tx_to IS NULL;
CREATE UNIQUE INDEX view_name_current ON view_version (name) WHERE tx_to IS NULL;

-- A view's hierarchy: each member is an asset placed under another member (or at the top).
CREATE TABLE view_member_version (
  view_id         uuid    NOT NULL,
  asset_id        uuid    NOT NULL,
  parent_asset_id uuid,
  ordinal         integer NOT NULL,
  tx_from         bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to           bigint,
  PRIMARY KEY (view_id, asset_id, tx_from)
);
CREATE INDEX view_member_current ON view_member_version (view_id) WHERE tx_to IS NULL;
CREATE INDEX view_member_history ON view_member_version (view_id, tx_from);

CREATE TABLE link_version (
  link_id    uuid    NOT NULL,
  from_asset uuid    NOT NULL,
  to_asset   uuid    NOT NULL,
  link_type  text    NOT NULL,
  retired    boolean NOT NULL DEFAULT false,
  tx_from    bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to      bigint,
  PRIMARY KEY (link_id, tx_from)
);
CREATE UNIQUE INDEX link_current ON link_version (link_id) WHERE tx_to IS NULL;
CREATE INDEX link_from_current ON link_version (from_asset) WHERE tx_to IS NULL;
CREATE INDEX link_to_current ON link_version (to_asset) WHERE tx_to IS NULL;
CREATE INDEX link_from_history ON link_version (from_asset, tx_from);
CREATE INDEX link_to_history ON link_version (to_asset, tx_from);
