/**
 * The sweeper: what finished, failed or crashed jobs leave behind, and jobs that nothing drives any
 * more. Each ingest-worker runs one at start-up and every INGEST_SWEEP_MS; several at once are safe.
 *
 * - Spooled CSV files (UPLOAD_DIR) whose job finished, or that no job names (the api refused the upload
 *   or died before committing its row) once untouched for SPOOL_GRACE_MS, are removed. A file an
 *   unfinished job names is kept.
 * - Spooled data of large bulk posts (UPLOAD_DIR/bulk) goes the same way: when its job finished, or
 *   when no job names it and it was left alone for SPOOL_GRACE_MS.
 * - Stored bulk data (`ingest_job_data`) of finished jobs is deleted (workers delete it in batches
 *   shortly after the jobs finish, job-data-purge.ts; this catches what a killed worker left).
 * - An unfinished job that made no progress for a while and that no live worker holds or will take
 *   (its deliveries are neither waiting nor active under a held lock: a worker died with them and no
 *   stall check of that queue brought them back) is delivered again; one that stayed so for
 *   INGEST_RETRY_MINUTES is failed with a message. Deliveries missing from Redis or failed there are
 *   the reconciler's business (reconciler.ts).
 */
import { bulkSpoolFolder, removeSpooledData, spooledJobIds } from '@bioprocess/shared/server/bulk-spool';
import { runPeriodically, type PeriodicPass } from '@bioprocess/shared/server/periodic-pass';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Queue } from 'bullmq';
import type { IngestDelivery } from '@bioprocess/shared/queues';
import { stuckJobMessage } from '@bioprocess/shared/ingest/retry-policy';
import { addIngestDeliveries, queueOfDelivery } from '@bioprocess/shared/ingest/queue-deliveries';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import type { Redis } from '@bioprocess/shared/server/redis';
import { deleteAllFinishedJobData, quietUnfinishedJobs, unfinishedByJob, unfinishedByUploadFile } from '@bioprocess/shared/server/ingest-jobs';
import { markFailed } from './job-store.ts';
import { pendingDeliveries } from './reconciler.ts';

/** A spooled file that no job names is an upload still being received until it was left alone this long. */
export const SPOOL_GRACE_MS = 10 * 60_000;
/** The names the api gives spooled uploads; nothing else in the folder is touched. */
const SPOOL_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.csv$/i;
/** Jobs looked at per pass. */
const JOBS_PER_PASS = 500;

export interface SweepOutcome {
  filesRemoved: number;
  dataRowsRemoved: number;
  redriven: number;
  failed: number;
}

export type Sweeper = PeriodicPass<SweepOutcome>;

export interface SweeperOptions {
  pg: Pool;
  queues: Record<'ingest' | 'ingestBulk', Queue>;
  /** A connection to the queues' Redis, to look their locks up. */
  redis: Redis;
  logger: Logger;
  uploadDir: string;
  intervalMs: number;
  /** A job quiet for less than this is left alone (its worker may be between two updates). */
  quietMs: number;
  /** How long a job may stay undriven before it is failed. */
  retryMinutes: number;
}

