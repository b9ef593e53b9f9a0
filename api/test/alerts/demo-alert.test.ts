/**
 * The demo's alert: on a fresh seed, with the alert worker running, the rule on the running
 * fed-batch's dissolved oxygen fires from the seeded readings and its email is in the dev outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@bioprocess/shared/server/logger';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createTestContext, startWorker, type TestContext } from '../support/index.ts';
import { until } from '../../../shared/test/support/until.ts';
import { seedDemoMetadata, seedDemoTimeSeries } from '../../src/demo/seed.ts';
import { DEMO_ALERT_RULE, prepareDemoAlerts } from '../../src/demo/demo-alerts.ts';
import { startAlertWorker, type AlertWorker } from '../../src/alerts/worker.ts';

/** The demo seeds days of readings before its rule can fire: far longer than one test's feed. */
const DEMO_WAIT_MS = 240_000;

describe('the demo alert', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let alerts: AlertWorker | undefined;

  beforeAll(async () => {
    ctx = await createTestContext({ DEV_OUTBOX: 'true' });
    ingest = startWorker(ctx);
  });
  afterAll(async () => {
    await alerts?.close();
    await ingest?.close();
    await ctx?.close();
  });

  it('fires on the running fed-batch\'s seeded readings, though the alert worker starts after the seed posted them, and emails the demo admin', { timeout: 300_000 }, async () => {
    const plan = await seedDemoMetadata(ctx.deps);
    if (!plan) throw new Error('expected a fresh seed');
    await prepareDemoAlerts(ctx.deps);
    await seedDemoTimeSeries(ctx.app, ctx.deps, plan);
    alerts = startAlertWorker(ctx.env, { ALERT_CLAIM_IDLE_MS: 30_000, ALERT_SILENCE_CHECK_MS: 3_600_000, ALERT_RELAY_MS: 200, ALERT_EVALUATE: true },
      createLogger('alert-worker-test', ctx.env.LOG_LEVEL));
    const fired = await until('a firing of the demo rule', async () => {
      const { rows } = await ctx.deps.pg.query(
        `SELECT e.id, e.run_id FROM alert_events e JOIN alert_rules r ON r.id = e.rule_id WHERE r.name = $1 AND r.organization_id = $2 ORDER BY e.id LIMIT 1`,
        [DEMO_ALERT_RULE.name, plan.organizationId]);
      return rows[0];
    }, DEMO_WAIT_MS);
    const running = plan.unitOperations.find((operation) => operation.endMs === null && operation.spec.simulate === 'fed-batch')!;
    const { rows } = await ctx.deps.pg.query('SELECT run_id FROM unit_operations WHERE id = $1', [running.id]);
    expect(Number(fired.run_id)).toBe(Number(rows[0].run_id));
    await until('the email', async () => {
      const outbox = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM dev_outbox WHERE lower("to") = lower($1) AND subject = $2`, [ctx.env.DEMO_EMAIL, `Alert: ${DEMO_ALERT_RULE.name}`]);
      return outbox.rows[0].n >= 1;
    }, DEMO_WAIT_MS);
  });
});
