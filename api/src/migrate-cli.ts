/** `npm run migrate` entry: applies every pending migration and exits. */
import { baseEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { migrateAll } from './db/migrate.ts';

const env = loadEnvOrExit(baseEnvSchema);
const logger = createLogger('migrate', env.LOG_LEVEL);
try {
  await migrateAll(env, logger);
} catch (error) {
  logger.error({ err: error }, 'migration failed');
  process.exit(1);
}
