/**
 * The ingest sweeper: spooled files and stored bulk data that finished or abandoned jobs left are
 * removed (at worker start and then periodically), and a job that no live worker drives any more is
 * delivered again, or failed once it stayed so past the retry limit, while a job a live worker holds
 * is left alone.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '@bioprocess/shared/queues';
import { createLogger } from '@bioprocess/shared/server/logger';
import { stuckJobMessage } from '@bioprocess/shared/ingest/retry-policy';
import { bulkSpoolFolder, readSpooledPart, spoolBulkData } from '@bioprocess/shared/server/bulk-spool';
import { startSweeper, SPOOL_GRACE_MS, type Sweeper } from '../src/sweeper.ts';
import { createPlant, createTestContext, feedPoints, startWorker, type TestContext, waitForJobState } from '@bioprocess/api/test-support';

async function until(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('ingest sweeper', () => {
  let ctx: TestContext;
  let redis: Redis;

  beforeAll(async () => {
    ctx = await createTestContext();
    redis = new Redis(ctx.env.REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    redis?.disconnect();
    await ctx?.close();
  });

  const insertJob = async (organizationId: number, state: string, request: Record<string, unknown>) => {
    const id = randomUUID();
    await ctx.deps.pg.query(
      `INSERT INTO ingest_jobs (id, organization_id, kind, state, version_seq, request) VALUES ($1, $2, 'csv', $3, nextval('time_series_version_seq'), $4)`,
      [id, organizationId, state, JSON.stringify(request)]);
    return id;
  };
  const spoolFile = (ageMs = 0) => {
    const file = path.resolve(ctx.env.UPLOAD_DIR, `${randomUUID()}.csv`);
    writeFileSync(file, 'time,v\n');
    if (ageMs > 0) utimesSync(file, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
    return file;
  };

  it('removes spooled files and stored data of finished or vanished jobs at worker start and then periodically, keeping what unfinished jobs need', async () => {
    const organizationId = await ctx.createOrganization();
    const [completedFile, failedFile, pendingFile, oldOrphan, freshOrphan] = [spoolFile(), spoolFile(), spoolFile(), spoolFile(SPOOL_GRACE_MS + 60_000), spoolFile()];
    const other = path.resolve(ctx.env.UPLOAD_DIR, 'notes.txt');
    writeFileSync(other, 'not an upload');
    utimesSync(other, new Date(Date.now() - 2 * SPOOL_GRACE_MS), new Date(Date.now() - 2 * SPOOL_GRACE_MS));
    const completed = await insertJob(organizationId, 'completed', { file_path: completedFile });
    await insertJob(organizationId, 'failed', { file_path: failedFile });
    const pending = await insertJob(organizationId, 'queued', { file_path: pendingFile });
    await ctx.deps.pg.query(`INSERT INTO ingest_job_data (job_id, part, bytes) VALUES ($1, 0, '\\x01'), ($2, 0, '\\x02')`, [completed, pending]);

    const worker = startWorker(ctx, { INGEST_SWEEP_MS: 300 });
    try {
      await until(() => !existsSync(completedFile) && !existsSync(failedFile) && !existsSync(oldOrphan), 'the first sweep');
      expect([existsSync(pendingFile), existsSync(freshOrphan), existsSync(other)]).toEqual([true, true, true]);
      const { rows } = await ctx.deps.pg.query('SELECT job_id FROM ingest_job_data ORDER BY job_id');
      expect(rows.map((row) => row.job_id)).toEqual([pending]);

      // Later leftovers go at a later pass.
      const lateOrphan = spoolFile(SPOOL_GRACE_MS + 60_000);
      await ctx.deps.pg.query("UPDATE ingest_jobs SET state = 'failed', finished_at = now() WHERE id = $1", [pending]);
      await until(() => !existsSync(lateOrphan) && !existsSync(pendingFile), 'a periodic sweep');
      expect(existsSync(freshOrphan)).toBe(true);
      await until(async () => (await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_job_data')).rows[0].n === 0, 'the stored data of the failed job');
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('removes the spooled data of large bulk posts whose job finished or that no job names after the grace, keeping what unfinished jobs need', async () => {
    const organizationId = await ctx.createOrganization();
    const spooled = async (jobId: string, ageMs = 0) => {
      await spoolBulkData(ctx.env.UPLOAD_DIR, jobId, [{ part: 0, bytes: new Uint8Array([1, 2, 3]) }]);
      const folder = path.join(bulkSpoolFolder(ctx.env.UPLOAD_DIR), jobId);
      if (ageMs > 0) utimesSync(folder, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
      return folder;
    };
    const completed = await insertJob(organizationId, 'completed', {});
    const running = await insertJob(organizationId, 'running', {});
    const [completedFolder, runningFolder, oldOrphan, freshOrphan] = [
      await spooled(completed), await spooled(running), await spooled(randomUUID(), SPOOL_GRACE_MS + 60_000), await spooled(randomUUID()),
    ];
    const worker = startWorker(ctx, { INGEST_SWEEP_MS: 300 });
    try {
      await until(() => !existsSync(completedFolder) && !existsSync(oldOrphan), 'the sweep of spooled bulk data');
      expect([existsSync(runningFolder), existsSync(freshOrphan)]).toEqual([true, true]);
      expect(await readSpooledPart(ctx.env.UPLOAD_DIR, running, 0)).toEqual(Buffer.from([1, 2, 3]));
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('delivers again a job whose worker died holding it, fails one abandoned past the retry limit, and leaves alone one a live worker holds', async () => {
    const plant = await createPlant(ctx, 3);
    const post = async (instrumentId: number) => {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token,
        payload: { data: feedPoints(instrumentId, 0, 1_000) } });
      expect(response.statusCode).toBe(202);
      return response.headers['x-ingest-job-id'] as string;
    };
    const [abandoned, longAbandoned, held] = [await post(plant.instrumentIds[0]!), await post(plant.instrumentIds[1]!), await post(plant.instrumentIds[2]!)];
    const bulkQueue = ctx.deps.queues.ingestBulk;
    // Queued in their organisation's turn (shared/src/server/fair-turns.ts): BullMQ's prioritized set.
    await until(async () => (await bulkQueue.getPrioritizedCount()) === 3, 'the three deliveries');

    // Workers that take a delivery each and die with it (their locks lapse), and one that stays alive.
    const takeDelivery = async (jobId: string, lockDuration: number) => {
      const connection = new Redis(ctx.env.REDIS_URL, { maxRetriesPerRequest: null });
      const taker = new Worker(QUEUE_NAMES.ingestBulk, null, { connection, prefix: ctx.env.QUEUE_PREFIX, lockDuration, autorun: false });
      let entry = await taker.getNextJob(`token-${jobId}`);
      while (entry && entry.id !== `${jobId}-c0`) {
        // Taken out of order: hand it back and try again.
        await entry.moveToDelayed(Date.now(), `token-${jobId}`);
        entry = await taker.getNextJob(`token-${jobId}`);
      }
      expect(entry?.id).toBe(`${jobId}-c0`);
      return { close: async () => { await taker.close(true); connection.disconnect(); } };
    };
    const takers = [await takeDelivery(abandoned, 300), await takeDelivery(longAbandoned, 300), await takeDelivery(held, 120_000)];
    await ctx.deps.pg.query("UPDATE ingest_jobs SET state = 'running', updated_at = now() - interval '10 minutes' WHERE id = ANY($1::uuid[])", [[abandoned, held]]);
    await ctx.deps.pg.query("UPDATE ingest_jobs SET state = 'running', updated_at = now() - interval '2 hours' WHERE id = $1", [longAbandoned]);
    await new Promise((resolve) => setTimeout(resolve, 600));
    for (const taker of takers) await taker.close();

    let sweeper: Sweeper | undefined;
    try {
      sweeper = startSweeper({
        pg: ctx.deps.pg, queues: ctx.deps.queues, redis, logger: createLogger('sweeper-test', 'silent'), uploadDir: ctx.env.UPLOAD_DIR,
        intervalMs: 3_600_000, quietMs: 60_000, retryMinutes: 60,
      });
      await sweeper.pass();
    } finally {
      await sweeper?.stop();
    }
    expect(await (await bulkQueue.getJob(`${abandoned}-c0`))?.getState()).toBe('prioritized');
    expect(await (await bulkQueue.getJob(`${held}-c0`))?.getState()).toBe('active');
    expect(await bulkQueue.getJob(`${longAbandoned}-c0`)).toBeUndefined();
    const { rows } = await ctx.deps.pg.query<{ id: string; state: string; error: string | null }>(
      'SELECT id, state, error FROM ingest_jobs WHERE id = ANY($1::uuid[])', [[abandoned, longAbandoned, held]]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(abandoned)).toMatchObject({ state: 'running' });
    expect(byId.get(longAbandoned)).toMatchObject({ state: 'failed', error: stuckJobMessage(60) });
    expect(byId.get(held)).toMatchObject({ state: 'running' });
    const { rows: data } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_job_data WHERE job_id = $1', [longAbandoned]);
    expect(data[0].n).toBe(0);

    // The delivered-again job completes with its points, once.
    await (await bulkQueue.getJob(`${held}-c0`))?.remove().catch(() => undefined);
    const worker = startWorker(ctx);
    try {
      expect((await waitForJobState(ctx, plant.editor.token, abandoned, 60_000)).state).toBe('completed');
    } finally {
      await worker.close();
    }
    const stored = await ctx.deps.clickhouse.query({
      query: `SELECT count() FROM points WHERE organization_id = ${plant.organizationId} AND instrument_id = ${plant.instrumentIds[0]} AND is_deleted = 0`,
      format: 'JSONCompact',
    });
    expect(Number((await stored.json<[string]>()).data[0]![0])).toBe(1_000);
  }, 90_000);
});