export function startSweeper(options: SweeperOptions): Sweeper {
  const { pg, queues, redis, logger, uploadDir, intervalMs, quietMs, retryMinutes } = options;
  const queueOf = (delivery: IngestDelivery) => queueOfDelivery(queues, delivery);

  async function sweepSpool(): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(uploadDir)).filter((name) => SPOOL_FILE.test(name));
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return 0;
      throw error;
    }
    if (names.length === 0) return 0;
    const files = names.map((name) => path.resolve(uploadDir, name));
    const named = await unfinishedByUploadFile(pg, files);
    let removed = 0;
    for (const file of files) {
      const unfinished = named.get(file);
      if (unfinished === true) continue;
      if (unfinished === undefined) {
        const info = await stat(file).catch(() => null);
        if (!info || Date.now() - info.mtimeMs < SPOOL_GRACE_MS) continue;
      }
      await rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }

  /** Spooled data of large bulk posts whose job finished, or that no job names once left alone SPOOL_GRACE_MS. */
  async function sweepBulkSpool(): Promise<number> {
    const jobIds = await spooledJobIds(uploadDir);
    if (jobIds.length === 0) return 0;
    const named = await unfinishedByJob(pg, jobIds);
    const gone: string[] = [];
    for (const jobId of jobIds) {
      const unfinished = named.get(jobId);
      if (unfinished === true) continue;
      if (unfinished === undefined) {
        // Its request may still be between the files and the row.
        const info = await stat(path.join(bulkSpoolFolder(uploadDir), jobId)).catch(() => null);
        if (!info || Date.now() - info.mtimeMs < SPOOL_GRACE_MS) continue;
      }
      gone.push(jobId);
    }
    await removeSpooledData(uploadDir, gone);
    return gone.length;
  }

  const sweepJobData = () => deleteAllFinishedJobData(pg);

  /** Whether the delivery will run or is running: waiting, delayed, or active under a lock some worker renews. */
  async function deliveryAlive(delivery: IngestDelivery): Promise<'alive' | 'stuck' | 'reconciler'> {
    const queue = queueOf(delivery);
    const entry = await queue.getJob(delivery.jobId);
    if (!entry) return 'reconciler';
    const state = await entry.getState();
    if (state === 'unknown' || state === 'failed') return 'reconciler';
    if (state === 'completed') return 'stuck';
    if (state === 'active') return (await redis.exists(`${queue.toKey(delivery.jobId)}:lock`)) ? 'alive' : 'stuck';
    return 'alive';
  }

  async function sweepStuckJobs(): Promise<{ redriven: number; failed: number }> {
    const jobs = await quietUnfinishedJobs(pg, quietMs, retryMinutes, JOBS_PER_PASS);
    let redriven = 0;
    let failed = 0;
    for (const job of jobs) {
      const deliveries = pendingDeliveries(job);
      if (deliveries.length === 0) continue;
      const verdicts = await Promise.all(deliveries.map(deliveryAlive));
      if (verdicts.some((verdict) => verdict !== 'stuck')) continue;
      // Nothing will run this job again by itself: its entries are done with, or held by a dead worker.
      // One taken up meanwhile (a stall check moved it back and a worker locked it) refuses removal:
      // the job is alive after all. An entry removed here and not added back is the reconciler's.
      let removed = true;
      for (const delivery of deliveries) {
        const entry = await queueOf(delivery).getJob(delivery.jobId);
        await entry?.remove().catch(() => { removed = false; });
      }
      if (!removed) continue;
      if (job.given_up) {
        await markFailed(pg, job.id, stuckJobMessage(retryMinutes));
        failed += 1;
        continue;
      }
      await addIngestDeliveries(queues, deliveries);
      redriven += 1;
    }
    return { redriven, failed };
  }

  async function sweepOnce(): Promise<SweepOutcome> {
    const stuck = await sweepStuckJobs();
    const dataRowsRemoved = await sweepJobData();
    const filesRemoved = await sweepSpool() + await sweepBulkSpool();
    const outcome = { filesRemoved, dataRowsRemoved, ...stuck };
    // Finished bulk jobs' data is routinely deleted in batches by the workers (job-data-purge.ts); a
    // sweep meeting some before their purge ran is no sign of trouble.
    if (outcome.filesRemoved + outcome.redriven + outcome.failed > 0) logger.warn(outcome, 'ingest sweeper cleaned up after finished or abandoned jobs');
    else if (outcome.dataRowsRemoved > 0) logger.debug(outcome, 'ingest sweeper deleted finished jobs\' data');
    return outcome;
  }

  return runPeriodically(sweepOnce, { intervalMs, logger, name: 'ingest sweeper' });
}
