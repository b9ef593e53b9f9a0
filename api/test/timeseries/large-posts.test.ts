/**
 * Large bulk posts (more than 5,000 points): their data is spooled to files and made durable before
 * the job row is committed, read by the worker from there and removed once the job is done; a replayed
 * idempotency key leaves no second copy, and nothing of them goes into PostgreSQL's job data.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkSpoolFolder } from '@bioprocess/shared/server/bulk-spool';
import { createPlant, createTestContext, feedPoints, startWorker, storedCounts, waitAllFinished, type Plant, type TestContext } from '../support/index.ts';

const POINTS = 12_000;

describe('large bulk posts', () => {
  let ctx: TestContext;
  let plant: Plant;

  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 2);
  });
  afterAll(async () => {
    await ctx.close();
  });

  const post = (headers: Record<string, string> = {}) => ctx.request({
    method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, headers,
    payload: { data: [...feedPoints(plant.instrumentIds[0]!, 0, POINTS / 2), ...feedPoints(plant.instrumentIds[1]!, 0, POINTS / 2)] },
  });
  const spooledFolders = () => (existsSync(bulkSpoolFolder(ctx.env.UPLOAD_DIR)) ? readdirSync(bulkSpoolFolder(ctx.env.UPLOAD_DIR)) : []);

  it('are spooled before the answer, written from the files, and leave nothing behind', async () => {
    const answer = await post({ 'idempotency-key': 'backfill-1' });
    expect(answer.statusCode, answer.body).toBe(202);
    const jobId = String(answer.headers['x-ingest-job-id']);
    // The same post again (a client retrying): the same job, and no second copy of its data.
    const again = await post({ 'idempotency-key': 'backfill-1' });
    expect(again.headers['x-ingest-job-id']).toBe(jobId);
    expect(spooledFolders()).toEqual([jobId]);
    expect(readdirSync(path.join(bulkSpoolFolder(ctx.env.UPLOAD_DIR), jobId)).sort()).toEqual(['part0']);
    const { rows } = await ctx.deps.pg.query<{ spooled: boolean; parts: number }>(
      "SELECT (request->>'spooled')::boolean AS spooled, (SELECT count(*)::integer FROM ingest_job_data WHERE job_id = $1) AS parts FROM ingest_jobs WHERE id = $1",
      [jobId],
    );
    expect(rows[0]).toEqual({ spooled: true, parts: 0 });

    const worker = startWorker(ctx);
    try {
      await waitAllFinished(ctx, plant.organizationId);
      expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: POINTS, rows: POINTS });
      // Removed once the job completed.
      const deadline = Date.now() + 10_000;
      while (spooledFolders().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(spooledFolders()).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});
