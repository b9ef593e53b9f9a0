/**
 * A killed alert worker neither loses nor doubles a firing. The worker runs as a real process; the
 * test holds a lock on alert_events so the worker is caught inside its evaluation transaction (it
 * waits on the lock after recording the announcement as applied), kills it with SIGKILL there, and
 * starts another, which claims the unacknowledged announcement and applies it. The same announcement
 * applied once more changes nothing.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { POINTS_STORED_STREAM, parsePointsStoredEntries } from '@bioprocess/shared/server/points-stored';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { children, createPlant, createTestContext, exited, killHard, spawnProcess, startWorker, stopGently, type Plant, type TestContext } from '../support/index.ts';
import { until } from '../../../shared/test/support/until.ts';
import { ALERT_CONSUMER_GROUP } from '../../src/alerts/announcement-consumer.ts';
import { AlertEvaluator } from '../../src/alerts/evaluator.ts';

const MINUTE = 60_000;
const WORKER = 'api/src/alerts/worker-main.ts';
/** Spawned workers start a process each (module loading on a busy machine): more than an in-process worker. */
const PROCESS_WAIT_MS = 90_000;

describe('a killed alert worker', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let plant: Plant;
  let startMs: number;

  beforeAll(async () => {
    ctx = await createTestContext({ DEV_OUTBOX: 'true' });
    ingest = startWorker(ctx);
    plant = await createPlant(ctx, 1);
    startMs = Date.now() - 60 * MINUTE;
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, 'Crash run', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    await ctx.deps.pg.query(
      `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time) VALUES ($1, $2, 'fermentation', $3, to_timestamp($4 / 1000.0))`,
      [plant.organizationId, run.rows[0].id, plant.equipmentId, startMs]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => killHard(child)));
    await ingest?.close();
    await ctx?.close();
  });

  const count = async (sql: string, params: unknown[] = []) => Number((await ctx.deps.pg.query(sql, params)).rows[0].n);
  /** The group exists once a worker started reading; announcements from then on are the group's. */
  const groupExists = async () => {
    const groups = await ctx.deps.redis.xinfo('GROUPS', POINTS_STORED_STREAM(ctx.env.QUEUE_PREFIX)).catch(() => []) as unknown[][];
    return groups.some((entry) => entry[entry.indexOf('name') + 1] === ALERT_CONSUMER_GROUP);
  };
  const pending = async () => {
    const summary = await ctx.deps.redis.xpending(POINTS_STORED_STREAM(ctx.env.QUEUE_PREFIX), ALERT_CONSUMER_GROUP) as [number, ...unknown[]];
    return Number(summary[0]);
  };

  it('killed inside its evaluation transaction, the next worker applies the announcement: one firing, one email', { timeout: 300_000 }, async () => {
    const rule = await ctx.request({
      method: 'POST', url: '/api/v1/alert-rules', token: plant.editor.token,
      payload: { name: 'Hot', instrument_type: 'temperature', condition: { kind: 'threshold', direction: 'above', value: 40 }, email_user_ids: [plant.editor.id] },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const workerEnv = { ALERT_CLAIM_IDLE_MS: '500', ALERT_SILENCE_CHECK_MS: '3600000', ALERT_RELAY_MS: '200', DEV_OUTBOX: 'true' };
    const first = spawnProcess(ctx, WORKER, workerEnv);
    await until('the first worker\'s consumer group', async () => (await groupExists()), PROCESS_WAIT_MS);

    const blocker = new pg.Client({ connectionString: ctx.env.DATABASE_URL });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE alert_events IN SHARE ROW EXCLUSIVE MODE');
    const posted = await ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: [{ ts: startMs + MINUTE, instrument_id: plant.instrumentIds[0], value: 30 }, { ts: startMs + 2 * MINUTE, instrument_id: plant.instrumentIds[0], value: 45 }] },
    });
    expect(posted.statusCode, posted.body).toBe(200);
    await until('the worker waiting inside its transaction', async () => (await count(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'alert_events' AND NOT l.granted`)) === 1, PROCESS_WAIT_MS);
    await killHard(first);
    await blocker.query('ROLLBACK');
    await blocker.end();
    expect(await count('SELECT count(*)::int AS n FROM alert_events')).toBe(0);
    expect(await pending()).toBe(1);

    const second = spawnProcess(ctx, WORKER, workerEnv);
    await until('the firing', async () => (await count('SELECT count(*)::int AS n FROM alert_events')) === 1, PROCESS_WAIT_MS);
    await until('the announcement acknowledged', async () => (await pending()) === 0, PROCESS_WAIT_MS);
    await until('the email', async () => (await count(`SELECT count(*)::int AS n FROM dev_outbox WHERE subject LIKE 'Alert:%'`)) >= 1, PROCESS_WAIT_MS);
    await stopGently(second);
    await exited(second);

    // The announcement delivered once more (as after a worker killed between commit and acknowledgement).
    const raw = await ctx.deps.redis.xrange(POINTS_STORED_STREAM(ctx.env.QUEUE_PREFIX), '-', '+') as Array<[string, string[]]>;
    const announcements = parsePointsStoredEntries(raw).filter((entry) => entry.organizationId === plant.organizationId);
    expect(announcements).toHaveLength(1);
    const clickhouse = createClickHouse(ctx.env.CLICKHOUSE_URL, ctx.env.CLICKHOUSE_DATABASE);
    const evaluator = new AlertEvaluator({ pg: ctx.deps.pg, clickhouse, logger: createLogger('alert-test', 'silent') });
    expect(await evaluator.apply(announcements[0]!)).toEqual({ applied: false, fired: 0, resolved: 0 });
    await clickhouse.close();

    expect(await count('SELECT count(*)::int AS n FROM alert_events')).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM alert_notifications')).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM dev_outbox WHERE subject LIKE 'Alert:%'`)).toBe(1);
  });
});
