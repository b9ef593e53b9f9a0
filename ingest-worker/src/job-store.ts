/**
 * How the worker finishes jobs and holds them: an upload or deletion finishes (completed or failed) in
 * one transaction with its audit event (job-audit.ts); a job runs under a lease. The statements are the
 * ingest_jobs repository's (shared/src/server/ingest-jobs.ts).
 */
import { withTransaction, type Pool, type PoolClient } from '@bioprocess/shared/server/postgres';
import type { IngestProgress } from '@bioprocess/shared/timeseries';
import { completeJob, failIngestJob, lockJobState } from '@bioprocess/shared/server/ingest-jobs';
import { writeJobAuditEvent } from './job-audit.ts';

/**
 * Completes an upload or a deletion and writes its audit event, in one transaction; `alongside` runs
 * in it too (an upload closing its unit operation's window), only when this call completes the job.
 */
export async function markCompleted(
  pool: Pool, jobId: string, result: Record<string, unknown>, progress?: Partial<IngestProgress>, alongside?: (client: PoolClient) => Promise<void>,
): Promise<void> {
  await withTransaction(pool, async (client) => {
    if (!await completeJob(client, jobId, result, progress)) return;
    await writeJobAuditEvent(client, jobId);
    await alongside?.(client);
  });
}

/**
 * Fails the job (and removes a unit operation created for it: see shared/src/server/ingest-jobs.ts)
 * and, when this ends an upload or a deletion, writes its audit event in the same transaction. Failing
 * a job already failed only updates its message.
 */
export async function markFailed(pool: Pool, jobId: string, message: string, result?: Record<string, unknown>): Promise<void> {
  await withTransaction(pool, async (client) => {
    const state = await lockJobState(client, jobId);
    if (state === undefined || state === 'completed') return;
    await failIngestJob(client, jobId, message, result);
    if (state !== 'failed') await writeJobAuditEvent(client, jobId);
  });
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
