-- Up Migration
-- The notification of a finished ingest job names its state too (`<id>:<state>`), so a request waiting
-- for a job that completed answers without reading the row again.
CREATE OR REPLACE FUNCTION notify_ingest_job_finished() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('ingest_job_finished', NEW.id::text || ':' || NEW.state);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- Down Migration
CREATE OR REPLACE FUNCTION notify_ingest_job_finished() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('ingest_job_finished', NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
