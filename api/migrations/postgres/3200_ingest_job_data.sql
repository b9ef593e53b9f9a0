-- Up Migration
-- What an accepted bulk post carries (its ClickHouse rows per chunk, and its per-minute figures) is
-- stored with the job row in one statement, so an answered post survives a Redis that comes back
-- empty: the queue only delivers, and a lost delivery is made again from these rows. Removed when the
-- job finishes.
CREATE TABLE ingest_job_data (
  job_id UUID NOT NULL REFERENCES ingest_jobs(id) ON DELETE CASCADE,
  -- The chunk index; BULK_MINUTE_FIGURES_PART (-1) holds the post's per-minute figures.
  part INTEGER NOT NULL,
  bytes BYTEA NOT NULL,
  PRIMARY KEY (job_id, part)
);
-- RowBinary doubles barely compress: compressing them would cost the api CPU for nothing.
ALTER TABLE ingest_job_data ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- When the job first failed for a reason that may pass (a service down); it fails for good once that
-- lasted longer than the worker's INGEST_RETRY_MINUTES.
ALTER TABLE ingest_jobs ADD COLUMN retrying_since TIMESTAMPTZ;
-- The reconciler looks for unfinished jobs every few seconds.
CREATE INDEX ingest_jobs_unfinished ON ingest_jobs (created_at) WHERE state IN ('queued', 'running');

-- Down Migration
DROP INDEX IF EXISTS ingest_jobs_unfinished;
ALTER TABLE ingest_jobs DROP COLUMN IF EXISTS retrying_since;
DROP TABLE IF EXISTS ingest_job_data;
