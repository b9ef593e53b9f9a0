/** The ingest-worker process: configuration, the BullMQ worker, and an ordered shutdown on signals. */
import v8 from 'node:v8';
import { ingestWorkerEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { startIngestWorker } from './worker.ts';

// Each bulk chunk brings a few MB of TSV from Redis; with V8's default growing factor the old
// generation was fully collected about every third chunk (39 mark-compacts for 5 M points, 13 with
// this; measured with `npm run bench` and --trace-gc), as in the api (api/src/main.ts).
v8.setFlagsFromString('--heap-growing-percent=150');

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
