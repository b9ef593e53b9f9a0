import { Redis, type RedisOptions } from 'ioredis';

/**
 * BullMQ workers need maxRetriesPerRequest: null so that a Redis outage blocks and retries rather
 * than failing commands; the retry strategy backs off up to 2 s so recovery needs no restart.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...options,
  });
}

export type { Redis };
