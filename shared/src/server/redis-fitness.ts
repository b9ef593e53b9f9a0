/**
 * Whether a Redis suits the queues: append-only persistence (a restart keeps queued jobs) and
 * `maxmemory-policy noeviction` (a full Redis refuses writes instead of silently dropping job keys).
 * The platform stays correct without either (PostgreSQL is the record and the reconciler delivers
 * again), but an evicting Redis loses deliveries all the time under memory pressure, so a production
 * api refuses to start on one.
 */
import type { Redis } from 'ioredis';

export interface RedisFitness {
  /** `yes`/`no`; `unknown` when CONFIG is not allowed (some managed services). */
  appendonly: string;
  /** RDB snapshot schedule (`""` for none). */
  save: string;
  maxmemory_policy: string;
  /** Keeps data across a restart (append-only file or snapshots); null when unknown. */
  persistent: boolean | null;
  /** May drop keys when full; null when unknown. */
  evicting: boolean | null;
}

export async function inspectRedis(redis: Redis): Promise<RedisFitness> {
  const read = async (name: string): Promise<string> => {
    try {
      const answer = (await redis.call('CONFIG', 'GET', name)) as string[];
      return answer.length >= 2 ? String(answer[1]) : 'unknown';
    } catch {
      return 'unknown';
    }
  };
  const [appendonly, save, policy] = await Promise.all([read('appendonly'), read('save'), read('maxmemory-policy')]);
  return {
    appendonly,
    save,
    maxmemory_policy: policy,
    persistent: appendonly === 'unknown' ? null : appendonly === 'yes' || (save !== 'unknown' && save.trim() !== ''),
    evicting: policy === 'unknown' ? null : policy !== 'noeviction',
  };
}

export function evictingRedisMessage(fitness: RedisFitness): string {
  return `Redis at REDIS_URL uses maxmemory-policy ${fitness.maxmemory_policy}: it may evict queued jobs when full. `
    + 'Set maxmemory-policy noeviction (redis-server --maxmemory-policy noeviction, or CONFIG SET maxmemory-policy noeviction) and start again.';
}
