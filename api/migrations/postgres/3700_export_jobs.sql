-- Up Migration
-- Exports too large to stream in one answer (time series above EXPORT_STREAM_MAX_POINTS, the
-- whole-organisation archive): the row is the record of the request; the export-worker writes the file
-- into EXPORT_DIR under a temporary name and only renames it to file_path when it is whole, in the
-- statement that completes the row, so no half file is ever offered. Files are removed when the row
-- expires (expires_at, EXPORT_FILE_TTL_HOURS after completion) or fails.
CREATE TABLE export_jobs (
  id UUID PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('time_series', 'organization_archive')),
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'completed', 'failed', 'expired')),
  created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  api_key_id BIGINT REFERENCES api_keys(id) ON DELETE SET NULL,
  -- Who asked, as the audit trail names them (kept if the user is deleted).
  requested_by TEXT NOT NULL,
  -- The validated request (the time-series query, with the moment it was accepted).
  request JSONB NOT NULL DEFAULT '{}',
  -- points_total / points_done (time series), files_total / files_done (archive), bytes_written.
  progress JSONB NOT NULL DEFAULT '{}',
  -- Deliveries started (a worker killed mid-way counts): the job fails once they exceed the limit.
  attempts INTEGER NOT NULL DEFAULT 0,
  file_name TEXT,
  file_path TEXT,
  content_type TEXT,
  bytes BIGINT,
  rows BIGINT,
  error TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ
);
CREATE INDEX export_jobs_organization ON export_jobs (organization_id, created_at DESC);
CREATE INDEX export_jobs_unfinished ON export_jobs (updated_at) WHERE state IN ('queued', 'running');
CREATE INDEX export_jobs_expiry ON export_jobs (expires_at) WHERE state = 'completed';

-- Progress streams (and their end) hear a finished export at once, on the channel the ingest jobs use
-- (job ids are UUIDs, so waiters of both kinds share it without confusion).
CREATE TRIGGER export_job_finished AFTER UPDATE OF state ON export_jobs
  FOR EACH ROW WHEN (NEW.state IN ('completed', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION notify_ingest_job_finished();

-- Down Migration
DROP TABLE IF EXISTS export_jobs;
