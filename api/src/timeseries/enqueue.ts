/**
 * Hands accepted ingest jobs to BullMQ, best effort (the jobs of a batch of bulk posts as one delivery). The job's row (and its data) are already
 * committed to PostgreSQL, which is the record: when Redis is down or slow the request still answers,
 * and the ingest-worker's reconciler queues the job from its row a few seconds later. Job ids derive
 * from the ingest job, so the two never deliver it twice.
 */
import { ingestDeliveries, type IngestJobRecord } from '@bioprocess/shared/queues';
import { addIngestDeliveries } from '@bioprocess/shared/ingest/queue-deliveries';
import type { AppDeps } from '../platform/deps.ts';

/** How long a request waits for Redis to take its job before answering anyway. */
export const ENQUEUE_WAIT_MS = 2_000;

export async function enqueueIngest(deps: Pick<AppDeps, 'queues' | 'logger'>, jobs: IngestJobRecord | readonly IngestJobRecord[]): Promise<void> {
  const records = Array.isArray(jobs) ? jobs : [jobs as IngestJobRecord];
  if (records.length === 0) return;
  // The queue connection keeps retrying while Redis is away; the adds may still land later (a no-op
  // if the reconciler got there first).
  const queued = addIngestDeliveries(deps.queues, records.flatMap((record) => ingestDeliveries(record))).then(() => true, (error: unknown) => {
    deps.logger.warn({ err: error, ingestJobIds: records.map((record) => record.id) }, 'ingest job not queued; the reconciler will queue it');
    return true;
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ENQUEUE_WAIT_MS); });
  const inTime = await Promise.race([queued, waited]);
  clearTimeout(timer);
  if (!inTime) deps.logger.warn({ ingestJobIds: records.map((record) => record.id) }, 'the ingest queue is slow to answer; the job is recorded and will be delivered');
}
