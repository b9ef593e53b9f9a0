/** Idempotent tasks run once when the api starts, after migrations and before listening. */
import type { AppDeps } from './platform/deps.ts';
import { ensureSuperuser, isLoopbackHost, PublishedPasswordError, WELL_KNOWN_PASSWORDS } from './auth/superuser-bootstrap.ts';
import { evictingRedisMessage, inspectRedis } from '@bioprocess/shared/server/redis-fitness';

export class StartupRefused extends Error {}

export async function runStartupTasks(deps: AppDeps): Promise<void> {
  const { env } = deps;
  if (env.SEED_DEMO && !isLoopbackHost(env.HOST) && WELL_KNOWN_PASSWORDS.includes(env.DEMO_PASSWORD)) {
    // The demo accounts would be an admin account anyone who read the README can sign in to.
    throw new PublishedPasswordError(
      `SEED_DEMO with the published DEMO_PASSWORD while HOST=${env.HOST} accepts connections from other machines: set DEMO_PASSWORD or listen on 127.0.0.1`,
    );
  }
  await checkRedisFitness(deps);
  await ensureSuperuser(deps);
  await reportOverlappingUnitOperations(deps);
}

/** Windows saved before the one-at-a-time rule may overlap; they are listed, never changed (README: resolving them). */
async function reportOverlappingUnitOperations(deps: AppDeps): Promise<void> {
  const { rows } = await deps.pg.query<{ pairs: number }>('SELECT count(*)::int AS pairs FROM unit_operation_overlaps');
  const pairs = rows[0]?.pairs ?? 0;
  if (pairs > 0) {
    deps.logger.warn({ pairs }, 'unit operations overlap on the same equipment: SELECT * FROM unit_operation_overlaps lists them (README: overlapping unit operations)');
  }
}

/**
 * A production api refuses an evicting Redis; elsewhere it only warns. Redis that does not answer yet
 * is not a reason to refuse (requests are recorded in PostgreSQL and delivered once it is up).
 */
export async function checkRedisFitness(deps: Pick<AppDeps, 'env' | 'logger' | 'redis'>): Promise<void> {
  if (deps.redis.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3_000);
      deps.redis.once('ready', () => { clearTimeout(timer); resolve(); });
    });
  }
  if (deps.redis.status !== 'ready') {
    deps.logger.warn('Redis does not answer yet: its persistence and eviction policy were not checked');
    return;
  }
  const fitness = await inspectRedis(deps.redis);
  if (fitness.evicting === true) {
    if (deps.env.NODE_ENV === 'production') throw new StartupRefused(evictingRedisMessage(fitness));
    deps.logger.warn({ redis: fitness }, evictingRedisMessage(fitness));
  }
  if (fitness.persistent === false) deps.logger.warn({ redis: fitness }, 'Redis keeps nothing on disk: after a restart the reconciler queues unfinished jobs again from PostgreSQL');
}
