/**
 * The pipeline's guarantees: a worker killed in the middle of a large upload and started again ends
 * with exactly the right points; with two workers, the order in which jobs run does not change the
 * outcome (a deletion accepted after a write wins; a write accepted after a deletion survives).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stagingTableName } from '../src/staging-table.ts';
import { addInstruments, createPlant, createTestContext, createUnitOperation, exited, killChildren, multipartBody, type Plant, readSeries, spawnProcess, startWorker, type TestContext, waitForJobState, writeCsv } from '@bioprocess/api/test-support';

const T0 = Date.UTC(2024, 6, 1);

/** A worker process with one job at a time and a short lock, so a killed one's job is taken up soon. */
function startWorkerProcess(ctx: TestContext): ChildProcess {
  return spawnProcess(ctx, 'ingest-worker/src/main.ts', { WORKER_CONCURRENCY: '1', INGEST_RECONCILE_MS: '5000', INGEST_BACKOFF_MAX_MS: '30000' });
}

async function dedupedCount(ctx: TestContext, organizationId: number): Promise<{ keys: number; sum: number; rows: number }> {
  const result = await ctx.deps.clickhouse.query({
    query: `SELECT count(), sum(v), (SELECT count() FROM points WHERE organization_id = ${organizationId}) FROM (
              SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
                FROM points WHERE organization_id = ${organizationId} GROUP BY instrument_id, ts) WHERE d = 0`,
    format: 'JSONCompact',
  });
  const [row] = (await result.json<[string, number, string]>()).data;
  return { keys: Number(row![0]), sum: Number(row![1]), rows: Number(row![2]) };
}

describe('crash safety', () => {
  let ctx: TestContext;
  let plant: Plant;
  const file = path.join(os.tmpdir(), `bp-crash-${process.pid}.csv`);
  const ROWS = 600_000;
  const COLUMNS = 3;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '100' });
    plant = await createPlant(ctx, COLUMNS);
    await writeCsv(file, ROWS, COLUMNS, T0, (row, column) => row + column / 2);
  });
  afterAll(async () => {
    await killChildren();
    rmSync(file, { force: true });
    await ctx.close();
  });

  it('resumes a large upload after the worker is killed mid-way: every point exactly once', async () => {
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: plant.instrumentIds.map((id, c) => ({ column: `c${c}`, instrument_id: id })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'large.csv', content: readFileSync(file) });
    const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().id as string;

    let child = startWorkerProcess(ctx);
    // Kill it once the pass committed at least one staged batch and before it finished.
    for (;;) {
      const { rows } = await ctx.deps.pg.query(`SELECT state, (checkpoint->>'byteOffset')::float8 AS offset FROM ingest_jobs WHERE id = $1`, [jobId]);
      const offset = rows[0].offset as number | null;
      expect(rows[0].state).not.toBe('completed');
      if (process.env.DEBUG_CRASH_TEST) process.stderr.write(`${rows[0].state} ${offset}\n`);
      if (offset !== null && offset > 0 && offset < Number.MAX_SAFE_INTEGER) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    await exited(child);
    // Staged rows are not visible until the whole file passed.
    expect((await dedupedCount(ctx, plant.organizationId)).keys).toBe(0);
    const staged = await ctx.deps.clickhouse.query({ query: `SELECT count() FROM ${stagingTableName(jobId)}`, format: 'JSONCompact' });
    const stagedRows = Number((await staged.json<[string]>()).data[0]![0]);
    expect(stagedRows).toBeGreaterThan(0);
    expect(stagedRows).toBeLessThan(ROWS * COLUMNS);

    child = startWorkerProcess(ctx);
    const job = await waitForJobState(ctx, plant.editor.token, jobId, 180_000);
    child.kill('SIGTERM');
    await exited(child);
    expect(job.state).toBe('completed');
    expect(job.result).toMatchObject({ points_written: ROWS * COLUMNS, rows_read: ROWS });

    const final = await dedupedCount(ctx, plant.organizationId);
    expect(final.keys).toBe(ROWS * COLUMNS);
    // sum over rows r and columns c of (r + c/2)
    const expectedSum = COLUMNS * (ROWS * (ROWS - 1)) / 2 + ROWS * (COLUMNS * (COLUMNS - 1)) / 4;
    expect(final.sum).toBeCloseTo(expectedSum, -3);
    expect(final.rows).toBeGreaterThanOrEqual(ROWS * COLUMNS);
    // The staging table is gone once its rows are published.
    const leftover = await ctx.deps.clickhouse.query({ query: `EXISTS TABLE ${stagingTableName(jobId)}`, format: 'JSONCompact' });
    expect(Number((await leftover.json<[number]>()).data[0]![0])).toBe(0);
    const window = await readSeries(ctx, plant.viewer.token, {
      equipment_id: plant.equipmentId, start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 3_599_000).toISOString(), limit: 10_000,
    });
    expect(window).toHaveLength(3_600 * COLUMNS); // every point once, even where a batch was written twice
    expect(new Set(window.map((reading) => `${reading.instrument_id}@${reading.ts}`)).size).toBe(window.length);
  }, 300_000);
});

