/**
 * A delivery of a bulk post whose job already finished (an earlier run committed its completion, then
 * lost the answer to a cut connection and ran again) writes nothing more and deletes the post's stored
 * data, rather than leaving it for the sweeper's next pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlant, createTestContext, startWorker, type Plant, type TestContext } from '@bioprocess/api/test-support';

const T0 = Date.UTC(2024, 9, 3, 6, 0, 0);

describe('a delivery of a bulk post already finished', () => {
  let ctx: TestContext;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 1);
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('deletes its stored data and writes nothing', async () => {
    // The worker's sweeper deletes finished jobs' data at start-up and then once an hour: that pass is over
    // before the post, and the next does not come during the test.
    const worker = startWorker(ctx, { INGEST_SWEEP_MS: 3_600_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await ctx.deps.queues.ingestBulk.pause();
      const data = Array.from({ length: 20 }, (_, second) => ({ ts: T0 + second * 1_000, instrument_id: plant.instrumentIds[0], value: second }));
      const accepted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
      expect(accepted.statusCode).toBe(202);
      const { rows: [job] } = await ctx.deps.pg.query<{ id: string }>('SELECT id FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId]);
      // What the earlier run left: the job completed, its delivery still queued, its data still stored.
      await ctx.deps.pg.query("UPDATE ingest_jobs SET state = 'completed', finished_at = now() WHERE id = $1", [job!.id]);
      const storedData = async () => (await ctx.deps.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM ingest_job_data WHERE job_id = $1', [job!.id])).rows[0]!.n;
      expect(await storedData()).toBeGreaterThan(0);
      await ctx.deps.queues.ingestBulk.resume();
      const deadline = Date.now() + 15_000;
      while (await storedData() > 0) {
        if (Date.now() > deadline) throw new Error('the finished job\'s data was not deleted');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await ctx.deps.queues.ingestBulk.resume();
      await worker.close();
    }
    const points = await ctx.deps.clickhouse.query({ query: `SELECT count() FROM points WHERE organization_id = ${plant.organizationId}`, format: 'JSONCompact' });
    expect(Number((await points.json<[string]>()).data[0]![0])).toBe(0);
  });
});
