/** The ingest-worker process: configuration, the BullMQ worker, and an ordered shutdown on signals. */
import { ingestWorkerEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { startIngestWorker } from './worker.ts';

const env = loadEnvOrExit(ingestWorkerEnvSchema);
const logger = createLogger('ingest-worker', env.LOG_LEVEL);
const worker = startIngestWorker(env, logger);
logger.info({ concurrency: env.WORKER_CONCURRENCY, bulkConcurrency: env.INGEST_BULK_CONCURRENCY, prefix: env.QUEUE_PREFIX }, 'ingest-worker started');

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  logger.info({ signal }, 'ingest-worker shutting down');
  const hardDeadline = setTimeout(() => process.exit(1), 30_000);
  hardDeadline.unref();
  await worker.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));