describe('ordering with two workers', () => {
  let ctx: TestContext;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 2);
  });
  afterAll(async () => {
    await ctx.close();
  });

  /**
   * Runs `first` to completion while the other ingest queue is held (bulk chunks and other jobs have
   * queues of their own), then lets `last` run: the job order the test needs, on two workers.
   */
  async function runInOrder(first: { jobId: string; queue: 'ingest' | 'ingestBulk' }, lastJobId: string): Promise<void> {
    const held = ctx.deps.queues[first.queue === 'ingest' ? 'ingestBulk' : 'ingest'];
    await held.pause();
    const workers = [startWorker(ctx, { WORKER_CONCURRENCY: 1 }), startWorker(ctx, { WORKER_CONCURRENCY: 1 })];
    try {
      expect((await waitForJobState(ctx, plant.editor.token, first.jobId)).state).toBe('completed');
      expect((await jobState(lastJobId))).toBe('queued');
      await held.resume();
      expect((await waitForJobState(ctx, plant.editor.token, lastJobId)).state).toBe('completed');
    } finally {
      await held.resume();
      await Promise.all(workers.map((worker) => worker.close()));
    }
  }
  const jobState = async (jobId: string) =>
    (await ctx.deps.pg.query<{ state: string }>('SELECT state FROM ingest_jobs WHERE id = $1', [jobId])).rows[0]?.state;
  const jobIdOf = (response: { headers: Record<string, unknown> }) => response.headers['x-ingest-job-id'] as string;

  const points = (instrumentId: number, value: number) =>
    Array.from({ length: 120 }, (_, index) => ({ measured_at: T0 + index * 1000, instrument_id: instrumentId, float_value: value }));

  it('a deletion accepted after a write wins even when the write runs last; a write accepted after a deletion survives it', async () => {
    const [first, second] = plant.instrumentIds as [number, number];
    const range = { start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 59_000).toISOString() };

    // Instrument 1: write, then delete seconds 0..59; the write's job runs after the deletion.
    const write = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: points(first, 1) } });
    const deletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token, payload: { ...range, instrument_ids: [first] } });
    await runInOrder({ jobId: jobIdOf(deletion), queue: 'ingest' }, jobIdOf(write));

    // Instrument 2: delete seconds 0..59, then write; the deletion's job runs after the write.
    const earlyDeletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token, payload: { ...range, instrument_ids: [second] } });
    const lateWrite = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: points(second, 2) } });
    await runInOrder({ jobId: jobIdOf(lateWrite), queue: 'ingestBulk' }, jobIdOf(earlyDeletion));

    const firstReadings = await readSeries(ctx, plant.viewer.token, { instrument_id: first });
    expect(firstReadings).toHaveLength(60);
    expect(firstReadings[0]!.ts).toBe(new Date(T0 + 60_000).toISOString());
    const secondReadings = await readSeries(ctx, plant.viewer.token, { instrument_id: second });
    expect(secondReadings).toHaveLength(120);
    // The per-minute rollups agree with the points.
    const minutes = await readSeries(ctx, plant.viewer.token, { instrument_id: first, bucket: '1m' });
    expect(minutes).toEqual([{ ts: new Date(T0 + 60_000).toISOString(), instrument_id: first, value: 1, min: 1, max: 1 }]);
  });

  it('a replacing upload accepted after a write wins over it whatever the job order', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const write = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: points(sensor!, 1) } });
    const csv = ['time,v', ...Array.from({ length: 30 }, (_, index) => `${new Date(T0 + index * 2000).toISOString()},2`)].join('\n');
    const { body, contentType } = multipartBody({ mapping: JSON.stringify({ timestamp_column: 'time', replace_existing: true, columns: [{ column: 'v', instrument_id: sensor }] }) },
      { name: 'replace.csv', content: csv });
    const replace = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(replace.statusCode).toBe(202);
    await runInOrder({ jobId: replace.json().id as string, queue: 'ingest' }, jobIdOf(write));
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
    // Seconds 0..58 hold exactly the upload's 30 points; the write's points after the range remain.
    expect(readings.filter((reading) => reading.value === 2)).toHaveLength(30);
    expect(readings.filter((reading) => reading.value === 1)).toHaveLength(61);
    expect(readings).toHaveLength(91);
  });
});
