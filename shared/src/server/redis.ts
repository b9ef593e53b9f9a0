import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.ts';

/**
 * BullMQ workers need maxRetriesPerRequest: null so that a Redis outage blocks and retries rather
 * than failing commands; the retry strategy backs off up to 2 s so recovery needs no restart.
 * With a logger, an outage is logged once (not on every retry) and its end once, through pino;
 * without one, ioredis would print every failed reconnect to stderr itself.
 */
export function createRedis(url: string, options: RedisOptions = {}, logger?: Logger): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...options,
  });
  if (logger) logConnectionState(redis, logger);
  return redis;
}

/** Logs the first error of an outage as a warning and the reconnection that ends it. */
export function logConnectionState(redis: Redis, logger: Logger): void {
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err }, 'redis unavailable; reconnecting with backoff');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis connection restored');
  });
}

export type { Redis };
