/**
 * Fairness between organisations on the export queue, through the real HTTP server, PostgreSQL, Redis,
 * ClickHouse and an in-process export-worker (two slots, one export per organisation at a time).
 * Nothing here measures time: the order in which exports were taken is read back from the queue's own
 * event stream, and the order in which they ran from a log of the rows' state changes
 * (api/test/support/job-order.ts).
 *
 * - Turns: with a flooding organisation's exports queued first, another organisation's export is among
 *   the first two taken (behind at most one of the flooder's queued exports).
 * - Slots: while the flooder's large exports run or wait, it holds one slot, and the other
 *   organisation's export starts before the flooder's first one ends; the flooder's waiting exports are
 *   taken at most twice each (no spinning).
 */
import os from 'node:os';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, startWorker, waitForJobState } from '../support/ingest.ts';
import { writeCsv } from '../support/pipeline.ts';
import { createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import { clearQueueEvents, logJobStates, mostAtOnce, queueEvents, runsOfJobs, takenInOrder } from '../support/job-order.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { followExportJob, startExportWorkerFor } from './job-support.ts';

const T0 = Date.UTC(2024, 9, 1);
const COLUMNS = 2;
const FLOODER_ROWS = 200_000;

describe('fairness between organisations on the export queue', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let flooder: Plant;
  let other: Plant;
  const unitOperations = new Map<number, number>();
  const csv = path.join(os.tmpdir(), `bp-export-fairness-${process.pid}.csv`);

  async function load(plant: Plant, rows: number): Promise<void> {
    const unitOperation = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 86_400_000).toISOString() });
    unitOperations.set(plant.organizationId, unitOperation);
    await writeCsv(csv, rows, COLUMNS, T0);
    const mapping = { timestamp_column: 'time', columns: plant.instrumentIds.map((id, column) => ({ column: `c${column}`, instrument_id: id })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'readings.csv', content: readFileSync(csv) });
    const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode, response.body).toBe(202);
    expect((await waitForJobState(ctx, plant.editor.token, response.json().id as string)).state).toBe('completed');
  }

  async function requestExport(plant: Plant): Promise<string> {
    const response = await ctx.request({
      method: 'GET', url: `/api/v1/exports/time-series?unit_operation_id=${unitOperations.get(plant.organizationId)}&format=csv-long`, token: plant.editor.token,
    });
    expect(response.statusCode, response.body).toBe(202);
    return response.json().id as string;
  }

  const clearEvents = () => clearQueueEvents(ctx, 'export');

  beforeAll(async () => {
    ctx = await createTestContext({ EXPORT_STREAM_MAX_POINTS: '10', EXPORT_MAX_ACTIVE_JOBS: '4' });
    ingest = startWorker(ctx);
    [flooder, other] = [await createPlant(ctx, COLUMNS), await createPlant(ctx, COLUMNS)];
    await load(flooder, FLOODER_ROWS);
    await load(other, 20);
  }, 180_000);
  afterAll(async () => {
    rmSync(csv, { force: true });
    await ingest.close();
    await ctx.close();
  });

  it('takes the organisations in turns: an export waits behind at most one of a flooding organisation\'s queued exports', async () => {
    await clearEvents();
    await logJobStates(ctx, 'export_jobs');
    const flooded: string[] = [];
    for (let index = 0; index < 4; index += 1) flooded.push(await requestExport(flooder));
    const small = await requestExport(other);
    const exporter = startExportWorkerFor(ctx, { EXPORT_WORKER_CONCURRENCY: 2 });
    try {
      expect((await followExportJob(ctx, other.editor.token, small)).at(-1)!.state).toBe('completed');
      for (const id of flooded) expect((await followExportJob(ctx, flooder.editor.token, id)).at(-1)!.state).toBe('completed');
    } finally {
      await exporter.close();
    }
    const order = takenInOrder(await queueEvents(ctx, 'export'));
    expect(order).toHaveLength(5);
    // First come, first served would start it last, behind four.
    expect(order.indexOf(small)).toBeLessThanOrEqual(1);
    expect(mostAtOnce(await runsOfJobs(ctx), new Set(flooded))).toBe(1);
  }, 240_000);

  it('lets a flooding organisation hold one export slot: another organisation\'s export starts while the flooder\'s run or wait', async () => {
    await clearEvents();
    await logJobStates(ctx, 'export_jobs');
    const flooded: string[] = [];
    for (let index = 0; index < 3; index += 1) flooded.push(await requestExport(flooder));
    const exporter = startExportWorkerFor(ctx, { EXPORT_WORKER_CONCURRENCY: 2 });
    let small = '';
    try {
      // The flooder's first export is under way before the other organisation asks for its own.
      for (;;) {
        const { rows } = await ctx.deps.pg.query<{ state: string }>('SELECT state FROM export_jobs WHERE id = $1', [flooded[0]]);
        if (rows[0]!.state !== 'queued') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      small = await requestExport(other);
      expect((await followExportJob(ctx, other.editor.token, small)).at(-1)!.state).toBe('completed');
      for (const id of flooded) expect((await followExportJob(ctx, flooder.editor.token, id)).at(-1)!.state).toBe('completed');
    } finally {
      // Closing waits for BullMQ to record the last completions in the event stream.
      await exporter.close();
    }
    const runs = await runsOfJobs(ctx);
    const floodedRuns = runs.filter((run) => flooded.includes(run.jobId)).sort((a, b) => a.from - b.from);
    const smallRun = runs.find((run) => run.jobId === small)!;
    expect(floodedRuns).toHaveLength(3);
    expect(mostAtOnce(runs, new Set(flooded))).toBe(1);
    // Without a cap the flooder's second export would have taken the other slot, and this one waited for it.
    expect(smallRun.from).toBeLessThan(floodedRuns[0]!.to);
    const picks = (await queueEvents(ctx, 'export')).filter((entry) => entry.event === 'active' && flooded.includes(entry.jobId)).length;
    expect(picks).toBeLessThanOrEqual(2 * flooded.length);
  }, 240_000);
});
