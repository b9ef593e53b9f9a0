import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { readSeries, startWorker, waitForJobState } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 8, 1);

describe('deleting a unit operation deletes its time series', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 2);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it("queues a deletion of its equipment's instruments over its window, leaving readings outside it", async () => {
    const data = plant.instrumentIds.flatMap((instrumentId) =>
      Array.from({ length: 10 }, (_, index) => ({ measured_at: T0 + index * 60_000, instrument_id: instrumentId, value: index })));
    const write = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(write.statusCode).toBe(200);
    const unitOperation = await createUnitOperation(ctx, plant, { start: new Date(T0 + 2 * 60_000).toISOString(), end: new Date(T0 + 5 * 60_000).toISOString() });

    const response = await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation}`, token: plant.editor.token });
    expect(response.statusCode).toBeLessThan(300);
    const { rows } = await ctx.deps.pg.query(
      `SELECT id, request FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].request).toEqual({ instrument_ids: plant.instrumentIds, start_ms: T0 + 120_000, end_ms: T0 + 300_000, unit_operation_id: unitOperation });
    expect((await waitForJobState(ctx, plant.editor.token, rows[0].id)).state).toBe('completed');

    for (const instrumentId of plant.instrumentIds) {
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: instrumentId });
      expect(readings.map((reading) => reading.value)).toEqual([0, 1, 6, 7, 8, 9]);
    }
  });

  it('deletes nothing for a unit operation without a start time', async () => {
    const unitOperation = await createUnitOperation(ctx, plant);
    const response = await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation}`, token: plant.editor.token });
    expect(response.statusCode).toBeLessThan(300);
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    expect(rows[0].n).toBe(1);
  });
});

describe('deleting an instrument deletes its time series', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 2);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('queues a deletion over exactly its stored readings and leaves other instruments alone', async () => {
    const [removed, kept] = plant.instrumentIds as [number, number];
    const data = [removed, kept].flatMap((instrumentId) =>
      Array.from({ length: 5 }, (_, index) => ({ measured_at: T0 + index * 60_000, instrument_id: instrumentId, value: index })));
    const write = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(write.statusCode).toBe(200);

    const response = await ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${removed}`, token: plant.editor.token });
    expect(response.statusCode).toBe(204);
    const { rows } = await ctx.deps.pg.query(
      `SELECT id, request FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].request).toEqual({ instrument_ids: [removed], start_ms: T0, end_ms: T0 + 4 * 60_000 });
    expect((await waitForJobState(ctx, plant.editor.token, rows[0].id)).state).toBe('completed');

    const left = await ctx.deps.clickhouse.query({
      query: `SELECT instrument_id, count() AS n FROM (SELECT instrument_id, ts, argMax(is_deleted, version) AS deleted FROM points
              WHERE organization_id = ${plant.organizationId} GROUP BY instrument_id, ts) WHERE deleted = 0 GROUP BY instrument_id`,
      format: 'JSONEachRow',
    });
    expect((await left.json<{ instrument_id: string; n: string }>()).map((row) => [Number(row.instrument_id), Number(row.n)])).toEqual([[kept, 5]]);
  });

  it('queues nothing for an instrument without readings', async () => {
    const [unused] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const response = await ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${unused}`, token: plant.editor.token });
    expect(response.statusCode).toBe(204);
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    expect(rows[0].n).toBe(1);
  });
});
