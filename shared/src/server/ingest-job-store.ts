/**
 * The writes to ingest job records that the api and the ingest-worker both make, in one place: failing
 * a job, completing bulk posts, recording the range deletion a job carries, and flagging a job whose
 * work ran more than once.
 * (The api creates and reads jobs in api/src/ingest-jobs/jobs.ts; the worker's progress and completion
 * are in ingest-worker/src/job-store.ts.)
 */
import type pg from 'pg';
import type { RangeOnInstruments } from '../ingest/requests.ts';

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

/** A bulk post whose points are stored: its job, its point count, and the range whose rollups it owes. */
export interface BulkCompletion {
  jobId: string;
  points: number;
  range: RangeOnInstruments;
}

/**
 * Completes bulk posts' jobs and records their rollups as owed (`rollup_backlog`), in one statement
 * however many: a post is never complete without either its rollups or the record that they are owed.
 * Bulk posts are not audited one by one. Every post gets its backlog row, also one that had completed
 * already (delivered again): the recomputation that follows deletes it.
 */
export async function completeBulkPosts(db: Db, completions: readonly BulkCompletion[]): Promise<void> {
  if (completions.length === 0) return;
  // Named: prepared once per connection, as feeds complete posts many times a second.
  await db.query({
    name: 'complete-bulk-posts',
    text: `WITH done AS (
       SELECT * FROM unnest($1::uuid[], $2::integer[], $3::integer[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[])
                 AS done (id, points, instruments, organization_id, instrument_ids, start_ms, end_ms)
     ), completed AS (
       UPDATE ingest_jobs j
          SET state = 'completed', result = jsonb_build_object('points_written', done.points, 'instruments', done.instruments),
              progress = j.progress || jsonb_build_object('points_written', done.points), error = NULL, updated_at = now(), finished_at = now()
         FROM done
        WHERE j.id = done.id AND j.state IN ('queued', 'running')
     ), owed AS (
       INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms)
       SELECT organization_id, id, instrument_ids::bigint[], start_ms, end_ms FROM done
        -- A job deleted with its organisation meanwhile owes nothing (and its organisation is gone).
        WHERE EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.id = done.id)
     )
     SELECT 1`,
    values: [
      completions.map((completion) => completion.jobId),
      completions.map((completion) => completion.points),
      completions.map((completion) => completion.range.instrumentIds.length),
      completions.map((completion) => completion.range.organizationId),
      completions.map((completion) => `{${completion.range.instrumentIds.join(',')}}`),
      completions.map((completion) => completion.range.startMs),
      completions.map((completion) => completion.range.endMs),
    ],
  });
}
