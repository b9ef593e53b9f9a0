-- Up Migration
-- One piece of equipment runs one unit operation at a time. The api and the ingest-worker refuse a
-- window that overlaps another unit operation's on the same equipment (an open-ended one runs until
-- now, so the rule cannot be a constraint on stored columns alone). Windows saved before that rule
-- may overlap: this view lists each overlapping pair once, and nothing is deleted or changed. The
-- README ("Overlapping unit operations") says how to resolve them.
CREATE VIEW unit_operation_overlaps AS
SELECT a.organization_id,
       a.equipment_id,
       a.id AS unit_operation_id,
       a.run_id,
       a.start_time,
       a.end_time,
       b.id AS other_unit_operation_id,
       b.run_id AS other_run_id,
       b.start_time AS other_start_time,
       b.end_time AS other_end_time
  FROM unit_operations a
  JOIN unit_operations b
    ON b.equipment_id = a.equipment_id
   AND b.organization_id = a.organization_id
   AND b.id > a.id
 WHERE a.start_time IS NOT NULL
   AND b.start_time IS NOT NULL
   AND a.start_time <= COALESCE(b.end_time, GREATEST(now(), b.start_time))
   AND b.start_time <= COALESCE(a.end_time, GREATEST(now(), a.start_time));

-- A unit operation created together with its first upload exists only if that upload succeeds: when
-- the job fails (the api could not queue it, the worker rejected the file, a sweeper gave up on it),
-- the unit operation goes with it, in the same transaction as the failure.
ALTER TABLE ingest_jobs ADD COLUMN created_unit_operation_id BIGINT;

CREATE FUNCTION remove_unit_operation_of_failed_upload() RETURNS trigger AS $$
BEGIN
  DELETE FROM unit_operations WHERE id = NEW.created_unit_operation_id AND organization_id = NEW.organization_id;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ingest_job_failed_removes_unit_operation AFTER UPDATE OF state ON ingest_jobs
  FOR EACH ROW WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM NEW.state AND NEW.created_unit_operation_id IS NOT NULL)
  EXECUTE FUNCTION remove_unit_operation_of_failed_upload();

DO $$
DECLARE
  overlaps BIGINT;
BEGIN
  SELECT count(*) INTO overlaps FROM unit_operation_overlaps;
  IF overlaps > 0 THEN
    RAISE WARNING '% pair(s) of unit operations overlap on the same equipment: SELECT * FROM unit_operation_overlaps lists them', overlaps;
  END IF;
END;
$$;

-- Down Migration
DROP TRIGGER IF EXISTS ingest_job_failed_removes_unit_operation ON ingest_jobs;
DROP FUNCTION IF EXISTS remove_unit_operation_of_failed_upload();
ALTER TABLE ingest_jobs DROP COLUMN IF EXISTS created_unit_operation_id;
DROP VIEW IF EXISTS unit_operation_overlaps;
