-- Up Migration
-- Requests waiting for an ingest job (`?wait=true`) hear the moment it finishes instead of polling
-- its row: the channel name is JOB_FINISHED_CHANNEL in api/src/ingest-jobs/finish-events.ts.
CREATE FUNCTION notify_ingest_job_finished() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('ingest_job_finished', NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ingest_job_finished AFTER UPDATE OF state ON ingest_jobs
  FOR EACH ROW WHEN (NEW.state IN ('completed', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION notify_ingest_job_finished();

-- Down Migration
DROP TRIGGER IF EXISTS ingest_job_finished ON ingest_jobs;
DROP FUNCTION IF EXISTS notify_ingest_job_finished();
