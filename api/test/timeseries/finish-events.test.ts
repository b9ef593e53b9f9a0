/**
 * Finished ingest jobs are announced to waiting requests through PostgreSQL LISTEN/NOTIFY (a trigger
 * on ingest_jobs). The waits here would otherwise sleep for ten minutes, longer than the test timeout,
 * so a test passes only when the announcement arrives.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createJobFinishEvents, type JobFinishEvents } from '../../src/ingest-jobs/finish-events.ts';
import { waitForJob } from '../../src/ingest-jobs/jobs.ts';
import { createTestContext, type TestContext } from '../support/test-context.ts';

const TEN_MINUTES = 10 * 60_000;

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('ingest job finish announcements', () => {
  let ctx: TestContext;
  let events: JobFinishEvents;
  let organizationId: number;

  const newJob = async () => {
    const id = randomUUID();
    await ctx.deps.pg.query(
      "INSERT INTO ingest_jobs (id, organization_id, kind, version_seq) VALUES ($1, $2, 'bulk', nextval('time_series_version_seq'))",
      [id, organizationId],
    );
    return id;
  };
  const finish = (id: string, state: 'running' | 'completed' | 'failed') =>
    ctx.deps.pg.query('UPDATE ingest_jobs SET state = $2 WHERE id = $1', [id, state]);

  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization();
    events = createJobFinishEvents(ctx.env.DATABASE_URL, createLogger('test', 'silent'), { listeningMs: TEN_MINUTES, degradedMs: 20 });
    events.wait(randomUUID(), 0).end(); // connects
    await until(() => events.listening);
  });
  afterAll(async () => {
    await events.close();
    await ctx.close();
  });

  it('wakes the waiter of a job when it completes or fails, not when it merely starts running', async () => {
    const completed = await newJob();
    const failed = await newJob();
    const completedWait = events.wait(completed, TEN_MINUTES);
    const failedWait = events.wait(failed, TEN_MINUTES);
    let completedWoken = false;
    void completedWait.woken.then(() => { completedWoken = true; });
    await finish(completed, 'running');
    await finish(failed, 'failed');
    await failedWait.woken;
    expect(completedWoken).toBe(false); // 'running' announced nothing; the later 'failed' was for another job
    await finish(completed, 'completed');
    await completedWait.woken;
  });

  it('waitForJob answers the finished row as soon as the job completes', async () => {
    const id = await newJob();
    const waiting = waitForJob(ctx.deps.pg, events, organizationId, id, TEN_MINUTES);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await finish(id, 'completed');
    expect((await waiting).state).toBe('completed');
  });

  it('keeps waits working while the connection is lost, then listens again', async () => {
    const id = await newJob();
    await ctx.deps.pg.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    await until(() => !events.listening);
    // Without announcements a wait polls (20 ms here): the job is still seen finishing.
    const waiting = waitForJob(ctx.deps.pg, events, organizationId, id, TEN_MINUTES);
    await finish(id, 'completed');
    expect((await waiting).state).toBe('completed');
    await until(() => events.listening);
    const later = await newJob();
    const laterWait = events.wait(later, TEN_MINUTES);
    await finish(later, 'completed');
    await laterWait.woken;
  });
});
