/** The ingest-worker process: configuration, the BullMQ worker, and an ordered shutdown on signals. */
import { ingestWorkerEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { startIngestWorker } from './worker.ts';

const env = loadEnvOrExit(ingestWorkerEnvSchema);
const logger = createLogger('ingest-worker', env.LOG_LEVEL);
const worker = startIngestWorker(env, logger);
logger.info({ concurrency: env.WORKER_CONCURRENCY, bulkConcurrency: env.INGEST_BULK_CONCURRENCY, prefix: env.QUEUE_PREFIX }, 'ingest-worker started');

closeOnSignals('ingest-worker', logger, () => worker.close(), 30_000);
