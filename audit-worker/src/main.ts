/** The audit-worker process: configuration, the worker, and an ordered shutdown on SIGINT/SIGTERM. */
import { loadEnvOrExit, workerEnvSchema } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { startAuditWorker } from './worker.ts';

/** Active jobs get this long to finish before the process exits anyway (they are retried later). */
const SHUTDOWN_DEADLINE_MS = 10_000;

const env = loadEnvOrExit(workerEnvSchema);
const logger = createLogger('audit-worker', env.LOG_LEVEL);
const handle = startAuditWorker(env, logger);
logger.info({ queuePrefix: env.QUEUE_PREFIX, concurrency: env.WORKER_CONCURRENCY }, 'audit-worker started');

let shuttingDown = false;
async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  logger.info({ signal }, 'audit-worker shutting down');
  const deadline = setTimeout(() => {
    logger.error('shutdown deadline passed; exiting with jobs still active');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  await handle.close();
  logger.info('audit-worker stopped');
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
