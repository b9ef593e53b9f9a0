/**
 * The demo's alert rule: dissolved oxygen of the running fed-batch below 30 % for ten minutes, emailed
 * to the demo admin. The seeded history of that run dips under 30 % while the stirrer cascade catches
 * up, so on a fresh `npm start` the rule fires (and resolves) as the seed's readings are stored, and
 * the live feed keeps it watched. The consumer group is made before the readings are posted, so the
 * alert worker evaluates them even when it starts after the seed.
 */
import type { PoolClient } from '@bioprocess/shared/server/postgres';
import type { AppDeps } from '../platform/deps.ts';
import { createRedis } from '@bioprocess/shared/server/redis';
import { runIdOfUnitOperation } from '@bioprocess/shared/server/unit-operations-repository';
import { ensureAlertConsumerGroup } from '../alerts/announcement-consumer.ts';

export const DEMO_ALERT_RULE = {
  name: 'Dissolved oxygen low',
  instrument_type: 'dissolved_o2',
  condition: { kind: 'threshold', direction: 'below', value: 30, hold_seconds: 600 },
} as const;

/** The rule watches the run of the running unit operation; without that unit operation there is no rule. */
export async function insertDemoAlertRule(client: PoolClient, organizationId: number, runningUnitOperationId: number, adminUserId: number): Promise<void> {
  const runId = await runIdOfUnitOperation(client, organizationId, runningUnitOperationId);
  if (runId === null) return;
  await client.query(
    `INSERT INTO alert_rules (organization_id, name, instrument_type, run_id, condition, email_user_ids, created_by)
     VALUES ($1, $2, $3, $4, $5, ARRAY[$6::bigint], $6)`,
    [organizationId, DEMO_ALERT_RULE.name, DEMO_ALERT_RULE.instrument_type, runId, JSON.stringify(DEMO_ALERT_RULE.condition), adminUserId]);
}

/**
 * The stream's consumer group, before the seed posts readings. A connection of its own that waits for
 * Redis (the api's fails fast, and at start-up may not be connected yet); a Redis that does not answer
 * within a few attempts only costs the seeded history's alerts.
 */
export async function prepareDemoAlerts(deps: Pick<AppDeps, 'env' | 'logger'>): Promise<void> {
  const redis = createRedis(deps.env.REDIS_URL, { maxRetriesPerRequest: 5 });
  try {
    await ensureAlertConsumerGroup(redis, deps.env.QUEUE_PREFIX);
  } catch (error) {
    deps.logger.warn({ err: error }, 'alert consumer group not prepared; the demo history may not be evaluated');
  } finally {
    redis.disconnect();
  }
}
