-- Up Migration
-- Rollups are always recomputed from the deduplicated points (ingest-worker/src/rollups/), so whether a
-- job ran more than once no longer matters to anything.
ALTER TABLE ingest_jobs DROP COLUMN retried;

-- Down Migration
ALTER TABLE ingest_jobs ADD COLUMN retried boolean NOT NULL DEFAULT false;
