-- Writable classes become one closed vocabulary, shared with attributes' writer_class
-- (src/model/vocabularies.ts): collector, calculation, manual, import. Earlier free words
-- are mapped to the nearest class; anything unrecognised becomes 'collector', the default.
-- The engine's LMDB meta keeps its own copy of the word (nothing reads it for decisions)
-- until the next PUT /v1/series/{uuid}/writable-class rewrites both.
UPDATE series SET writable_class = CASE
    WHEN lower(writable_class) IN ('calc', 'calculated', 'calculation', 'computed', 'derived', 'analysis') THEN 'calculation'
    WHEN lower(writable_class) LIKE 'manual%' OR lower(writable_class) IN ('entry', 'lab', 'operator') THEN 'manual'
    WHEN lower(writable_class) IN ('import', 'imported', 'backfill', 'bulk', 'file', 'migration') THEN 'import'
    ELSE 'collector' END
  WHERE writable_class NOT IN ('collector', 'calculation', 'manual', 'import');
ALTER TABLE series ADD CONSTRAINT series_writable_class
  CHECK (writable_class IN ('collector', 'calculation', 'manual', 'import'));
