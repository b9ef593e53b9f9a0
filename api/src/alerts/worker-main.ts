/**
 * The alert worker process: evaluates alert rules as points are stored and delivers notifications.
 * It shares the envelope, alignment and mail code with the api, so it lives in the api package.
 */
import { apiEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { alertWorkerEnvSchema, startAlertWorker } from './worker.ts';

const env = loadEnvOrExit(apiEnvSchema);
const alertEnv = loadEnvOrExit(alertWorkerEnvSchema);
const logger = createLogger('alert-worker', env.LOG_LEVEL);
const worker = startAlertWorker(env, alertEnv, logger);
logger.info({ consumer: worker.consumer.name, prefix: env.QUEUE_PREFIX }, 'alert-worker started');

closeOnSignals('alert-worker', logger, () => worker.close(), 30_000);
