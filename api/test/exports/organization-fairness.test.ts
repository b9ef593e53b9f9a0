/**
 * Fairness between organisations on the export queue, through the real HTTP server, PostgreSQL, Redis,
 * ClickHouse and an in-process export-worker (two slots, one export per organisation at a time).
 * Nothing here measures time: the order in which BullMQ activated and completed the exports is read
 * back from the queue's own event stream.
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
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { followExportJob, startExportWorkerFor } from './job-support.ts';

const T0 = Date.UTC(2024, 9, 1);
const COLUMNS = 2;
const FLOODER_ROWS = 60_000;

interface QueueEvent { event: string; jobId: string }
interface Run { jobId: string; startedAt: number; endedAt: number }

async function exportQueueEvents(ctx: TestContext): Promise<QueueEvent[]> {
  const entries = await ctx.deps.redis.xrange(`${ctx.env.QUEUE_PREFIX}:export:events`, '-', '+');
  return entries.map(([, fields]) => {
    const map = new Map<string, string>();
    for (let index = 0; index + 1 < fields.length; index += 2) map.set(fields[index]!, fields[index + 1]!);
    return { event: map.get('event') ?? '', jobId: map.get('jobId') ?? '' };
  }).filter((entry) => entry.jobId !== '');
}

/** Activations that ended completed or failed (not those that parked the job), as positions in the stream. */
function runsOf(events: QueueEvent[]): Run[] {
  const runs: Run[] = [];
  events.forEach((entry, index) => {
    if (entry.event !== 'active') return;
    const end = events.findIndex((later, laterIndex) => laterIndex > index && later.jobId === entry.jobId && later.event !== 'active');
    if (end >= 0 && (events[end]!.event === 'completed' || events[end]!.event === 'failed')) runs.push({ jobId: entry.jobId, startedAt: index, endedAt: end });
  });
  return runs;
}

function mostAtOnce(runs: Run[], jobIds: Set<string>): number {
  const own = runs.filter((run) => jobIds.has(run.jobId));
  return Math.max(0, ...own.map((run) => own.filter((other) => other.startedAt <= run.startedAt && other.endedAt > run.startedAt).length));
}

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

  const clearEvents = () => ctx.deps.redis.del(`${ctx.env.QUEUE_PREFIX}:export:events`);

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
    const events = await exportQueueEvents(ctx);
    const runs = runsOf(events).sort((a, b) => a.startedAt - b.startedAt);
    expect(runs).toHaveLength(5);
    // First come, first served would start it last, behind four.
    expect(runs.findIndex((run) => run.jobId === small)).toBeLessThanOrEqual(1);
    expect(mostAtOnce(runs, new Set(flooded))).toBe(1);
  }, 240_000);

  it('lets a flooding organisation hold one export slot: another organisation\'s export starts while the flooder\'s run or wait', async () => {
    await clearEvents();
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
    {
      const events = await exportQueueEvents(ctx);
      const runs = runsOf(events);
      const floodedRuns = runs.filter((run) => flooded.includes(run.jobId)).sort((a, b) => a.startedAt - b.startedAt);
      const smallRun = runs.find((run) => run.jobId === small)!;
      expect(floodedRuns).toHaveLength(3);
      expect(mostAtOnce(runs, new Set(flooded))).toBe(1);
      // Without a cap the flooder's second export would have taken the other slot, and this one waited for it.
      expect(smallRun.startedAt).toBeLessThan(floodedRuns[0]!.endedAt);
      const picks = events.filter((entry) => entry.event === 'active' && flooded.includes(entry.jobId)).length;
      expect(picks).toBeLessThanOrEqual(2 * flooded.length);
    }
  }, 240_000);
});
