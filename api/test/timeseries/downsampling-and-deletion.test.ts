import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { readSeries, startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 2, 1); // minute-aligned
const POINTS = 10_000; // one per second, value = index

describe('downsampled reads and range deletion', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let sensor: number;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 2);
    sensor = plant.instrumentIds[0]!;
    const data = Array.from({ length: POINTS }, (_, index) => ({ measured_at: T0 + index * 1000, instrument_id: sensor, float_value: index }));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(response.statusCode).toBe(200);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('returns raw readings when the range holds no more than the limit', async () => {
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, limit: 100_000 });
    expect(readings).toHaveLength(POINTS);
    expect(readings[0]).toEqual({ ts: new Date(T0).toISOString(), instrument_id: sensor, value: 0 });
    expect(readings[0]).not.toHaveProperty('min');
  });

  it('buckets automatically beyond the limit (default 2000) and never returns more, with min and max', async () => {
    for (const limit of [undefined, 100, 7, 1]) {
      const readings = await readSeries(ctx, plant.viewer.token, limit === undefined ? { instrument_id: sensor } : { instrument_id: sensor, limit });
      expect(readings.length).toBeGreaterThan(0);
      expect(readings.length).toBeLessThanOrEqual(limit ?? 2000);
      expect(Math.min(...readings.map((reading) => reading.min!))).toBe(0);
      expect(Math.max(...readings.map((reading) => reading.max!))).toBe(POINTS - 1);
    }
  });

  it('averages per requested bucket from the rollups, exact at partial minutes of the range', async () => {
    const minutes = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '1m' });
    expect(minutes).toHaveLength(Math.ceil(POINTS / 60));
    expect(minutes[0]).toEqual({ ts: new Date(T0).toISOString(), instrument_id: sensor, value: 29.5, min: 0, max: 59 });
    const partial = await readSeries(ctx, plant.viewer.token, {
      instrument_id: sensor, bucket: '1m', start_time: new Date(T0 + 30_000).toISOString(), end_time: new Date(T0 + 150_500).toISOString(),
    });
    expect(partial).toEqual([
      { ts: new Date(T0).toISOString(), instrument_id: sensor, value: 44.5, min: 30, max: 59 },
      { ts: new Date(T0 + 60_000).toISOString(), instrument_id: sensor, value: 89.5, min: 60, max: 119 },
      { ts: new Date(T0 + 120_000).toISOString(), instrument_id: sensor, value: 135, min: 120, max: 150 },
    ]);
  });

  it('reads hour buckets from the hourly rollups, exact at partial hours and minutes', async () => {
    const hours = await readSeries(ctx, plant.viewer.token, {
      instrument_id: sensor, bucket: '1h', start_time: new Date(T0 + 1_800_000).toISOString(), end_time: new Date(T0 + 9_000_000).toISOString(),
    });
    expect(hours).toEqual([
      { ts: new Date(T0).toISOString(), instrument_id: sensor, value: 2699.5, min: 1800, max: 3599 },
      { ts: new Date(T0 + 3_600_000).toISOString(), instrument_id: sensor, value: 5399.5, min: 3600, max: 7199 },
      { ts: new Date(T0 + 7_200_000).toISOString(), instrument_id: sensor, value: 8100, min: 7200, max: 9000 },
    ]);
  });

  it('buckets below a minute straight from the points', async () => {
    const tens = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '10s' });
    expect(tens).toHaveLength(POINTS / 10);
    expect(tens[1]).toEqual({ ts: new Date(T0 + 10_000).toISOString(), instrument_id: sensor, value: 14.5, min: 10, max: 19 });
    const widened = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '1s', limit: 500 });
    expect(widened.length).toBeLessThanOrEqual(500);
  });

  it('validates read parameters', async () => {
    const cases: Array<[string, string]> = [
      ['bucket=5x', 'querystring.bucket: bucket must be a width such as 10s, 1m or 1h'],
      ['limit=0', 'querystring.limit: Too small: expected number to be >=1'],
      ['limit=100001', 'querystring.limit: Too big: expected number to be <=100000'],
      ['start_time=nonsense', 'querystring.start_time: Invalid date format.'],
    ];
    for (const [query, message] of cases) {
      const response = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?instrument_id=${sensor}&${query}`, token: plant.viewer.token });
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error).toBe(message);
    }
    const reversed = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?instrument_id=${sensor}&start_time=2024-03-02&end_time=2024-03-01`, token: plant.viewer.token });
    expect(reversed.json()).toEqual({ error: 'End time must be after start time.' });
  });

  it("reads a unit operation's instruments within its window, downsampled the same way", async () => {
    const unitOperation = await createUnitOperation(ctx, plant, { start: new Date(T0 + 100_000).toISOString(), end: new Date(T0 + 199_000).toISOString() });
    const all = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperation}/time-series-data`, token: plant.viewer.token });
    expect(all.statusCode).toBe(200);
    const readings = all.json() as Array<{ value: number }>;
    expect(readings).toHaveLength(100);
    expect(readings[0]!.value).toBe(100);
    const limited = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperation}/time-series-data?limit=10`, token: plant.viewer.token });
    expect((limited.json() as unknown[]).length).toBeLessThanOrEqual(10);
    const missing = await ctx.request({ method: 'GET', url: '/api/v1/unit-operations/987654321/time-series-data', token: plant.viewer.token });
    expect(missing.statusCode).toBe(404);
  });

  it('deletes a range (queued, ?wait=true), leaving the rest and the rollups consistent', async () => {
    const response = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data?wait=true', token: plant.editor.token, payload: {
      start_time: new Date(T0 + 1_000_000).toISOString(), end_time: new Date(T0 + 1_999_000).toISOString(), instrument_ids: [sensor],
    } });
    expect(response.statusCode).toBe(200);
    expect(response.headers.location).toMatch(/^\/api\/v1\/ingest-jobs\//);
    expect(response.json()).toMatchObject({ state: 'completed' });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, limit: 100_000 });
    expect(readings).toHaveLength(POINTS - 1000);
    expect(readings.some((reading) => reading.value! >= 1000 && reading.value! <= 1999)).toBe(false);
    const minutes = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '1m' });
    const total = minutes.reduce((sum, minute) => sum + (minute.max! - minute.min! + 1), 0);
    expect(total).toBe(POINTS - 1000);
    const hours = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '1h' });
    expect(hours.map((hour) => [hour.min, hour.max])).toEqual([[0, 3599], [3600, 7199], [7200, POINTS - 1]]);
    expect(hours[0]!.value).toBeCloseTo((3599 * 3600 / 2 - (1000 + 1999) * 1000 / 2) / 2600, 6); // the hour lost 1000..1999
  });

  it('answers 202 with a job when not waiting, and validates the deletion body', async () => {
    const queued = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token, payload: {
      start_time: '2000-01-01T00:00:00Z', end_time: '2000-01-02T00:00:00Z', instrument_ids: [plant.instrumentIds[1]],
    } });
    expect(queued.statusCode).toBe(202);
    expect(queued.json().job_id).toBe(queued.headers['x-ingest-job-id']);
    const cases: Array<[unknown, string]> = [
      [{ start_time: '2024-01-02', end_time: '2024-01-01', instrument_ids: [sensor] }, 'end_time: End time must be after start time.'],
      [{ start_time: 'x', end_time: '2024-01-01', instrument_ids: [sensor] }, 'start_time: Invalid date format.'],
      [{ start_time: '2024-01-01', end_time: '2024-01-02', instrument_ids: [] }, 'instrument_ids: instrument_ids must name at least one instrument'],
      [{ start_time: '2024-01-01', end_time: '2024-01-02', instrument_ids: [sensor, 99999999] }, 'instrument_ids.1: instrument not found'],
    ];
    for (const [payload, message] of cases) {
      const response = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token, payload: payload as object });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().error).toBe(message);
    }
    const viewer = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.viewer.token, payload: {
      start_time: '2024-01-01', end_time: '2024-01-02', instrument_ids: [sensor],
    } });
    expect(viewer.statusCode).toBe(403);
  });
});
