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

DO $$
DECLARE
  pair_count BIGINT;
BEGIN
  SELECT count(*) INTO pair_count FROM unit_operation_overlaps;
  IF pair_count > 0 THEN
    RAISE WARNING '% pair(s) of unit operations overlap on the same equipment: SELECT * FROM unit_operation_overlaps lists them', pair_count;
  END IF;
END;
$$;

-- Down Migration
DROP VIEW IF EXISTS unit_operation_overlaps;
