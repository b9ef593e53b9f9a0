/**
 * Fairness between organisations on the ingest queues, through the real HTTP server, Redis, PostgreSQL,
 * ClickHouse and in-process ingest-workers. Organisation A floods; organisation B's small upload,
 * small post and reads must not wait for A's backlog. Nothing here measures time: the order in which
 * jobs were taken is read back from each queue's own event stream, and the order in which they ran
 * from a log of the job rows' state changes (api/test/support/job-order.ts).
 *
 * - Turns: with A's uploads and deletions queued first, B's upload is the second job taken (behind at
 *   most one of A's queued jobs), on `ingest`; the same for B's small post behind A's large posts'
 *   chunks on `ingest-bulk`.
 * - Slots: while A's large uploads run, A holds one slot (INGEST_RUNNING_PER_ORGANIZATION) and B's
 *   upload takes the other at once; A's parked jobs are taken at most twice each (no spinning).
 */
import os from 'node:os';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clearQueueEvents, createPlant, createTestContext, createUnitOperation, logJobStates, mostAtOnce, multipartBody, queueEvents, readSeries, runsOfJobs,
  startWorker, takenInOrder, waitForJobState, writeCsv, type Plant, type TestContext,
} from '@bioprocess/api/test-support';

const T0 = Date.UTC(2024, 8, 1);

