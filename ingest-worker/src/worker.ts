/**
 * The ingest-worker: BullMQ Workers on queues `ingest` (CSV uploads, range deletions) and `ingest-bulk`
 * (bulk chunks and batches), prefix QUEUE_PREFIX, that write them into ClickHouse. Jobs are acknowledged only after their rows are
 * durable; transient failures (a service down) are retried with a capped back-off so the worker
 * recovers without a restart; permanent ones fail the job with a clear message. Organisations take
 * turns on both queues, and share the slots of `ingest` (docs/ingest.md#turns-between-organisations).
 */
import { DelayedError, Queue, Worker, UnrecoverableError, type Job } from 'bullmq';
import {
  QUEUE_NAMES, INGEST_JOBS, ownerOfPayload, bulkBatchPayloadSchema, bulkChunkPayloadSchema, csvUploadPayloadSchema, deletionPayloadSchema,
} from '@bioprocess/shared/queues';
import { ingestWorkerEnvSchema, type BaseEnv, type IngestWorkerConfig } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool } from '@bioprocess/shared/server/postgres';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { createRedis } from '@bioprocess/shared/server/redis';
import { organizationSlots } from '@bioprocess/shared/server/organization-slots';
import type { WorkerContext } from './context.ts';
import {
  ingestBackoffMs, retriesExhaustedMessage, retryTimeExhausted, UNCLASSIFIED_FAILURE_ATTEMPTS,
} from '@bioprocess/shared/ingest/retry-policy';
import { isTransient, PermanentJobError } from './errors.ts';
import { noteTransientFailure } from '@bioprocess/shared/server/ingest-jobs';
import { markFailed } from './job-store.ts';
import { startReconciler } from './reconciler.ts';
import { startSweeper } from './sweeper.ts';
import { startRollupBacklogPass } from './rollups/owed.ts';
import { processBulkChunk } from './jobs/bulk-chunk.ts';
import { processBulkBatch } from './jobs/bulk-batch.ts';
import { createBulkWrites } from './bulk-writes.ts';
import type { BulkJobOnItsWay } from './bulk-writes.ts';
import { startJobDataPurge } from './job-data-purge.ts';
import { processDeletion } from './jobs/deletion.ts';
import { discardCsvUpload, processCsvUpload } from './jobs/csv-upload.ts';

/** The settings of ingestWorkerEnvSchema (shared/src/server/config.ts); any left out take its defaults. */
const workerSettingsSchema = ingestWorkerEnvSchema.pick({
  WORKER_CONCURRENCY: true, INGEST_BULK_CONCURRENCY: true, INGEST_LOCK_MS: true, INGEST_RETRY_MINUTES: true, INGEST_BACKOFF_MAX_MS: true, INGEST_RECONCILE_MS: true,
  INGEST_SWEEP_MS: true, INGEST_RUNNING_PER_ORGANIZATION: true,
});
export type IngestWorkerEnv = BaseEnv & Partial<Pick<IngestWorkerConfig, keyof typeof workerSettingsSchema.shape>>;

export interface IngestWorker {
  /** Stops taking jobs, lets active ones reach a checkpoint, then closes every connection. */
  close(): Promise<void>;
}

/** The longest a shutdown waits for active jobs before closing connections anyway. */
const SHUTDOWN_DEADLINE_MS = 20_000;

/** Runs a bulk job counted as on its way to an insert and to the rollups until it submits to them or ends. */
async function onItsWay(context: WorkerContext, run: (ahead: BulkJobOnItsWay) => Promise<void>): Promise<void> {
  const ahead = context.bulkWrites.setOut();
  try {
    await run(ahead);
  } finally {
    ahead.toInsert.arrived();
    ahead.toRollups.arrived();
  }
}

