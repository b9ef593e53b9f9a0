/**
 * The reconciler: PostgreSQL is the record of every accepted ingest job, Redis only delivers. At
 * start-up and every INGEST_RECONCILE_MS it reads the unfinished jobs (`queued` or `running`) and
 * queues again every delivery whose BullMQ entry is gone (Redis restarted empty, flushed, or never
 * reached when the api answered). A job whose entry ended failed while its row did not (its worker
 * could not reach PostgreSQL to say so) is marked failed with the entry's reason.
 *
 * Safe with several ingest-workers and alongside the api: delivery ids derive from the job, so adding
 * one that is already queued is a no-op, and a job delivered twice leaves the same data (versions drawn
 * at acceptance; chunks already recorded are skipped).
 */
import { runPeriodically, type PeriodicPass } from '@bioprocess/shared/server/periodic-pass';
import type { Queue } from 'bullmq';
import { ingestDeliveries, type IngestDelivery } from '@bioprocess/shared/queues';
import { addIngestDeliveries, queueOfDelivery } from '@bioprocess/shared/ingest/queue-deliveries';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { Redis } from '@bioprocess/shared/server/redis';
import { unfinishedJobsCreatedBefore, type UnfinishedJobRow } from '@bioprocess/shared/server/ingest-jobs';
import { markFailed } from './job-store.ts';

/** A job whose row cannot be delivered again (an upload recorded before rows named their file) and whose delivery was lost. */
const UNDELIVERABLE_MESSAGE = 'This job was lost before it ran and cannot be run again; please send it again.';

/** Jobs looked at per pass, oldest first: a backlog larger than this is worked through pass by pass. */
const JOBS_PER_PASS = 2_000;

export interface ReconcileOutcome {
  requeued: number;
  failed: number;
}

export type Reconciler = PeriodicPass<ReconcileOutcome>;

/** The deliveries an unfinished job still needs: a bulk job's unwritten chunks, or its last one to complete it. */
export function pendingDeliveries(job: UnfinishedJobRow): IngestDelivery[] {
  if (job.kind !== 'bulk') return ingestDeliveries(job);
  const done = new Set(job.chunks_done);
  const missing = Array.from({ length: job.chunk_count }, (_, index) => index).filter((index) => !done.has(index));
  // Every chunk written but the job not completed: its last step (rollups) was cut short; any chunk
  // delivered again finishes it without writing its rows twice.
  return ingestDeliveries(job, missing.length > 0 ? missing : [job.chunk_count - 1]);
}

export function startReconciler(options: {
  pg: Pool;
  queues: Record<'ingest' | 'ingestBulk', Queue>;
  /** A connection to the queues' Redis, to look their entries up. */
  redis: Redis;
  logger: Logger;
  intervalMs: number;
}): Reconciler {
  const { pg, queues, redis, logger, intervalMs } = options;
  const queueOf = (delivery: IngestDelivery) => queueOfDelivery(queues, delivery);

  async function pass(): Promise<ReconcileOutcome> {
    // A job younger than one interval may still be on its way from the api to the queue.
    const jobs = await unfinishedJobsCreatedBefore(pg, intervalMs, JOBS_PER_PASS);
    if (jobs.length === 0) return { requeued: 0, failed: 0 };
    const candidates = jobs.flatMap((job) => pendingDeliveries(job).map((delivery) => ({ job, delivery })));
    let failed = 0;
    for (const job of jobs.filter((unfinished) => pendingDeliveries(unfinished).length === 0)) {
      // Its delivery may still be queued (the id the api gave it): only a lost one ends the job.
      if (await redis.exists(queues.ingest.toKey(`${job.id}-csv`))) continue;
      await markFailed(pg, job.id, UNDELIVERABLE_MESSAGE);
      failed += 1;
    }
    const lookup = redis.pipeline();
    for (const { delivery } of candidates) {
      const key = queueOf(delivery).toKey(delivery.jobId);
      lookup.exists(key);
      lookup.hmget(key, 'finishedOn', 'failedReason');
    }
    const answers = (await lookup.exec()) ?? [];
    const missing: typeof candidates = [];
    const failedEntries = new Map<string, string>();
    candidates.forEach((candidate, index) => {
      const [existsError, exists] = answers[index * 2] ?? [new Error('no answer'), 0];
      const [fieldsError, fields] = answers[index * 2 + 1] ?? [new Error('no answer'), []];
      if (existsError || fieldsError) throw existsError ?? fieldsError;
      if (Number(exists) === 0) missing.push(candidate);
      else {
        const [finishedOn, failedReason] = fields as [string | null, string | null];
        if (finishedOn && failedReason) failedEntries.set(candidate.job.id, failedReason);
      }
    });
    for (const [jobId, reason] of failedEntries) await markFailed(pg, jobId, reason);
    const requeue = missing.filter(({ job }) => !failedEntries.has(job.id));
    if (requeue.length === 0) return { requeued: 0, failed: failed + failedEntries.size };
    // The jobs of one batch are delivered again together, as the api delivered them.
    await addIngestDeliveries(queues, requeue.map(({ delivery }) => delivery));
    logger.warn({ requeued: requeue.length, jobs: new Set(requeue.map(({ job }) => job.id)).size }, 'ingest deliveries lost from the queue were queued again from PostgreSQL');
    return { requeued: requeue.length, failed: failed + failedEntries.size };
  }

  return runPeriodically(pass, { intervalMs, logger, name: 'ingest reconciler' });
}
