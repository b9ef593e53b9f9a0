/**
 * The audit trail's durability: an event is written in the transaction of its change, survives a
 * Redis that loses its queue (flushed, or down across an api restart), and is stored exactly once, in
 * the order of the changes, by the audit-worker once it runs. A Redis of the test's own is flushed and
 * killed, never the shared one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import type { InjectOptions } from 'fastify';
import { UnrecoverableError, Worker } from 'bullmq';
import { QUEUE_NAMES } from '@bioprocess/shared/queues';
import { createRedis } from '@bioprocess/shared/server/redis';
import type { ApiEnv } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { buildApp } from '../../src/app.ts';
import { closeDeps, createDeps } from '../../src/platform/deps.ts';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { OwnRedis } from '../support/own-redis.ts';
import { createFacility } from '../metadata/fixtures.ts';
import { recordAudit } from '../../src/audit/record.ts';
import { outboxCount, startWorkerFor, waitFor } from '../support/audit-drain.ts';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';

const OWN_REDIS_PORT = 6410;
const CHANGES = 1_000;
const TAKEN_NAME = 'Name already taken';

/** Another api process on the same database and Redis: its own pools, queues and outbox relay. */
async function startApi(env: ApiEnv) {
  const deps = createDeps(env, createLogger('test', env.LOG_LEVEL));
  const app = await buildApp(deps);
  await app.ready();
  return {
    deps,
    request: ({ token, ...options }: InjectOptions & { token?: string }) =>
      app.inject({ ...options, headers: token ? { authorization: `Bearer ${token}` } : {} }),
    async close() {
      await app.close();
      await closeDeps(deps);
    },
  };
}

