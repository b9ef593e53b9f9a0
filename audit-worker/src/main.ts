/** The audit-worker process: configuration, the worker, and an ordered shutdown on SIGINT/SIGTERM. */
import { auditWorkerEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { startAuditWorker } from './worker.ts';

/** Active jobs get this long to finish before the process exits anyway (they are retried later). */
const SHUTDOWN_DEADLINE_MS = 10_000;

const env = loadEnvOrExit(auditWorkerEnvSchema);
const logger = createLogger('audit-worker', env.LOG_LEVEL);
const handle = startAuditWorker(env, logger);
logger.info({ queuePrefix: env.QUEUE_PREFIX, concurrency: env.WORKER_CONCURRENCY }, 'audit-worker started');

closeOnSignals('audit-worker', logger, () => handle.close(), SHUTDOWN_DEADLINE_MS);