async function dispatch(context: WorkerContext, job: Job): Promise<void> {
  switch (job.name) {
    case INGEST_JOBS.bulkChunk: {
      // The rows it refers to were written by the api from validated points; ClickHouse checks every
      // field's type again on insert.
      const payload = bulkChunkPayloadSchema.parse(job.data);
      return onItsWay(context, (ahead) => processBulkChunk(context, payload, job, ahead));
    }
    case INGEST_JOBS.bulkBatch: {
      const payload = bulkBatchPayloadSchema.parse(job.data);
      return onItsWay(context, (ahead) => processBulkBatch(context, payload, job, ahead));
    }
    case INGEST_JOBS.deletion: {
      const payload = deletionPayloadSchema.parse(job.data);
      return processDeletion(context, payload);
    }
    case INGEST_JOBS.csv: {
      const payload = csvUploadPayloadSchema.parse(job.data);
      return processCsvUpload(context, payload, job);
    }
    default:
      throw new PermanentJobError(`Unknown ingest job ${job.name}`);
  }
}

export function startIngestWorker(env: IngestWorkerEnv, logger: Logger): IngestWorker {
  const settings = workerSettingsSchema.parse(env);
  const shutdown = new AbortController();
  const pg = createPool(env.DATABASE_URL, 10);
  const clickhouse = createClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger, undefined, env);
  const context: WorkerContext = {
    env,
    logger,
    pg,
    clickhouse,
    redis: createRedis(env.REDIS_URL, {}, logger),
    bulkWrites: createBulkWrites(clickhouse, pg, logger),
    jobDataPurge: startJobDataPurge(pg, logger, env.UPLOAD_DIR),
    shutdown: shutdown.signal,
  };
  const connection = createRedis(env.REDIS_URL);
  let lastOutageLog = 0;

  const failForGood = async (job: Job, jobIds: string[], error: unknown, message: string): Promise<never> => {
    logger.warn({ jobIds, name: job.name, err: error }, 'ingest job failed permanently');
    // Failing the job writes its audit event in the same transaction. Should PostgreSQL be unreachable
    // now, the reconciler finds the BullMQ entry failed and fails the row later (and the sweeper then
    // removes the upload's file).
    const recorded = jobIds.length > 0 && await Promise.all(jobIds.map((jobId) => markFailed(context.pg, jobId, message))).then(() => true, (markError: unknown) => {
      logger.warn({ err: markError, jobIds }, 'failed job could not be marked failed yet');
      return false;
    });
    if (recorded && job.name === INGEST_JOBS.csv && !(error instanceof PermanentJobError)) {
      // Failed for another reason after its retries: nothing else will clean up after it.
      const payload = csvUploadPayloadSchema.safeParse(job.data);
      if (payload.success) await discardCsvUpload(context, payload.data).catch(() => undefined);
    }
    throw error instanceof UnrecoverableError ? error : new UnrecoverableError(message);
  };

  const processJob = async (job: Job) => {
    try {
      await dispatch(context, job);
    } catch (error) {
      // The ingest jobs the delivery carries: one, or a batch of bulk posts.
      const data = job.data as { job_id?: string; job_ids?: string[] };
      const jobIds = data.job_ids ?? (data.job_id === undefined ? [] : [data.job_id]);
      const permanent = error instanceof UnrecoverableError
        || (!isTransient(error) && job.attemptsMade + 1 >= UNCLASSIFIED_FAILURE_ATTEMPTS);
      if (permanent) {
        return failForGood(job, jobIds, error, error instanceof PermanentJobError ? error.message : `Ingest failed: ${(error as Error).message}`);
      }
      if (jobIds.length > 0 && isTransient(error)) {
        // Bounded in time rather than in attempts: the row remembers when the trouble began, across
        // restarts and deliveries made again by the reconciler. PostgreSQL itself down: retry.
        const failingSeconds = await noteTransientFailure(context.pg, jobIds).catch(() => 0);
        if (retryTimeExhausted(failingSeconds, settings.INGEST_RETRY_MINUTES)) {
          return failForGood(job, jobIds, error, retriesExhaustedMessage(job.name, settings.INGEST_RETRY_MINUTES, error));
        }
      }
      if (Date.now() - lastOutageLog > 5_000) {
        lastOutageLog = Date.now();
        logger.warn({ jobIds, name: job.name, attempt: job.attemptsMade + 1, err: error }, 'ingest job failed, will retry');
      }
      throw error;
    }
  };
  const workerOptions = {
    connection,
    prefix: env.QUEUE_PREFIX,
    settings: { backoffStrategy: (attemptsMade: number) => ingestBackoffMs(attemptsMade, settings.INGEST_BACKOFF_MAX_MS) },
    // Long CSV jobs keep their lock renewed; a crashed worker's job is picked up again after this.
    lockDuration: settings.INGEST_LOCK_MS,
    stalledInterval: Math.max(1_000, Math.floor(settings.INGEST_LOCK_MS / 2)),
    maxStalledCount: 1_000,
  };
  const queueConnection = createRedis(env.REDIS_URL);
  const queues = {
    ingest: new Queue(QUEUE_NAMES.ingest, { connection: queueConnection, prefix: env.QUEUE_PREFIX }),
    ingestBulk: new Queue(QUEUE_NAMES.ingestBulk, { connection: queueConnection, prefix: env.QUEUE_PREFIX }),
  };
  for (const queue of Object.values(queues)) queue.on('error', (err) => logger.debug({ err, queue: queue.name }, 'queue connection error'));

  // Uploads and deletions can each run for minutes: one organisation holds only its share of their
  // slots. Bulk chunks are small and short, so their queue only takes organisations in turns
  // (shared/src/server/fair-turns.ts) and an organisation alone may use every slot.
  const slots = organizationSlots(queues.ingest, settings.INGEST_RUNNING_PER_ORGANIZATION, logger);
  const ownerOf = (job: Job | undefined) => ownerOfPayload(job?.data);
  const processUploadOrDeletion = async (job: Job, token?: string) => {
    const owner = ownerOf(job);
    if (owner !== undefined && !(await slots.take(job, token, owner))) throw new DelayedError();
    return processJob(job);
  };
  const freeSlot = (job: Job | undefined) => {
    const owner = ownerOf(job);
    if (owner !== undefined) slots.freed(owner).catch((error: unknown) => logger.warn({ err: error, owner }, 'parked ingest job not promoted; its park ends by itself'));
  };
  const uploadsWorker = new Worker(QUEUE_NAMES.ingest, processUploadOrDeletion, { ...workerOptions, concurrency: settings.WORKER_CONCURRENCY });
  // Emitted once the job left the active list, so the count of the organisation's running jobs is right.
  uploadsWorker.on('completed', freeSlot);
  uploadsWorker.on('failed', freeSlot);
  const workers = [
    uploadsWorker,
    new Worker(QUEUE_NAMES.ingestBulk, processJob, { ...workerOptions, concurrency: settings.INGEST_BULK_CONCURRENCY }),
  ];
  for (const worker of workers) {
    worker.on('error', (error) => {
      if (Date.now() - lastOutageLog > 5_000) {
        lastOutageLog = Date.now();
        logger.warn({ err: error }, 'ingest worker connection problem; retrying');
      }
    });
  }
  const reconciler = startReconciler({ pg, queues, redis: queueConnection, logger, intervalMs: settings.INGEST_RECONCILE_MS });
  const sweeper = startSweeper({
    pg, queues, redis: queueConnection, logger, uploadDir: env.UPLOAD_DIR, intervalMs: settings.INGEST_SWEEP_MS,
    // A live worker renews its lock twice per lock duration: a job quiet for two is worth a look.
    quietMs: 2 * settings.INGEST_LOCK_MS, retryMinutes: settings.INGEST_RETRY_MINUTES,
  });
  const rollupBacklog = startRollupBacklogPass({ pg, clickhouse, logger });

  return {
    async close() {
      shutdown.abort();
      await Promise.all([reconciler.stop(), sweeper.stop(), rollupBacklog.stop()]);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_DEADLINE_MS).unref());
      // The rollups of posts already completed go out before the connections close; a backlog pass
      // elsewhere takes up any the deadline cuts off.
      await Promise.race([Promise.all(workers.map((worker) => worker.close())).then(() => context.bulkWrites.drain()), deadline]);
      await context.jobDataPurge.stop();
      await Promise.allSettled([context.pg.end(), context.clickhouse.close()]);
      await Promise.allSettled(Object.values(queues).map((queue) => queue.close()));
      connection.disconnect();
      queueConnection.disconnect();
      context.redis.disconnect();
    },
  };
}
