-- GET /v1/series?name_contains=: source names containing a text anywhere, ignoring case
-- (ILIKE '%text%'). A trigram GIN index serves it on a catalogue of any size; pg_trgm ships
-- with PostgreSQL's contrib and is loaded into embedded PGlite (pglite-thread.ts). Where the
-- extension is missing or may not be created (a managed database without the right), the
-- filter still works, by scanning the series table.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      CREATE INDEX IF NOT EXISTS series_source_name_trgm ON series USING gin (source_name gin_trgm_ops);
    EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_file THEN
      RAISE NOTICE 'pg_trgm not available (%): name_contains scans the series table', SQLERRM;
    END;
  END IF;
END $$;
