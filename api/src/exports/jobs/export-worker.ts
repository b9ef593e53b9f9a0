/**
 * The export-worker: a BullMQ Worker on queue `export` that writes export files (run-export.ts), and a
 * sweep run at start and every EXPORT_SWEEP_MS:
 *
 * - completed exports past their EXPORT_FILE_TTL_HOURS become `expired` and their files are removed;
 * - files in EXPORT_DIR that no live job needs (part files of jobs no longer running, files of jobs
 *   failed, expired or gone) are removed;
 * - an unfinished job quiet for two lock durations whose delivery is neither waiting nor active (Redis
 *   lost it, or it failed there) is delivered again, or failed once it used up its attempts.
 *
 * A worker killed mid-export loses its lock; BullMQ's stall check (or the sweep) delivers the job again
 * and the next attempt starts the file over.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { EXPORT_JOB, EXPORT_JOB_MAX_ATTEMPTS, exportJobPayloadSchema, ownerOfPayload, QUEUE_NAMES } from '@bioprocess/shared/queues';
import { exportWorkerEnvSchema, type BaseEnv, type ExportWorkerConfig } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { createRedis } from '@bioprocess/shared/server/redis';
import { runPeriodically } from '@bioprocess/shared/server/periodic-pass';
import { organizationSlots } from '@bioprocess/shared/server/organization-slots';
import { attemptsExhaustedMessage, deliverExportJob, expireExportJobs, failExportJob, liveExportFiles, quietExportJobs } from './export-jobs.ts';
import { runExportJob, type ExportRunContext } from './run-export.ts';

const settingsSchema = exportWorkerEnvSchema.pick({
  EXPORT_WORKER_CONCURRENCY: true, EXPORT_RUNNING_PER_ORGANIZATION: true, EXPORT_LOCK_MS: true, EXPORT_SWEEP_MS: true,
});
export type ExportWorkerEnv = BaseEnv & Partial<Pick<ExportWorkerConfig, keyof typeof settingsSchema.shape>>;

const SHUTDOWN_DEADLINE_MS = 20_000;
const EXPORT_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(part|csv|xlsx|zip)$/i;

export interface ExportWorker {
  /** One sweep now (tests; also what the timer runs). */
  sweep(): Promise<SweepOutcome>;
  close(): Promise<void>;
}

export interface SweepOutcome {
  expired: number;
  filesRemoved: number;
  redelivered: number;
  failed: number;
}

