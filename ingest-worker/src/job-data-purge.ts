/**
 * Deletes the stored data of finished bulk jobs many at a time (a large post's spooled files at once). A bulk post's rows stay in PostgreSQL
 * (`ingest_job_data`) until its job finished; deleting them per job cost a statement (and its TOAST
 * work) in each job's critical path. Finished jobs are collected here and their data deleted in one
 * statement every PURGE_INTERVAL_MS and at shutdown. A worker killed before a purge leaves the rows to
 * the sweeper, which deletes the data of every finished job.
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { removeSpooledData } from '@bioprocess/shared/server/bulk-spool';
import { deleteFinishedJobData } from '@bioprocess/shared/server/ingest-jobs';

const PURGE_INTERVAL_MS = 1_000;
/** Jobs per statement: bounds one DELETE's parameter and its time. */
const PURGE_BATCH = 2_000;

export interface JobDataPurge {
  /** Notes a finished job whose data may go (`spooled`: its files go now). */
  add(jobId: string, spooled?: boolean): void;
  /** Deletes what was noted so far (also what the timer runs). */
  flush(): Promise<void>;
  /** Stops the timer after a last flush. */
  stop(): Promise<void>;
}

export function startJobDataPurge(pool: Pool, logger: Logger, uploadDir: string): JobDataPurge {
  let pending: string[] = [];
  let running: Promise<void> = Promise.resolve();
  let lastProblemLog = 0;
  const flushOnce = async () => {
    while (pending.length > 0) {
      const batch = pending.slice(0, PURGE_BATCH);
      try {
        await deleteFinishedJobData(pool, batch);
        pending = pending.slice(batch.length);
      } catch (error) {
        // PostgreSQL away: kept for the next pass (the sweeper catches what a dying worker drops).
        if (Date.now() - lastProblemLog > 30_000) {
          lastProblemLog = Date.now();
          logger.warn({ err: error }, 'finished jobs\' data not deleted yet; retrying');
        }
        return;
      }
    }
  };
  const flush = () => {
    running = running.then(flushOnce);
    return running;
  };
  const timer = setInterval(() => { void flush(); }, PURGE_INTERVAL_MS);
  timer.unref();
  return {
    add(jobId, spooled) {
      if (spooled) {
        // A file costs no database statement: removed at once (the sweeper catches what fails here).
        removeSpooledData(uploadDir, [jobId]).catch((error: unknown) => logger.warn({ err: error, jobId }, 'spooled bulk data not removed yet'));
        return;
      }
      // Bounded: should PostgreSQL stay away, the oldest are left to the sweeper.
      if (pending.length >= 100 * PURGE_BATCH) pending.shift();
      pending.push(jobId);
    },
    flush,
    async stop() {
      clearInterval(timer);
      await Promise.race([flush(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    },
  };
}
