-- continuity_class and writer_class become closed vocabularies (src/model/vocabularies.ts):
-- continuous, stepped, event; collector, calculation, manual, import. Stored definitions
-- (template definitions, attributes' own definitions) and overrides with other words are
-- mapped to the nearest member in place, in every version, so that as-of reads answer in
-- the vocabulary too; unrecognised words become the defaults (continuous, collector).
CREATE FUNCTION pg_temp.continuity_word(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN v IN ('continuous', 'stepped', 'event') THEN v
    WHEN lower(v) IN ('step', 'steps', 'stepwise', 'discrete', 'digital', 'state', 'stepped') THEN 'stepped'
    WHEN lower(v) IN ('events', 'event', 'sample', 'samples', 'discontinuous') THEN 'event'
    ELSE 'continuous' END
$$;
CREATE FUNCTION pg_temp.writer_word(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN v IN ('collector', 'calculation', 'manual', 'import') THEN v
    WHEN lower(v) IN ('calc', 'calculated', 'calculation', 'computed', 'derived', 'analysis') THEN 'calculation'
    WHEN lower(v) LIKE 'manual%' OR lower(v) IN ('entry', 'lab', 'operator') THEN 'manual'
    WHEN lower(v) IN ('import', 'imported', 'backfill', 'bulk', 'file', 'migration') THEN 'import'
    ELSE 'collector' END
$$;
CREATE FUNCTION pg_temp.vocabulary_fixed(d jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN d ? 'writer_class' AND jsonb_typeof(d -> 'writer_class') = 'string'
              THEN jsonb_set(c, '{writer_class}', to_jsonb(pg_temp.writer_word(d ->> 'writer_class'))) ELSE c END
  FROM (SELECT CASE WHEN d ? 'continuity_class' AND jsonb_typeof(d -> 'continuity_class') = 'string'
                    THEN jsonb_set(d, '{continuity_class}', to_jsonb(pg_temp.continuity_word(d ->> 'continuity_class'))) ELSE d END AS c) x
$$;
UPDATE attr_def_version SET definition = pg_temp.vocabulary_fixed(definition)
  WHERE definition IS DISTINCT FROM pg_temp.vocabulary_fixed(definition);
UPDATE attribute_version SET definition = pg_temp.vocabulary_fixed(definition)
  WHERE definition IS NOT NULL AND definition IS DISTINCT FROM pg_temp.vocabulary_fixed(definition);
UPDATE attribute_version SET overrides = pg_temp.vocabulary_fixed(overrides)
  WHERE overrides IS DISTINCT FROM pg_temp.vocabulary_fixed(overrides);
DROP FUNCTION pg_temp.vocabulary_fixed(jsonb);
DROP FUNCTION pg_temp.writer_word(text);
DROP FUNCTION pg_temp.continuity_word(text);