async function sweepFiles(pg: Pool, exportDir: string): Promise<number> {
  const names = await readdir(exportDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const files = names.flatMap((name) => {
    const match = EXPORT_FILE.exec(name);
    return match ? [{ name, id: match[1]!.toLowerCase(), part: match[2] === 'part' }] : [];
  });
  const states = await liveExportFiles(pg, [...new Set(files.map((file) => file.id))]);
  let removed = 0;
  for (const file of files) {
    const state = states.get(file.id);
    // A part file is needed while its job may still be writing it; a final file while the job is
    // completed, or running (renamed into place, completion not yet committed).
    const keep = file.part ? state === 'running' || state === 'queued' : state === 'completed' || state === 'running';
    if (keep) continue;
    await rm(path.join(exportDir, file.name), { force: true });
    removed += 1;
  }
  return removed;
}

export async function sweepExports(options: { pg: Pool; queue: Queue; exportDir: string; quietMs: number }): Promise<SweepOutcome> {
  const outcome: SweepOutcome = { expired: 0, filesRemoved: 0, redelivered: 0, failed: 0 };
  const expired = await expireExportJobs(options.pg);
  for (const file of expired) await rm(file, { force: true });
  outcome.expired = expired.length;
  for (const job of await quietExportJobs(options.pg, options.quietMs)) {
    const delivery = await options.queue.getJob(job.id);
    const state = delivery ? await delivery.getState() : 'missing';
    if (state === 'waiting' || state === 'active' || state === 'delayed' || state === 'prioritized' || state === 'waiting-children') continue;
    if (job.attempts >= EXPORT_JOB_MAX_ATTEMPTS) {
      await failExportJob(options.pg, job.id, attemptsExhaustedMessage(job.error));
      outcome.failed += 1;
      continue;
    }
    if (delivery) await delivery.remove().catch(() => undefined);
    await deliverExportJob(options.queue, job);
    outcome.redelivered += 1;
  }
  outcome.filesRemoved = await sweepFiles(options.pg, options.exportDir);
  return outcome;
}

export function startExportWorker(env: ExportWorkerEnv, logger: Logger): ExportWorker {
  const settings = settingsSchema.parse(env);
  const shutdown = new AbortController();
  const pg = createPool(env.DATABASE_URL, 4 + settings.EXPORT_WORKER_CONCURRENCY);
  const clickhouse = createClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger, undefined, env);
  const context: ExportRunContext = {
    pg, clickhouse, logger, exportDir: path.resolve(env.EXPORT_DIR), ttlHours: env.EXPORT_FILE_TTL_HOURS, shutdown: shutdown.signal,
  };
  const connection = createRedis(env.REDIS_URL);
  const queueConnection = createRedis(env.REDIS_URL);
  const queue = new Queue(QUEUE_NAMES.export, { connection: queueConnection, prefix: env.QUEUE_PREFIX });
  queue.on('error', (err) => logger.debug({ err }, 'export queue connection error'));
  // An export can hold its slot for minutes: one organisation holds only its share of them.
  const slots = organizationSlots(queue, settings.EXPORT_RUNNING_PER_ORGANIZATION, logger);
  let lastOutageLog = 0;
  const worker = new Worker(QUEUE_NAMES.export, async (job: Job, token?: string) => {
    if (job.name !== EXPORT_JOB) throw new UnrecoverableError(`Unknown export job ${job.name}`);
    const payload = exportJobPayloadSchema.parse(job.data);
    if (!(await slots.take(job, token, payload.organization_id))) throw new DelayedError();
    const outcome = await runExportJob(context, payload.job_id);
    logger.info({ jobId: payload.job_id, outcome }, 'export job delivered');
  }, {
    connection,
    prefix: env.QUEUE_PREFIX,
    concurrency: settings.EXPORT_WORKER_CONCURRENCY,
    lockDuration: settings.EXPORT_LOCK_MS,
    stalledInterval: Math.max(1_000, Math.floor(settings.EXPORT_LOCK_MS / 2)),
    // The row counts deliveries (a stalled one included) and fails the job after its attempts.
    maxStalledCount: 1_000,
  });
  worker.on('error', (error) => {
    if (Date.now() - lastOutageLog > 5_000) {
      lastOutageLog = Date.now();
      logger.warn({ err: error }, 'export worker connection problem; retrying');
    }
  });
  // Emitted once the job left the active list, so the count of the organisation's running exports is right.
  const freeSlot = (job: Job | undefined) => {
    const owner = ownerOfPayload(job?.data);
    if (owner !== undefined) slots.freed(owner).catch((error: unknown) => logger.warn({ err: error, owner }, 'parked export not promoted; its park ends by itself'));
  };
  worker.on('completed', freeSlot);
  worker.on('failed', (job, error) => {
    logger.warn({ jobId: job?.id, err: error }, 'export delivery failed');
    freeSlot(job);
  });
  const sweep = runPeriodically(
    () => sweepExports({ pg, queue, exportDir: context.exportDir, quietMs: 2 * settings.EXPORT_LOCK_MS }),
    { intervalMs: settings.EXPORT_SWEEP_MS, logger, name: 'export sweep' },
  );

  return {
    sweep: () => sweep.pass(),
    async close() {
      shutdown.abort();
      await sweep.stop();
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_DEADLINE_MS).unref());
      await Promise.race([worker.close(), deadline]);
      await Promise.allSettled([pg.end(), clickhouse.close(), queue.close()]);
      connection.disconnect();
      queueConnection.disconnect();
    },
  };
}
