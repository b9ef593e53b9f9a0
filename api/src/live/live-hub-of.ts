/** The process's live hub, one per app (its deps), so every stream of the process shares one feed. */
import type { AppDeps } from '../platform/deps.ts';
import { LiveHub } from './live-hub.ts';

const hubs = new WeakMap<object, LiveHub>();

export function liveHubOf(deps: Pick<AppDeps, 'env' | 'logger' | 'clickhouse' | 'redis'>): LiveHub {
  let hub = hubs.get(deps);
  if (!hub) {
    hub = new LiveHub({
      redisUrl: deps.env.REDIS_URL,
      prefix: deps.env.QUEUE_PREFIX,
      logger: deps.logger,
      clickhouse: deps.clickhouse,
      redis: deps.redis,
      limits: {
        connectionsPerOrganization: deps.env.LIVE_CONNECTIONS_PER_ORGANIZATION,
        inlinePoints: deps.env.LIVE_INLINE_POINTS,
        connectionMaxMs: deps.env.LIVE_CONNECTION_MAX_MS,
      },
    });
    hubs.set(deps, hub);
  }
  return hub;
}
