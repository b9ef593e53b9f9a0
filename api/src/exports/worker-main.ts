/**
 * The export-worker process: writes the export files too large to stream (export jobs) into EXPORT_DIR
 * and sweeps expired ones. It shares the export code with the api, so it lives in the api package.
 */
import { exportWorkerEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { startExportWorker } from './jobs/export-worker.ts';

const env = loadEnvOrExit(exportWorkerEnvSchema);
const logger = createLogger('export-worker', env.LOG_LEVEL);
const worker = startExportWorker(env, logger);
logger.info({ concurrency: env.EXPORT_WORKER_CONCURRENCY, exportDir: env.EXPORT_DIR, prefix: env.QUEUE_PREFIX }, 'export-worker started');

closeOnSignals('export-worker', logger, () => worker.close(), 30_000);
