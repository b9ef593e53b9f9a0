/**
 * Ingest job records (PostgreSQL `ingest_jobs`): created when the api accepts a write, deletion or
 * upload, with the version that orders it against every other time-series request; read back for the
 * status endpoints and for `?wait=true`.
 */
import type { Pool, PoolClient } from '@bioprocess/shared/server/postgres';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import {
  failIngestJob, findIngestJob as findJobRow, insertIngestJobs, recordDeletion, type IngestJobRow, type NewIngestJob,
} from '@bioprocess/shared/server/ingest-jobs';
import { EMPTY_PROGRESS, type IngestJobState, type IngestJobStatus } from '@bioprocess/shared/timeseries';
import type { RequestPrincipal } from '../auth/principal.ts';
import { notFound } from '../platform/http-error.ts';
import type { FinishWait, JobFinishEvents } from './finish-events.ts';

export { insertIngestJobs, type IngestJobRow, type NewIngestJob };

/**
 * Creates the job (or returns the one an earlier request with the same idempotency key created:
 * `created` is then false and nothing new must be enqueued).
 */
export async function createIngestJob(pool: Pool, principal: RequestPrincipal, job: NewIngestJob): Promise<{ job: IngestJobRow; created: boolean }> {
  // Without a deletion to record, the job is one statement: no transaction (three fewer round trips
  // for every bulk post).
  if (!job.deletion) return insertIngestJob(pool, principal, job);
  return withTransaction(pool, async (client) => {
    const result = await insertIngestJob(client, principal, job);
    if (result.created) {
      await recordDeletion(client, { ...job.deletion!, organizationId: result.job.organization_id, jobId: result.job.id, versionSeq: result.job.version_seq });
    }
    return result;
  });
}

/** Creates the job inside the caller's transaction (with the rows it goes with). */
export async function insertIngestJob(db: Pool | PoolClient, principal: RequestPrincipal, job: NewIngestJob): Promise<{ job: IngestJobRow; created: boolean }> {
  return (await insertIngestJobs(db, [{ principal, job }]))[0]!;
}

/** Fails the job (and removes a unit operation created for it): see shared/src/server/ingest-jobs.ts. */
export async function markJobFailed(pool: Pool, jobId: string, message: string): Promise<void> {
  await failIngestJob(pool, jobId, message);
}

/** The job of the caller's organisation, or 404 (another organisation's job does not exist for them). */
export async function findIngestJob(pool: Pool, organizationId: number, jobId: string): Promise<IngestJobRow> {
  const job = await findJobRow(pool, organizationId, jobId);
  if (!job) throw notFound('Ingest job not found');
  return job;
}

export function toJobStatus(job: IngestJobRow): IngestJobStatus {
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    progress: { ...EMPTY_PROGRESS, ...job.progress },
    result: job.result,
    error: job.error,
    created_at: job.created_at.toISOString(),
    updated_at: job.updated_at.toISOString(),
  };
}

/** How long `?wait=true` waits before answering 202 anyway (the job keeps running). */
export const WAIT_TIMEOUT_MS = 5 * 60_000;

export const isFinished = (state: IngestJobState) => state === 'completed' || state === 'failed';

/** How a wait for a job may begin. */
export interface WaitOptions {
  signal?: AbortSignal;
  /**
   * A wait started before the job was queued (so no finish can have been missed): the first read of
   * the row is skipped, and a notification that the job completed is taken at its word, answering
   * `known` with its new state. Feeds waiting on every post then cost no read at all.
   */
  registered?: { wait: FinishWait; known: IngestJobRow };
}

/**
 * Waits until the job finished (completed or failed) or the timeout passed; returns the last row read.
 * The job row is the one place that knows when data is queryable: it is read again whenever the job's
 * finish is announced without its state (finish-events.ts), and every so often in case the
 * announcement was lost.
 */
export async function waitForJob(
  pool: Pool, events: JobFinishEvents, organizationId: number, jobId: string, timeoutMs: number, options: WaitOptions = {},
): Promise<IngestJobRow> {
  const { signal, registered } = options;
  const deadline = Date.now() + timeoutMs;
  let first = registered?.wait;
  for (;;) {
    const wait = first ?? events.wait(jobId, deadline - Date.now());
    const onAbort = () => wait.end();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (!first) {
        const job = await findIngestJob(pool, organizationId, jobId);
        if (isFinished(job.state) || Date.now() >= deadline || signal?.aborted) return job;
      }
      first = undefined;
      const notified = await wait.woken;
      if (notified === 'completed' && registered) return { ...registered.known, state: 'completed' };
      if (signal?.aborted && registered) return registered.known;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      wait.end();
    }
  }
}
