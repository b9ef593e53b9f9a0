/**
 * Bulk posts accepted together: the api records one-chunk posts arriving at the same time in one
 * statement and hands them to the worker as one delivery. Each post still has its own job (status,
 * idempotency, failure); every point is stored exactly once, also when the batch's delivery is lost
 * or one member's data is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_JOBS } from '@bioprocess/shared/queues';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { startWorker } from '../support/ingest.ts';
import { feedPoints, storedCounts, waitAllFinished } from '../support/pipeline.ts';

const POSTS = 24;
const POINTS_PER_POST = 50;

describe('bulk posts accepted together', () => {
  let ctx: TestContext;
  let plant: Plant;

  beforeAll(async () => {
    // Long enough that the first post to be recorded waits for the others however slow the machine.
    ctx = await createTestContext({ BULK_BATCH_WAIT_MS: '1000' });
  });
  afterAll(async () => {
    await ctx.close();
  });

  /** Posts `POSTS` feeds' readings at once (feed f writes instrument f % 3, its own seconds). */
  async function postTogether(firstSecond: number, headers: (feed: number) => Record<string, string> = () => ({})): Promise<string[]> {
    const answers = await Promise.all(Array.from({ length: POSTS }, (_, feed) => ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, headers: headers(feed),
      payload: { data: feedPoints(plant.instrumentIds[feed % 3]!, firstSecond + feed * POINTS_PER_POST, POINTS_PER_POST) },
    })));
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(202);
    return answers.map((answer) => String(answer.headers['x-ingest-job-id']));
  }

  async function batchesOf(jobIds: string[]): Promise<Map<string | null, number>> {
    const { rows } = await ctx.deps.pg.query<{ batch: string | null; n: number }>(
      "SELECT request->>'batch' AS batch, count(*)::integer AS n FROM ingest_jobs WHERE id = ANY($1::uuid[]) GROUP BY 1", [jobIds],
    );
    return new Map(rows.map((row) => [row.batch, row.n]));
  }

  async function queuedBatchDeliveries(): Promise<string[]> {
    const jobs = await ctx.deps.queues.ingestBulk.getJobs(['waiting', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.name === INGEST_JOBS.bulkBatch).map((job) => job.id!);
  }

  it('share one insert and one delivery, keep a job each, and store every point once', async () => {
    plant = await createPlant(ctx, 3);
    const jobIds = await postTogether(0);
    expect(new Set(jobIds).size).toBe(POSTS);
    const batches = await batchesOf(jobIds);
    expect([...batches.values()].some((count) => count > 1)).toBe(true);
    // The first post to be recorded finds the committer idle but the others being read: it waits for
    // them rather than going alone (a post alone has no batch).
    const { rows: [first] } = await ctx.deps.pg.query<{ batch: string | null }>(
      "SELECT request->>'batch' AS batch FROM ingest_jobs WHERE id = ANY($1::uuid[]) ORDER BY version_seq LIMIT 1", [jobIds]);
    expect(first!.batch).not.toBeNull();
    expect(batches.get(first!.batch)).toBeGreaterThan(1);
    expect((await queuedBatchDeliveries()).length).toBeGreaterThan(0);

    const worker = startWorker(ctx);
    try {
      await waitAllFinished(ctx, plant.organizationId);
    } finally {
      await worker.close();
    }
    const { rows } = await ctx.deps.pg.query<{ state: string; points: number }>(
      "SELECT state, (progress->>'points_written')::integer AS points FROM ingest_jobs WHERE id = ANY($1::uuid[])", [jobIds],
    );
    expect(rows.map((row) => [row.state, row.points])).toEqual(Array(POSTS).fill(['completed', POINTS_PER_POST]));
    expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: POSTS * POINTS_PER_POST, rows: POSTS * POINTS_PER_POST });
  });

  it('answer a repeated idempotency key within one batch with the first job, and store its points once', async () => {
    plant = await createPlant(ctx, 3);
    // Every feed sends the key of feed 0 (the same body, as a client retrying would).
    const answers = await Promise.all(Array.from({ length: 6 }, () => ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, headers: { 'idempotency-key': 'feed-0-window-0' },
      payload: { data: feedPoints(plant.instrumentIds[0]!, 0, POINTS_PER_POST) },
    })));
    expect(new Set(answers.map((answer) => answer.headers['x-ingest-job-id'])).size).toBe(1);
    const worker = startWorker(ctx);
    try {
      await waitAllFinished(ctx, plant.organizationId);
    } finally {
      await worker.close();
    }
    expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: POINTS_PER_POST, rows: POINTS_PER_POST });
  });

  it('are delivered again whole when the queue lost their batch, and a member whose data is gone fails alone', async () => {
    plant = await createPlant(ctx, 3);
    const jobIds = await postTogether(0);
    const deliveries = await queuedBatchDeliveries();
    expect(deliveries.length).toBeGreaterThan(0);
    // Lost from Redis, as after a restart without persistence.
    for (const delivery of deliveries) await ctx.deps.queues.ingestBulk.remove(delivery);
    const { rows: batched } = await ctx.deps.pg.query<{ id: string }>(
      "SELECT id FROM ingest_jobs WHERE id = ANY($1::uuid[]) AND request ? 'batch' ORDER BY id LIMIT 1", [jobIds],
    );
    const lost = batched[0]!.id;
    await ctx.deps.pg.query('DELETE FROM ingest_job_data WHERE job_id = $1', [lost]);

    const worker = startWorker(ctx, { INGEST_RECONCILE_MS: 300 });
    try {
      await waitAllFinished(ctx, plant.organizationId);
    } finally {
      await worker.close();
    }
    const { rows } = await ctx.deps.pg.query<{ id: string; state: string; error: string | null }>(
      'SELECT id, state, error FROM ingest_jobs WHERE id = ANY($1::uuid[])', [jobIds],
    );
    const failed = rows.filter((row) => row.state === 'failed');
    expect(failed.map((row) => row.id)).toEqual([lost]);
    expect(failed[0]!.error).toMatch(/data of this bulk post is missing/);
    expect(rows.filter((row) => row.state === 'completed')).toHaveLength(POSTS - 1);
    expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: (POSTS - 1) * POINTS_PER_POST, rows: (POSTS - 1) * POINTS_PER_POST });
  });
});
