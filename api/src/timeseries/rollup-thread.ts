/**
 * The thread that stores the rollups of the bulk posts the api writes itself (owed-rollups-thread.ts):
 * with its own PostgreSQL pool, ClickHouse client and rollup chains, it stores each commit it is sent
 * and answers once it is done, or with the error that stopped it. It holds the only chains of the
 * api's compositions, so one commit at a time reaches it; a 'close' ends its connections and the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { decodeMinuteFigures } from '@bioprocess/shared/minute-figures';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { createLogger } from '@bioprocess/shared/server/logger';
import { storeOwedRollups } from '@bioprocess/shared/server/owed-rollups';
import { createPool } from '@bioprocess/shared/server/postgres';
import { RollupChains } from '@bioprocess/shared/server/rollup-chains';
import type { RollupThreadConfig, RollupThreadMessage, RollupThreadReply } from './owed-rollups-thread.ts';

const port = parentPort!;
const config = workerData as RollupThreadConfig;
// A commit takes a connection (its lock) and the backlog's deletion another, one after the other.
const pool = createPool(config.databaseUrl, 2);
// Its failures reach the api's thread with each commit's answer; the client's own lines go to this log.
const clickhouse = createClickHouse(config.clickhouseUrl, config.clickhouseDatabase, createLogger('api-rollups', config.logLevel));
const chains = new RollupChains();

port.on('message', (message: RollupThreadMessage) => {
  if (message.kind === 'close') {
    void Promise.allSettled([pool.end(), clickhouse.close()]).then(() => port.close());
    return;
  }
  const requests = message.requests.map(({ minuteFigures, ...request }) => ({
    ...request, ...(minuteFigures ? { minuteFigures: decodeMinuteFigures(minuteFigures) } : {}),
  }));
  storeOwedRollups(clickhouse, pool, chains, requests).then(
    () => port.postMessage({ id: message.id } satisfies RollupThreadReply),
    (error: unknown) => port.postMessage({
      id: message.id, error: error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) },
    } satisfies RollupThreadReply),
  );
});
