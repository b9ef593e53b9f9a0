/**
 * Hands an accepted ingest job to BullMQ, best effort. The job's row (and its data) are already
 * committed to PostgreSQL, which is the record: when Redis is down or slow the request still answers,
 * and the ingest-worker's reconciler queues the job from its row a few seconds later. Job ids derive
 * from the ingest job, so the two never deliver it twice.
 */
import {
  bulkChunkDataKey, BULK_DATA_COPY_BUDGET_BYTES, BULK_DATA_COPY_TTL_MS, ingestDeliveries, ingestQueueOf, INGEST_JOB_OPTIONS, type IngestJobRecord,
} from '@bioprocess/shared/queues';
import type { AppDeps } from '../platform/deps.ts';

/** How long a request waits for Redis to take its job before answering anyway. */
export const ENQUEUE_WAIT_MS = 2_000;

/** A stored part of the job (`ingest_job_data`), copied to Redis for the worker to read from there. */
export interface DataCopy {
  part: number;
  bytes: Uint8Array;
}

/** Bytes of copies this process wrote that may still be in Redis (each counted until its expiry). */
let copiedBytes = 0;

/** The copies to write now: none when they would take the process past its budget. */
function withinCopyBudget(data: readonly DataCopy[]): readonly DataCopy[] {
  const bytes = data.reduce((sum, { bytes: part }) => sum + part.length, 0);
  if (bytes === 0 || copiedBytes + bytes > BULK_DATA_COPY_BUDGET_BYTES) return [];
  copiedBytes += bytes;
  setTimeout(() => { copiedBytes -= bytes; }, BULK_DATA_COPY_TTL_MS).unref();
  return data;
}

export async function enqueueIngest(deps: Pick<AppDeps, 'queues' | 'logger' | 'env' | 'redis'>, job: IngestJobRecord, data: readonly DataCopy[] = []): Promise<void> {
  const deliveries = ingestDeliveries(job);
  // The copies go first, so a worker that takes a delivery finds its data; one that does not (the copy
  // failed: the fail-fast connection refuses while Redis is away) reads PostgreSQL's.
  const copied = Promise.all(withinCopyBudget(data).map(({ part, bytes }) => deps.redis.set(
    bulkChunkDataKey(deps.env.QUEUE_PREFIX, job.id, part), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), 'PX', BULK_DATA_COPY_TTL_MS,
  ))).catch((error: unknown) => deps.logger.debug({ err: error, ingestJobId: job.id }, 'bulk data not copied to Redis; the worker reads PostgreSQL'));
  const adds: Array<Promise<unknown>> = [];
  for (const queue of [deps.queues.ingest, deps.queues.ingestBulk]) {
    const own = deliveries.filter((delivery) => ingestQueueOf(delivery.name) === queue.name);
    if (own.length > 0) adds.push(copied.then(() => queue.addBulk(own.map((delivery) => ({ name: delivery.name, data: delivery.data, opts: { ...INGEST_JOB_OPTIONS, jobId: delivery.jobId } })))));
  }
  // The queue connection keeps retrying while Redis is away; the adds may still land later (a no-op
  // if the reconciler got there first).
  const queued = Promise.all(adds).then(() => true, (error: unknown) => {
    deps.logger.warn({ err: error, ingestJobId: job.id }, 'ingest job not queued; the reconciler will queue it');
    return true;
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ENQUEUE_WAIT_MS); });
  const inTime = await Promise.race([queued, waited]);
  clearTimeout(timer);
  if (!inTime) deps.logger.warn({ ingestJobId: job.id }, 'the ingest queue is slow to answer; the job is recorded and will be delivered');
}
