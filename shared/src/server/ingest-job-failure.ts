/**
 * Failing an ingest job, the one way the api and the ingest-worker both do it. A unit operation
 * created together with its first upload (`created_unit_operation_id` in the job's request) exists
 * only if that upload succeeds: it is removed in the same statement that fails the job, whoever fails
 * it (the api when the job cannot be queued, the worker when the file is rejected or retries run out).
 */
import type pg from 'pg';

/** `result` says more about the failure (e.g. `conflict`: the api answers a waiting request with 409). */
export async function failIngestJob(db: pg.Pool | pg.PoolClient, jobId: string, message: string, result?: Record<string, unknown>): Promise<void> {
  await db.query(
    `WITH failed AS (
       UPDATE ingest_jobs SET state = 'failed', error = $2, result = COALESCE($3::jsonb, result), updated_at = now(), finished_at = now()
        WHERE id = $1 AND state <> 'completed'
        RETURNING organization_id, request
     ), dropped AS (
       -- What the job carried (a bulk post's rows) is never needed again.
       DELETE FROM ingest_job_data WHERE job_id = $1 AND EXISTS (SELECT 1 FROM failed)
     )
     DELETE FROM unit_operations u USING failed
      WHERE failed.request ? 'created_unit_operation_id'
        AND u.id = (failed.request->>'created_unit_operation_id')::bigint AND u.organization_id = failed.organization_id`,
    [jobId, message, result === undefined ? null : JSON.stringify(result)],
  );
}