async function queuedAuditJobs(ctx: TestContext): Promise<number> {
  const counts = await ctx.deps.queues.audit.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

describe('audit outbox: exactly once, in order, whatever Redis does', () => {
  const redis = new OwnRedis(OWN_REDIS_PORT);
  const contexts: TestContext[] = [];
  const workers: AuditWorkerHandle[] = [];

  beforeAll(async () => {
    await redis.start();
  });
  afterAll(async () => {
    await Promise.allSettled(workers.map((worker) => worker.close()));
    await redis.start();
    await Promise.allSettled(contexts.map((ctx) => ctx.close()));
    await redis.close();
  });

  async function context(): Promise<TestContext> {
    // Short relay delays so lost jobs are handed over again within the test's patience.
    const ctx = await createTestContext({ REDIS_URL: redis.url, AUDIT_RELAY_POLL_MS: '100', AUDIT_RELAY_RESEND_MS: '3000' });
    contexts.push(ctx);
    return ctx;
  }

  it(`stores ${CHANGES} changes made without an audit-worker and through two Redis flushes exactly once, in order, and nothing of a rolled-back change`, async () => {
    const ctx = await context();
    const second = await startApi(ctx.env);
    try {
      const organizationId = await ctx.createOrganization();
      const admin = await ctx.createUser({ organizationId, role: 'admin' });
      const facility = await createFacility(ctx, admin.token, { name: 'Audited plant' });
      await createFacility(ctx, admin.token, { name: TAKEN_NAME });
      // Checked at COMMIT, after the handler has written the change and its audit event: a rename to
      // a taken name fails there and the whole transaction rolls back.
      await ctx.deps.pg.query(
        'ALTER TABLE facilities ADD CONSTRAINT facilities_unique_name UNIQUE (organization_id, name) DEFERRABLE INITIALLY DEFERRED',
      );

      for (let change = 1; change <= CHANGES; change += 1) {
        // The two api processes take turns, so both relays hand over rows of the same outbox.
        const api = change % 2 === 0 ? second.request : ctx.request;
        const response = await api({ method: 'PUT', url: `/api/v1/facilities/${facility.id}`, token: admin.token, payload: { address: `change ${change}` } });
        expect(response.statusCode).toBe(200);
        if (change === CHANGES / 2) {
          const refused = await api({ method: 'PUT', url: `/api/v1/facilities/${facility.id}`, token: admin.token, payload: { name: TAKEN_NAME } });
          expect(refused.statusCode).toBeGreaterThanOrEqual(400);
          await redis.flushAll();
        }
      }
      const recorded = CHANGES + 2;
      expect(await outboxCount(ctx)).toBe(recorded);

      // Everything handed to the queue, then the queue lost again.
      await waitFor(async () => (await queuedAuditJobs(ctx)) === recorded, 'every event to be queued', 30_000);
      await redis.flushAll();
      const before = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM audit_logs');
      expect(before.rows[0].n).toBe(0);

      workers.push(startWorkerFor(ctx));
      await waitFor(async () => (await outboxCount(ctx)) === 0, 'the outbox to empty', 60_000);

      const stored = await ctx.deps.pg.query(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS events FROM audit_logs`);
      expect(stored.rows[0]).toEqual({ n: recorded, events: recorded });
      const updates = await ctx.deps.pg.query(
        `SELECT changes -> 'after' ->> 'address' AS address, changes -> 'after' ->> 'name' AS name
           FROM audit_logs WHERE resource_type = 'facility' AND action = 'update' ORDER BY created_at, change_seq, id`,
      );
      expect(updates.rows.map((row) => row.address)).toEqual(Array.from({ length: CHANGES }, (_, index) => `change ${index + 1}`));
      expect(updates.rows.some((row) => row.name === TAKEN_NAME)).toBe(false);
      const renamed = await ctx.deps.pg.query('SELECT name FROM facilities WHERE id = $1', [facility.id]);
      expect(renamed.rows[0].name).toBe('Audited plant');

      // The order the console and the export show.
      const exported = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=csv', token: admin.token });
      const addresses = (parse(exported.body, { columns: true }) as Record<string, string>[])
        .filter((record) => record.resource_type === 'facility' && record.action === 'update')
        .map((record) => JSON.parse(record.changes!).after.address as string);
      expect(addresses).toEqual(Array.from({ length: CHANGES }, (_, index) => `change ${index + 1}`));
    } finally {
      await second.close();
    }
  }, 300_000);

  it('loses no event when the api restarts while Redis is down', async () => {
    const ctx = await context();
    const organizationId = await ctx.createOrganization();
    const admin = await ctx.createUser({ organizationId, role: 'admin' });
    const facility = await createFacility(ctx, admin.token);
    // From here the test context only reads; two api processes of their own make the changes.
    await ctx.app.close();
    const edit = async (api: { request: TestContext['request'] }, address: string) => {
      const response = await api.request({ method: 'PUT', url: `/api/v1/facilities/${facility.id}`, token: admin.token, payload: { address } });
      expect(response.statusCode).toBe(200);
    };
    const first = await startApi(ctx.env);
    await edit(first, 'before the outage');
    await waitFor(async () => (await queuedAuditJobs(ctx)) === 2, 'the first events to be queued');

    await redis.kill();
    for (let change = 1; change <= 20; change += 1) await edit(first, `during the outage ${change}`);
    expect(await outboxCount(ctx)).toBe(22);
    await first.close();

    // Redis comes back empty; the next api process relays what the outbox kept.
    await redis.start();
    const restarted = await startApi(ctx.env);
    try {
      await edit(restarted, 'after the restart');
      workers.push(startWorkerFor(ctx));
      await waitFor(async () => (await outboxCount(ctx)) === 0, 'the outbox to empty', 30_000);
      const { rows } = await ctx.deps.pg.query(
        `SELECT changes -> 'after' ->> 'address' AS address FROM audit_logs
          WHERE resource_type = 'facility' AND action = 'update' ORDER BY created_at, change_seq, id`,
      );
      expect(rows.map((row) => row.address)).toEqual([
        'before the outage', ...Array.from({ length: 20 }, (_, index) => `during the outage ${index + 1}`), 'after the restart',
      ]);
      const total = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM audit_logs');
      expect(total.rows[0].n).toBe(23);
    } finally {
      await restarted.close();
    }
  });

  it('retries from the outbox an event whose job failed for good', async () => {
    const ctx = await context();
    await recordAudit(ctx.deps.pg, null, { event_type: 'test.failed_for_good', action: 'create' });
    await waitFor(async () => (await queuedAuditJobs(ctx)) === 1, 'the event to be queued');

    // A worker takes the job and fails it without retries (what a job stalled too often comes to).
    const connection = createRedis(ctx.env.REDIS_URL);
    const taker = new Worker(QUEUE_NAMES.audit, null, { connection, prefix: ctx.env.QUEUE_PREFIX });
    try {
      const job = await taker.getNextJob('crashing-worker');
      expect(job).toBeTruthy();
      await job!.moveToFailed(new UnrecoverableError('worker lost'), 'crashing-worker');
      expect(await ctx.deps.queues.audit.getFailedCount()).toBe(1);
    } finally {
      await taker.close();
      connection.disconnect();
    }

    workers.push(startWorkerFor(ctx));
    await waitFor(async () => (await outboxCount(ctx)) === 0, 'the outbox to empty', 30_000);
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM audit_logs WHERE event_type = 'test.failed_for_good'`);
    expect(rows[0].n).toBe(1);
  });
});
