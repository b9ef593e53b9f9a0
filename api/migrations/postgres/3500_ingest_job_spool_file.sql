-- Up Migration
-- The ingest-worker's sweeper looks up which CSV jobs name the files it finds in the spool folder
-- (a file whose job finished or never committed is removed).
CREATE INDEX ingest_jobs_spool_file ON ingest_jobs ((request->>'file_path')) WHERE kind = 'csv';

-- Down Migration
DROP INDEX IF EXISTS ingest_jobs_spool_file;
