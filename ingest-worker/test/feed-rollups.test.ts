/**
 * Feeds posting together: 32 feeds interleave 5 s posts over 8 instruments, so posts in flight at the
 * same time share minutes and an hour (one rollup pass takes many of them at once), and some
 * keys are posted twice with other values (the later post wins). Afterwards the minute and hour rollups
 * must equal what the deduplicated points give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlant, createTestContext, jobStates, type Plant, rollupFigures, startWorker, type TestContext, waitAllFinished } from '@bioprocess/api/test-support';
import type { IngestWorker } from '../src/worker.ts';

// 90 s before an hour: the feeds' minutes cross into the next hour.
const T0 = Date.UTC(2024, 6, 1, 9, 58, 30);
const FEEDS = 32;
const INSTRUMENTS = 8;
const WINDOWS = 10;
const SECONDS_PER_POST = 5;

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

    const { minutes, hours } = await rollupFigures(ctx, plant.organizationId);
    expect(Object.keys(minutes.fromPoints).length).toBeGreaterThan(INSTRUMENTS * 3);
    expect(minutes.fromRollups).toEqual(minutes.fromPoints);
    expect(Object.keys(hours.fromPoints)).toHaveLength(INSTRUMENTS * 2);
    expect(hours.fromRollups).toEqual(hours.fromPoints);
  }, 180_000);
});