async function upload(ctx: TestContext, plant: Plant, unitOperationId: number, content: Buffer | string): Promise<string> {
  const mapping = { timestamp_column: 'time', columns: plant.instrumentIds.map((id, column) => ({ column: `c${column}`, instrument_id: id })) };
  const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'readings.csv', content });
  const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads`, token: plant.editor.token,
    headers: { 'content-type': contentType }, payload: body });
  expect(response.statusCode, response.body).toBe(202);
  return response.json().id as string;
}

function smallCsv(columns: number, rows: number, firstMs: number): string {
  return ['time,' + Array.from({ length: columns }, (_, column) => `c${column}`).join(','),
    ...Array.from({ length: rows }, (_, row) => `${new Date(firstMs + row * 1000).toISOString()},${Array.from({ length: columns }, () => row).join(',')}`)].join('\n');
}

describe('fairness between organisations on the ingest queues', () => {
  let ctx: TestContext;
  let flooder: Plant;
  let other: Plant;
  let flooderUnitOperation: number;
  let otherUnitOperation: number;
  const largeFile = path.join(os.tmpdir(), `bp-fairness-${process.pid}.csv`);
  const COLUMNS = 2;

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '100' });
    [flooder, other] = await Promise.all([createPlant(ctx, COLUMNS), createPlant(ctx, COLUMNS)]);
    [flooderUnitOperation, otherUnitOperation] = await Promise.all([createUnitOperation(ctx, flooder), createUnitOperation(ctx, other)]);
    await writeCsv(largeFile, 150_000, COLUMNS, T0);
  }, 120_000);
  afterAll(async () => {
    rmSync(largeFile, { force: true });
    await ctx.close();
  });

  it('takes the organisations in turns: a small upload waits behind at most one of a flooding organisation\'s queued uploads and deletions', async () => {
    await clearQueueEvents(ctx, 'ingest');
    const flooded: string[] = [];
    for (let index = 0; index < 4; index += 1) flooded.push(await upload(ctx, flooder, flooderUnitOperation, smallCsv(COLUMNS, 50, T0 + index * 3_600_000)));
    const deletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: flooder.editor.token,
      payload: { instrument_ids: flooder.instrumentIds, start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 60_000).toISOString() } });
    expect(deletion.statusCode, deletion.body).toBe(202);
    flooded.push(deletion.headers['x-ingest-job-id'] as string);
    const small = await upload(ctx, other, otherUnitOperation, smallCsv(COLUMNS, 10, T0));

    // Everything queued before a worker runs: one slot, so the order taken is the order run.
    const worker = startWorker(ctx, { WORKER_CONCURRENCY: 1 });
    try {
      for (const jobId of flooded) expect((await waitForJobState(ctx, flooder.editor.token, jobId)).state).toBe('completed');
      expect((await waitForJobState(ctx, other.editor.token, small)).state).toBe('completed');
    } finally {
      // Closing waits for BullMQ to record the last completions in the event stream.
      await worker.close();
    }
    const order = takenInOrder(await queueEvents(ctx, 'ingest')).map((delivery) => delivery.replace(/-(csv|delete)$/, ''));
    expect(order).toHaveLength(flooded.length + 1);
    // First come, first served would run it last, behind all five.
    expect(order.indexOf(small)).toBeLessThanOrEqual(1);
    const readings = await readSeries(ctx, other.viewer.token, { instrument_id: other.instrumentIds[0]! });
    expect(readings).toHaveLength(10);
  }, 180_000);

  it('lets a flooding organisation hold one slot: another organisation\'s upload starts at once while its large uploads run or wait', async () => {
    await clearQueueEvents(ctx, 'ingest');
    await logJobStates(ctx, 'ingest_jobs');
    const content = readFileSync(largeFile);
    const flooded: string[] = [];
    for (let index = 0; index < 3; index += 1) flooded.push(await upload(ctx, flooder, flooderUnitOperation, content));
    const worker = startWorker(ctx, { WORKER_CONCURRENCY: 2 });
    let small = '';
    try {
      // A's first upload is under way (and the others were taken and parked, or wait) before B uploads.
      for (;;) {
        const { rows } = await ctx.deps.pg.query<{ state: string }>('SELECT state FROM ingest_jobs WHERE id = $1', [flooded[0]]);
        if (rows[0]!.state !== 'queued') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      small = await upload(ctx, other, otherUnitOperation, smallCsv(COLUMNS, 10, T0));
      const smallJob = await waitForJobState(ctx, other.editor.token, small);
      expect(smallJob.state, smallJob.error ?? '').toBe('completed');
      // B's reads are answered meanwhile from its own data.
      expect(await readSeries(ctx, other.viewer.token, { instrument_id: other.instrumentIds[1]! })).toHaveLength(10);
      for (const jobId of flooded) expect((await waitForJobState(ctx, flooder.editor.token, jobId, 240_000)).state).toBe('completed');
    } finally {
      await worker.close();
    }
    const runs = await runsOfJobs(ctx);
    const floodedRuns = runs.filter((run) => flooded.includes(run.jobId)).sort((a, b) => a.from - b.from);
    const smallRun = runs.find((run) => run.jobId === small)!;
    expect(floodedRuns).toHaveLength(3);
    // One of A's uploads ran at a time, and B's started while A's first was still running: it waited
    // for none of A's queued uploads (without the cap A's second would hold the other slot).
    expect(mostAtOnce(runs, new Set(flooded))).toBe(1);
    expect(smallRun.from).toBeLessThan(floodedRuns[0]!.to);
    // A's waiting uploads were taken at most twice each (taken and parked, then promoted), not over and over.
    const floodedDeliveries = new Set(flooded.map((jobId) => `${jobId}-csv`));
    const picks = (await queueEvents(ctx, 'ingest')).filter((entry) => entry.event === 'active' && floodedDeliveries.has(entry.jobId)).length;
    expect(picks).toBeLessThanOrEqual(2 * flooded.length);
  }, 300_000);

  it('takes the organisations in turns on the bulk queue: a small post waits behind at most one chunk of another organisation\'s large posts', async () => {
    await clearQueueEvents(ctx, 'ingest-bulk');
    const largePost = (offsetMs: number) => ({
      data: flooder.instrumentIds.flatMap((instrument) => Array.from({ length: 30_000 }, (_, index) => ({ measured_at: T0 + offsetMs + index * 1000, instrument_id: instrument, float_value: index }))),
    });
    const flooded: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: flooder.editor.token, payload: largePost(index * 86_400_000),
        headers: { prefer: 'return=minimal' } });
      expect(response.statusCode, response.body).toBe(202);
      flooded.push(response.headers['x-ingest-job-id'] as string);
    }
    const smallPost = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: other.editor.token,
      payload: { data: [{ measured_at: T0 + 7 * 86_400_000, instrument_id: other.instrumentIds[0], float_value: 1 }] } });
    expect(smallPost.statusCode, smallPost.body).toBe(202);
    const small = smallPost.headers['x-ingest-job-id'] as string;

    const worker = startWorker(ctx, { INGEST_BULK_CONCURRENCY: 1 });
    try {
      for (const jobId of flooded) expect((await waitForJobState(ctx, flooder.editor.token, jobId)).state).toBe('completed');
      expect((await waitForJobState(ctx, other.editor.token, small)).state).toBe('completed');
    } finally {
      await worker.close();
    }
    const order = takenInOrder(await queueEvents(ctx, 'ingest-bulk'));
    // Each large post is two chunks: six of A's deliveries, and B's.
    expect(order).toHaveLength(7);
    const smallIndex = order.findIndex((delivery) => delivery.startsWith(small));
    expect(smallIndex).toBeGreaterThanOrEqual(0);
    expect(smallIndex).toBeLessThanOrEqual(1);
  }, 180_000);
});
