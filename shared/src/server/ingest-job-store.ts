/**
 * The writes to ingest job records that the api and the ingest-worker both make, in one place: failing
 * a job, completing bulk posts, recording the range deletion a job carries, and flagging a job whose
 * work ran more than once.
 * (The api creates and reads jobs in api/src/ingest-jobs/jobs.ts; the worker's progress and completion
 * are in ingest-worker/src/job-store.ts.)
 */
import type pg from 'pg';
import type { RangeOnInstruments } from './points-store.ts';

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

/** A bulk post whose points are stored: its job, its point count, and the range whose rollups it owes. */
export interface BulkCompletion {
  jobId: string;
  points: number;
  range: RangeOnInstruments;
}

export interface BulkCompletionOptions {
  /**
   * Completes nothing, and answers false, when a range deletion of the posts' organisations was
   * accepted after this version: its tombstones may predate the posts' rows (the api's own writes;
   * the worker applies such deletions itself before completing).
   */
  unlessDeletionAfter?: number;
  /** Deletes the posts' stored data (`ingest_job_data`) in the same statement. */
  dropData?: boolean;
  /** Their rollups were recorded as owed with their jobs (the api's small posts): none are recorded again. */
  owedSinceRecorded?: boolean;
}

/**
 * Completes bulk posts' jobs and records their rollups as owed (`rollup_backlog`), in one statement
 * however many (unless they were recorded with the jobs): a post is never complete without either its
 * rollups or the record that they are owed.
 * Bulk posts are not audited one by one. Every post gets its backlog row, also one that had completed
 * already (delivered again): the recomputation that follows deletes it.
 */
export async function completeBulkPosts(db: Db, completions: readonly BulkCompletion[], options: BulkCompletionOptions = {}): Promise<boolean> {
  if (completions.length === 0) return true;
  const organizations = [...new Set(completions.map((completion) => completion.range.organizationId))];
  // Named: prepared once per connection, as feeds complete posts many times a second.
  const { rows } = await db.query<{ later_deletion: boolean }>({
    name: 'complete-bulk-posts',
    text: `WITH later AS (
       SELECT $9::bigint IS NOT NULL
              AND EXISTS (SELECT 1 FROM time_series_deletions WHERE organization_id = ANY($8::bigint[]) AND version_seq > $9) AS found
     ), done AS (
       SELECT done.* FROM unnest($1::uuid[], $2::integer[], $3::integer[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[])
                 AS done (id, points, instruments, organization_id, instrument_ids, start_ms, end_ms), later
        WHERE NOT later.found
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
        WHERE NOT $11::boolean AND EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.id = done.id)
     ), dropped AS (
       DELETE FROM ingest_job_data d USING done WHERE $10::boolean AND d.job_id = done.id
     )
     SELECT found AS later_deletion FROM later`,
    values: [
      completions.map((completion) => completion.jobId),
      completions.map((completion) => completion.points),
      completions.map((completion) => completion.range.instrumentIds.length),
      completions.map((completion) => completion.range.organizationId),
      completions.map((completion) => `{${completion.range.instrumentIds.join(',')}}`),
      completions.map((completion) => completion.range.startMs),
      completions.map((completion) => completion.range.endMs),
      organizations,
      options.unlessDeletionAfter ?? null,
      options.dropData === true,
      options.owedSinceRecorded === true,
    ],
  });
  return rows[0]?.later_deletion === false;
}
