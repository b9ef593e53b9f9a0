/**
 * Feeds posting together: 32 feeds interleave 5 s posts over 8 instruments, so posts in flight at the
 * same time share minutes and an hour (the worker's rollup pass takes many of them at once), and some
 * keys are posted twice with other values (the later post wins). Afterwards the minute and hour rollups
 * must equal what the deduplicated points give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlant, createTestContext, jobStates, type Plant, startWorker, type TestContext, waitAllFinished } from '@bioprocess/api/test-support';
import type { IngestWorker } from '../src/worker.ts';

// 90 s before an hour: the feeds' minutes cross into the next hour.
const T0 = Date.UTC(2024, 6, 1, 9, 58, 30);
const FEEDS = 32;
const INSTRUMENTS = 8;
const WINDOWS = 10;
const SECONDS_PER_POST = 5;

type Figures = Record<string, { points: number; count: number; sum: number; min: number | null; max: number | null }>;

async function figures(ctx: TestContext, query: string): Promise<Figures> {
  const result = await ctx.deps.clickhouse.query({ query, format: 'JSONEachRow' });
  const rows = await result.json<{ instrument_id: string; at: string; p: string; n: string; s: number; lo: number | null; hi: number | null }>();
  return Object.fromEntries(rows.map((row) => [`${row.instrument_id}@${row.at}`, { points: Number(row.p), count: Number(row.n), sum: row.s, min: row.lo, max: row.hi }]));
}

describe('rollups of feeds posting together', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx, { INGEST_BULK_CONCURRENCY: 32 });
    plant = await createPlant(ctx, INSTRUMENTS);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('agree with the deduplicated points when 32 feeds interleave posts sharing minutes and hours', async () => {
    // Feed f writes instrument f % 8 in the 5 s slots f / 8, f / 8 + 4, ...: the four feeds of an
    // instrument take turns, so each minute of it is written by several posts, most of them at once.
    const post = (feed: number, window: number, offset = 0) => {
      const instrumentId = plant.instrumentIds[feed % INSTRUMENTS]!;
      const slot = window * (FEEDS / INSTRUMENTS) + Math.floor(feed / INSTRUMENTS);
      const data = Array.from({ length: SECONDS_PER_POST }, (_, second) => {
        const index = slot * SECONDS_PER_POST + second;
        // Halves sum exactly in any order; every seventh reading is null.
        return { measured_at: T0 + index * 1000, instrument_id: instrumentId, float_value: index % 7 === 3 ? null : offset + (index % 40) * 0.5 - 5 };
      });
      return ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
    };
    for (let window = 0; window < WINDOWS; window += 1) {
      const answers = await Promise.all(Array.from({ length: FEEDS }, (_, feed) => post(feed, window)));
      for (const answer of answers) expect(answer.statusCode).toBe(202);
    }
    // Some keys again with other values, while others are still being written: the later post wins.
    const again = await Promise.all([post(0, 3, 100), post(9, 7, -100), post(31, 0, 1_000)]);
    for (const answer of again) expect(answer.statusCode).toBe(202);
    await waitAllFinished(ctx, plant.organizationId, 120_000);
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: FEEDS * WINDOWS + 3 });

    const organization = plant.organizationId;
    const deduplicated = `SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d FROM points
      WHERE organization_id = ${organization} GROUP BY instrument_id, ts`;
    const fromPoints = (width: number) => figures(ctx, `SELECT instrument_id, intDiv(ts, ${width}) * ${width} AS at, count() AS p, count(v) AS n,
        sum(ifNull(v, 0)) AS s, min(v) AS lo, max(v) AS hi FROM (${deduplicated}) WHERE d = 0 GROUP BY instrument_id, at`);
    const fromRollups = (table: string, column: string) => figures(ctx, `SELECT instrument_id, at, p, n, s, lo, hi FROM (
        SELECT instrument_id, ${column} AS at, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
               argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
          FROM ${table} WHERE organization_id = ${organization} GROUP BY instrument_id, at) WHERE p > 0`);
    const minutes = await fromPoints(60_000);
    expect(Object.keys(minutes).length).toBeGreaterThan(INSTRUMENTS * 3);
    expect(await fromRollups('points_rollup_1m', 'minute')).toEqual(minutes);
    const hours = await fromPoints(3_600_000);
    expect(Object.keys(hours)).toHaveLength(INSTRUMENTS * 2);
    expect(await fromRollups('points_rollup_1h', 'hour')).toEqual(hours);
  }, 180_000);
});
