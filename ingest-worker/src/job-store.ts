/**
 * Updates of the ingest job rows (PostgreSQL `ingest_jobs`) made by the worker. An upload or deletion
 * finishes (completed or failed) in one transaction with its audit event (job-audit.ts).
 */
import { withTransaction, type Pool, type PoolClient } from '@bioprocess/shared/server/postgres';
import type { IngestProgress } from '@bioprocess/shared/timeseries';
import { failIngestJob } from '@bioprocess/shared/server/ingest-job-store';
import { writeJobAuditEvent } from './job-audit.ts';

/** Completes an unfinished job; answers whether it did (false: it had already finished). */
async function completeJob(db: Pool | PoolClient, jobId: string, result: Record<string, unknown>, progress?: Partial<IngestProgress>): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE ingest_jobs SET state = 'completed', result = $2, progress = progress || $3::jsonb, error = NULL,
            updated_at = now(), finished_at = now()
      WHERE id = $1 AND state IN ('queued', 'running') RETURNING id`,
    [jobId, JSON.stringify(result), JSON.stringify(progress ?? {})],
  );
  return rows.length > 0;
}

/**
 * Deletes the stored data (`ingest_job_data`) of the given jobs that finished; answers the rows removed.
 * A finished job never needs its data again; one not finished keeps it.
 */
export async function deleteFinishedJobData(pool: Pool, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const { rowCount } = await pool.query(
    `DELETE FROM ingest_job_data d USING ingest_jobs j
      WHERE d.job_id = ANY($1::uuid[]) AND j.id = d.job_id AND j.state IN ('completed', 'failed')`,
    [jobIds],
  );
  return rowCount ?? 0;
}

/** Completes an upload or a deletion and writes its audit event, in one transaction. */
export async function markCompleted(pool: Pool, jobId: string, result: Record<string, unknown>, progress?: Partial<IngestProgress>): Promise<void> {
  await withTransaction(pool, async (client) => {
    if (await completeJob(client, jobId, result, progress)) await writeJobAuditEvent(client, jobId);
  });
}

/**
 * Fails the job (and removes a unit operation created for it: see shared/src/server/ingest-job-store.ts)
 * and, when this ends an upload or a deletion, writes its audit event in the same transaction. Failing
 * a job already failed only updates its message.
 */
export async function markFailed(pool: Pool, jobId: string, message: string, result?: Record<string, unknown>): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ state: string }>('SELECT state FROM ingest_jobs WHERE id = $1 FOR UPDATE', [jobId]);
    const state = rows[0]?.state;
    if (state === undefined || state === 'completed') return;
    await failIngestJob(client, jobId, message, result);
    if (state !== 'failed') await writeJobAuditEvent(client, jobId);
  });
}

/**
 * Notes that the jobs (one, or a batch of bulk posts) failed for a reason that may pass; answers how
 * long the longest-failing of them has been failing so (since its first such failure after its last
 * progress: a committed CSV batch or a written chunk starts the count again), in seconds.
 */
export async function noteTransientFailure(pool: Pool, jobIds: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ seconds: number | null }>(
    `WITH noted AS (
       UPDATE ingest_jobs SET retrying_since = COALESCE(retrying_since, now()), updated_at = now() WHERE id = ANY($1::uuid[])
       RETURNING retrying_since
     )
     SELECT EXTRACT(EPOCH FROM now() - min(retrying_since))::float8 AS seconds FROM noted`,
    [jobIds],
  );
  return rows[0]?.seconds ?? 0;
}

export async function updateProgress(pool: Pool, jobId: string, progress: Partial<IngestProgress>, checkpoint?: unknown): Promise<void> {
  await pool.query(
    `UPDATE ingest_jobs SET progress = progress || $2::jsonb, checkpoint = COALESCE($3::jsonb, checkpoint), updated_at = now(),
            retrying_since = CASE WHEN $3::jsonb IS NULL THEN retrying_since END
      WHERE id = $1`,
    [jobId, JSON.stringify(progress), checkpoint === undefined ? null : JSON.stringify(checkpoint)],
  );
}

/**
 * Records a finished bulk chunk; answers whether every chunk of the job is now done. Adding the same
 * chunk twice (a retried job) is a no-op.
 */
export async function recordChunkDone(pool: Pool, jobId: string, chunkIndex: number, points: number): Promise<{ allDone: boolean }> {
  return (await recordChunksDone(pool, [{ jobId, chunkIndex, points }]))[0] ?? { allDone: false };
}

/** recordChunkDone for chunks of several jobs (one chunk per job) in one statement; answers in the order given. */
export async function recordChunksDone(
  pool: Pool, chunks: ReadonlyArray<{ jobId: string; chunkIndex: number; points: number }>,
): Promise<Array<{ allDone: boolean }>> {
  if (chunks.length === 0) return [];
  const { rows } = await pool.query<{ id: string; done: number; chunk_count: number }>(
    `UPDATE ingest_jobs j
        SET chunks_done = CASE WHEN c.chunk = ANY(j.chunks_done) THEN j.chunks_done ELSE array_append(j.chunks_done, c.chunk) END,
            progress = CASE WHEN c.chunk = ANY(j.chunks_done) THEN j.progress
                       ELSE jsonb_set(j.progress, '{points_written}', to_jsonb(COALESCE((j.progress->>'points_written')::bigint, 0) + c.points)) END,
            updated_at = now(), retrying_since = NULL
       FROM unnest($1::uuid[], $2::integer[], $3::bigint[]) AS c (id, chunk, points)
      WHERE j.id = c.id
      RETURNING j.id, cardinality(j.chunks_done) AS done, j.chunk_count`,
    [chunks.map((chunk) => chunk.jobId), chunks.map((chunk) => chunk.chunkIndex), chunks.map((chunk) => chunk.points)],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return chunks.map(({ jobId }) => {
    const row = byId.get(jobId);
    return { allDone: Boolean(row) && Number(row!.done) >= Number(row!.chunk_count) };
  });
}

export interface JobRecord {
  state: string;
  organization_id: number;
  version_seq: number;
  /** Bulk chunks already written. */
  chunks_done: number[];
  request: Record<string, unknown>;
  checkpoint: Record<string, unknown> | null;
  progress: IngestProgress;
}

/** Marks a queued job running and answers its record (null when the row is gone), in one round trip. */
export async function startJob(pool: Pool, jobId: string): Promise<JobRecord | null> {
  return (await startJobs(pool, [jobId])).get(jobId) ?? null;
}

/** startJob for several jobs in one round trip: the records of the rows that exist, by job id. */
export async function startJobs(pool: Pool, jobIds: readonly string[]): Promise<Map<string, JobRecord>> {
  const { rows } = await pool.query<JobRecord & { id: string }>(
    `WITH started AS (
       UPDATE ingest_jobs SET state = 'running', updated_at = now() WHERE id = ANY($1::uuid[]) AND state = 'queued' RETURNING id
     )
     SELECT id, CASE WHEN id IN (SELECT id FROM started) THEN 'running' ELSE state END AS state, chunks_done, request, checkpoint, progress,
            organization_id, version_seq
       FROM ingest_jobs WHERE id = ANY($1::uuid[])`,
    [jobIds],
  );
  return new Map(rows.map(({ id, ...record }) => [id, record]));
}

/**
 * Runs `work` while holding the job's lease: a PostgreSQL advisory lock on a connection of its own, so
 * at most one worker runs a job at a time even when its delivery was duplicated (the reconciler queued
 * it again after Redis lost the running entry, or BullMQ judged it stalled). A second holder waits,
 * then finds the job finished. The lease ends with the connection: a worker killed with -9 frees it.
 */
export async function withJobLease<T>(pool: Pool, jobId: string, work: () => Promise<T>): Promise<T> {
  const client: PoolClient = await pool.connect();
  let broken = false;
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended('ingest-job:' || $1, 0))", [jobId]);
    return await work();
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    if (!broken) {
      await client.query("SELECT pg_advisory_unlock(hashtextextended('ingest-job:' || $1, 0))", [jobId]).catch(() => { broken = true; });
    }
    // A connection whose unlock may not have run is closed, which releases the lock for certain.
    client.release(broken);
  }
}
