/**
 * The writes to ingest job records that the api and the ingest-worker both make, in one place: failing
 * a job, recording the range deletion a job carries, and flagging a job whose work ran more than once.
 * (The api creates and reads jobs in api/src/ingest-jobs/jobs.ts; the worker's progress and completion
 * are in ingest-worker/src/job-store.ts.)
 */
import type pg from 'pg';

type Db = pg.Pool | pg.PoolClient;

/**
 * Fails the job. A unit operation created together with its first upload (`created_unit_operation_id`
 * in the job's request) exists only if that upload succeeds: it is removed in the same statement that
 * fails the job, whoever fails it (the api when the job cannot be queued, the worker when the file is
 * rejected or retries run out). `result` says more about the failure (e.g. `conflict`: the api answers
 * a waiting request with 409).
 */
export async function failIngestJob(db: Db, jobId: string, message: string, result?: Record<string, unknown>): Promise<void> {
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

/** A range deletion a job carries, recorded with the job's version (once per job). */
export interface DeletionRecord {
  organizationId: number;
  jobId: string;
  versionSeq: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/**
 * Records the deletion so that writes accepted earlier but processed later still honour it
 * (`time_series_deletions`); recording it again is a no-op.
 */
export async function recordDeletion(db: Db, deletion: DeletionRecord): Promise<void> {
  await db.query(
    `INSERT INTO time_series_deletions (organization_id, job_id, version_seq, instrument_ids, start_ms, end_ms)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
    [deletion.organizationId, deletion.jobId, deletion.versionSeq, deletion.instrumentIds, deletion.startMs, deletion.endMs],
  );
}

/** Flags jobs some part of which ran more than once: their rows may be stored twice, so their rollups are aggregated. */
export async function markRetried(db: Db, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await db.query('UPDATE ingest_jobs SET retried = true WHERE id = ANY($1::uuid[])', [jobIds]);
}
