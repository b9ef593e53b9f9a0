/** Hands ingest payloads to BullMQ; job ids derive from the ingest job so a re-enqueue is a no-op. */
import type { JobsOptions } from 'bullmq';
import { ingestQueueOf } from '@bioprocess/shared/queues';
import type { AppDeps } from '../platform/deps.ts';
import { markJobFailed } from '../ingest-jobs/jobs.ts';
import { HttpError } from '../platform/http-error.ts';

/**
 * Transient failures (a service down) are retried with the worker's capped back-off for about a
 * day; permanent ones fail at once (the worker throws UnrecoverableError). Completed jobs leave
 * Redis; failed ones stay for inspection, bounded.
 */
export const INGEST_JOB_OPTIONS: JobsOptions = {
  attempts: 3_000,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: true,
  removeOnFail: 1_000,
};

/**
 * Queues the jobs; `data` values (raw bytes the jobs refer to by key) are stored first, so a job never
 * runs before its data is there. They expire after `ttlSeconds`.
 */
export async function enqueueIngest(
  deps: Pick<AppDeps, 'queues' | 'pg' | 'logger' | 'redis'>,
  ingestJobId: string,
  jobs: Array<{ name: string; data: object; jobId: string }>,
  data?: { values: Array<{ key: string; value: Uint8Array }>; ttlSeconds: number },
): Promise<void> {
  try {
    if (data && data.values.length > 0) {
      const pipeline = deps.redis.pipeline();
      for (const { key, value } of data.values) pipeline.set(key, Buffer.from(value.buffer, value.byteOffset, value.length), 'EX', data.ttlSeconds);
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    }
    for (const queue of [deps.queues.ingest, deps.queues.ingestBulk]) {
      const own = jobs.filter((job) => ingestQueueOf(job.name) === queue.name);
      if (own.length > 0) await queue.addBulk(own.map((job) => ({ name: job.name, data: job.data, opts: { ...INGEST_JOB_OPTIONS, jobId: job.jobId } })));
    }
  } catch (error) {
    deps.logger.error({ err: error, ingestJobId }, 'ingest job could not be queued');
    await markJobFailed(deps.pg, ingestJobId, 'The job could not be queued; please retry.').catch(() => undefined);
    throw new HttpError(503, 'The ingest queue is unavailable; please retry.');
  }
}
