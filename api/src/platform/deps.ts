/** The process-wide dependencies the api is built from; tests build their own set. */
import { Queue } from 'bullmq';
import type { ApiEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { createClickHouse, type ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { createRedis, type Redis } from '@bioprocess/shared/server/redis';
import { QUEUE_NAMES } from '@bioprocess/shared/queues';
import { createJobFinishEvents, type JobFinishEvents } from '../ingest-jobs/finish-events.ts';
import { createAccessCaches, type AccessCaches } from './access-caches.ts';

export interface Queues {
  ingest: Queue;
  ingestBulk: Queue;
  audit: Queue;
  export: Queue;
}

export interface AppDeps {
  env: ApiEnv;
  logger: Logger;
  pg: Pool;
  clickhouse: ClickHouseClient;
  /** Fails fast while Redis is down (health checks, rate limits), unlike the queue connections. */
  redis: Redis;
  queues: Queues;
  /** Announces finished ingest jobs to the requests waiting for them. */
  jobEvents: JobFinishEvents;
  /** Live API keys and instruments' organisations, held while their changes are heard. */
  accessCaches: AccessCaches;
}

export function createQueues(env: Pick<ApiEnv, 'REDIS_URL' | 'QUEUE_PREFIX'>, logger?: Logger): Queues {
  const connection = createRedis(env.REDIS_URL, {}, logger);
  const options = { connection, prefix: env.QUEUE_PREFIX };
  const queues = {
    ingest: new Queue(QUEUE_NAMES.ingest, options),
    ingestBulk: new Queue(QUEUE_NAMES.ingestBulk, options),
    audit: new Queue(QUEUE_NAMES.audit, options),
    export: new Queue(QUEUE_NAMES.export, options),
  };
  // The connection itself logs an outage once; a queue without an 'error' listener would print
  // every failed reconnect to stderr.
  for (const queue of Object.values(queues)) queue.on('error', (err) => logger?.debug({ err, queue: queue.name }, 'queue connection error'));
  return queues;
}

export function createDeps(env: ApiEnv, logger: Logger): AppDeps {
  return {
    env,
    logger,
    pg: createPool(env.DATABASE_URL, 20),
    clickhouse: createClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger, undefined, env),
    redis: createRedis(env.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }, logger),
    queues: createQueues(env, logger),
    jobEvents: createJobFinishEvents(env.DATABASE_URL, logger),
    accessCaches: createAccessCaches(env.DATABASE_URL, logger),
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await Promise.allSettled([...Object.values(deps.queues).map((queue) => queue.close()), deps.jobEvents.close(), deps.accessCaches.close()]);
  await Promise.allSettled([deps.pg.end(), deps.clickhouse.close()]);
  deps.redis.disconnect();
}
