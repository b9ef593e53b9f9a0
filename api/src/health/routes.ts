import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { inspectRedis, type RedisFitness } from '@bioprocess/shared/server/redis-fitness';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, label: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${label} timed out`)), CHECK_TIMEOUT_MS).unref()),
  ]);
}

/**
 * The health connection fails fast instead of queueing commands, so it is asked only once connected;
 * a process that has just started (or Redis that has just returned) gets a moment to (re)connect.
 */
function redisReady(redis: AppDeps['redis'], timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`not connected (${redis.status})`));
    }, timeoutMs);
    redis.once('ready', onReady);
  });
}

async function check(fn: () => Promise<unknown>, label: string): Promise<'ok' | string> {
  try {
    await withTimeout(fn(), label);
    return 'ok';
  } catch (error) {
    return `down: ${(error as Error).message}`;
  }
}

/**
 * GET /api/v1/health: 200 when every dependency answers, 503 when one does not. Anyone (a load
 * balancer, the deploy scripts' readiness poll) gets the overall status only; which dependency
 * failed, with its driver's error text, and the queue counts are for a superuser's token, since they
 * tell an outsider about the deployment and its load.
 */
export async function healthRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/health', { config: { access: 'public' } }, async (request, reply) => {
    const [postgres, redis, clickhouse] = await Promise.all([
      check(() => deps.pg.query('SELECT 1'), 'postgres'),
      check(async () => {
        await redisReady(deps.redis, 1_500);
        await deps.redis.ping();
      }, 'redis'),
      check(async () => {
        const result = await deps.clickhouse.ping();
        if (!result.success) throw result.error;
      }, 'clickhouse'),
    ]);
    const ok = postgres === 'ok' && redis === 'ok' && clickhouse === 'ok';
    if (!request.principal?.superuser) {
      return reply.status(ok ? 200 : 503).send(ok ? { status: 'ok' } : { status: 'degraded', error: 'Service unavailable' });
    }
    const queues: Record<string, { waiting: number; active: number; failed: number }> = {};
    // Reported, not judged: the platform is correct without it, but an operator should see it.
    let redisConfig: RedisFitness | null = null;
    if (redis === 'ok') {
      redisConfig = await withTimeout(inspectRedis(deps.redis), 'redis config').catch(() => null);
      for (const queue of Object.values(deps.queues)) {
        const name = queue.name;
        try {
          const counts: Record<string, number> = await withTimeout(queue.getJobCounts('waiting', 'active', 'failed', 'delayed', 'prioritized'), name);
          queues[name] = { waiting: (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0), active: counts.active ?? 0, failed: counts.failed ?? 0 };
        } catch {
          // Counted as a redis problem below only if the ping also failed; a slow count is not fatal.
        }
      }
    }
    // Audit events not stored yet: a backlog that grows, or ages, means the relay or the audit-worker is stuck.
    let auditOutbox: { pending: number; oldest_seconds: number } | null = null;
    if (postgres === 'ok') {
      try {
        const { rows } = await withTimeout(deps.pg.query<{ pending: number; oldest_seconds: number }>(
          `SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_seconds FROM audit_outbox`,
        ), 'audit outbox');
        auditOutbox = { pending: rows[0]!.pending, oldest_seconds: Math.round(rows[0]!.oldest_seconds) };
      } catch {
        // A slow count is not fatal; the PostgreSQL check above says whether the database answers.
      }
    }
    const failing = Object.entries({ postgres, redis, clickhouse }).filter(([, s]) => s !== 'ok').map(([n]) => n);
    return reply.status(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'degraded',
      ...(ok ? {} : { error: `Unavailable: ${failing.join(', ')}` }),
      postgres, redis, clickhouse, queues, audit_outbox: auditOutbox,
      ...(redisConfig ? { redis_config: redisConfig } : {}),
    });
  });
}
