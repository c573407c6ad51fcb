-- Series records: the model's half of a stored series (points live in LMDB, keyed by
-- the same uuid). A series is in staging until a binding puts it under an asset; the
-- bindings themselves belong to the asset model (0030-0049).
CREATE TABLE series (
  series_id      uuid    PRIMARY KEY,
  -- Where the points come from, e.g. '<collector_id>/<stream>'; unique so that ingest can
  -- find-or-create the series of a stream without a race.
  -- COLLATE "C": byte order, so the listing's keyset order and prefix filters use this index.
  source_name    text COLLATE "C" NOT NULL,
  value_type     text    NOT NULL,
  enum_set_id    uuid,
  writable_class text    NOT NULL,
  created_tx     bigint  NOT NULL REFERENCES model_tx (tx_id),
  created_ns     bigint  NOT NULL,
  updated_tx     bigint  NOT NULL REFERENCES model_tx (tx_id),
  CONSTRAINT series_source_name_unique UNIQUE (source_name),
  CONSTRAINT series_value_type CHECK (value_type IN ('float64', 'int64', 'boolean', 'string', 'enum')),
  CONSTRAINT series_enum_set CHECK ((value_type = 'enum') = (enum_set_id IS NOT NULL))
);
