-- Governed registries (units, quantity kinds, enum concepts and sets, link types,
-- annotation tags, episode roles), versioned in transaction time like the asset model:
-- a row is valid from tx_from until tx_to (NULL while current).
-- Unit factors and offsets are exact ratios in text ("5/9", "273.15"), never doubles,
-- so conversions round once (src/model/registries/exact-ratio.ts).
CREATE TABLE registry_entry_version (
  entry_id          uuid    NOT NULL,
  kind              text    NOT NULL,
  name              text    NOT NULL,
  symbol            text,
  kind_id           uuid,
  canonical_unit_id uuid,
  integrates_to     uuid,
  encoding          jsonb,
  members           jsonb,
  factor_exact      text,
  offset_exact      text,
  rationale         text,
  -- The override claim that let this entry past the dedupe gate, with what it overrode.
  override          jsonb,
  system            boolean NOT NULL DEFAULT false,
  valid_from_ns     bigint  NOT NULL,
  valid_to_ns       bigint,
  tx_from           bigint  NOT NULL REFERENCES model_tx (tx_id),
  tx_to             bigint,
  PRIMARY KEY (entry_id, tx_from),
  CONSTRAINT registry_kind CHECK (kind IN ('enum-concepts', 'enum-sets', 'quantity-kinds', 'units', 'link-types', 'annotation-tags', 'episode-roles'))
);
CREATE UNIQUE INDEX registry_entry_current ON registry_entry_version (entry_id) WHERE tx_to IS NULL;
-- A byte-identical name within a kind is never allowed, override or not.
CREATE UNIQUE INDEX registry_name_current ON registry_entry_version (kind, name) WHERE tx_to IS NULL;
CREATE INDEX registry_kind_current ON registry_entry_version (kind, name, entry_id) WHERE tx_to IS NULL;
CREATE INDEX registry_history ON registry_entry_version (entry_id, tx_from);
