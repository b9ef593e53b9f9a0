/** The connector process: configuration, the connector, and an ordered shutdown on signals. */
import { connectorEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createPool } from '@bioprocess/shared/server/postgres';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { Connector } from './connector.ts';
import { SOURCE_FACTORIES } from './sources/index.ts';

const env = loadEnvOrExit(connectorEnvSchema);
const logger = createLogger('connector', env.LOG_LEVEL);
const pg = createPool(env.DATABASE_URL, 4);
const connector = new Connector({ env, pg, log: logger, factories: SOURCE_FACTORIES });
await connector.start();
logger.info({ connector: connector.id, api: env.CONNECTOR_API_URL, dataDir: env.CONNECTOR_DATA_DIR }, 'connector started');

closeOnSignals('connector', logger, async () => {
  await connector.stop();
  await pg.end();
}, 30_000);
