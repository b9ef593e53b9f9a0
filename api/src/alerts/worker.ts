/**
 * The alert worker: evaluates rules as announcements of stored points arrive (a member of the
 * stream's consumer group), checks no-data rules on a timer, relays due deliveries to their queue and
 * sends them. Tests start it in-process; the process entry is worker-main.ts.
 */
import type { z } from 'zod';
import { alertWorkerEnvSchema, type ApiEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool } from '@bioprocess/shared/server/postgres';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { createRedis } from '@bioprocess/shared/server/redis';
import { runPeriodically } from '@bioprocess/shared/server/periodic-pass';
import { AlertEvaluator } from './evaluator.ts';
import { AnnouncementConsumer } from './announcement-consumer.ts';
import { createDeliveryQueue, relayDueDeliveries, startDeliveryWorker } from './delivery.ts';

export { alertWorkerEnvSchema };
export type AlertWorkerEnv = z.infer<typeof alertWorkerEnvSchema>;

export interface AlertWorker {
  evaluator: AlertEvaluator;
  consumer: AnnouncementConsumer;
  relay: () => Promise<number>;
  close(): Promise<void>;
}

export function startAlertWorker(env: ApiEnv, alertEnv: AlertWorkerEnv, logger: Logger): AlertWorker {
  const pg = createPool(env.DATABASE_URL, 6);
  const clickhouse = createClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger);
  // XREADGROUP BLOCK holds its connection: the consumer has one of its own.
  const streamRedis = createRedis(env.REDIS_URL, {}, logger);
  const evaluator = new AlertEvaluator({ pg, clickhouse, logger });
  const queue = createDeliveryQueue(env, logger);
  const relayPass = runPeriodically(() => relayDueDeliveries(pg, queue), { intervalMs: alertEnv.ALERT_RELAY_MS, logger, name: 'alert delivery relay' });
  const consumer = new AnnouncementConsumer(streamRedis, { prefix: env.QUEUE_PREFIX, claimIdleMs: alertEnv.ALERT_CLAIM_IDLE_MS }, async (announcement) => {
    const outcome = await evaluator.apply(announcement);
    if (outcome.fired > 0) void relayPass.pass().catch(() => undefined);
  }, logger);
  const silence = alertEnv.ALERT_EVALUATE
    ? runPeriodically(async () => {
      if (await evaluator.checkSilence() > 0) await relayPass.pass();
    }, { intervalMs: alertEnv.ALERT_SILENCE_CHECK_MS, logger, name: 'alert no-data check' })
    : null;
  if (alertEnv.ALERT_EVALUATE) consumer.start();
  const deliveries = startDeliveryWorker({ env, pg, logger });
  return {
    evaluator,
    consumer,
    relay: () => relayPass.pass(),
    async close() {
      await Promise.allSettled([consumer.stop(), silence?.stop(), relayPass.stop()]);
      await Promise.allSettled([deliveries.close(), queue.close()]);
      streamRedis.disconnect();
      await Promise.allSettled([pg.end(), clickhouse.close()]);
    },
  };
}
