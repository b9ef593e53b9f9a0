/**
 * Rollups owed by completed bulk posts (ingest-worker/src/rollups/owed.ts and
 * api/src/timeseries/rollup-backlog.ts): the statement that completes a post records the rollups it
 * owes; a read of rollups waits for those recorded before it and for no later ones, and gives up after
 * its bound; what a dead worker left is recomputed by a backlog pass once its grace period is over,
 * by one pass alone, and the figures then agree with the points.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitOwedRollups, createPlant, createTestContext, readSeries, startWorker, type Plant, type TestContext } from '@bioprocess/api/test-support';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import { completeBulkPosts } from '@bioprocess/shared/server/ingest-jobs';
import { insertPoints } from '../src/points-store.ts';
import { recomputeLeftBacklog } from '../src/rollups/owed.ts';

const T0 = Date.UTC(2024, 8, 2, 7, 0, 0);
/** 150 s of 1 Hz readings: two whole minutes and half of a third. */
const SECONDS = 150;

describe('rollups owed by completed bulk posts', () => {
  let ctx: TestContext;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 2);
  });
  afterAll(async () => {
    await ctx.close();
  });

  const owed = async () => (await ctx.deps.pg.query<{ job_id: string; instrument_ids: string[]; start_ms: number; end_ms: number }>(
    'SELECT job_id, instrument_ids::text[] AS instrument_ids, start_ms, end_ms FROM rollup_backlog WHERE organization_id = $1 ORDER BY id', [plant.organizationId])).rows;
  const recordOwed = async (jobId: string, instrumentId: number, agoMs = 0) => {
    await ctx.deps.pg.query(
      `INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms, recorded_at)
       VALUES ($1, $2, $3, $4, $5, now() - $6 * interval '1 millisecond')`,
      [plant.organizationId, jobId, [instrumentId], T0, T0 + 1_000, agoMs]);
  };

  it('are recorded with the completion; a read waits for them, and a backlog pass recomputes what a dead worker left', async () => {
    const sensor = plant.instrumentIds[0]!;
    // Accepted by the api with no worker running: the job stays queued, its rows in PostgreSQL.
    const data = Array.from({ length: SECONDS }, (_, second) => ({ ts: T0 + second * 1_000, instrument_id: sensor, value: second % 10 }));
    const accepted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
    expect(accepted.statusCode).toBe(202);
    const { rows: [job] } = await ctx.deps.pg.query<{ id: string; version_seq: string }>(
      'SELECT id, version_seq FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId]);
    // What a worker does before it dies: the points stored, the job completed, the rollups not yet.
    await insertPoints(ctx.deps.clickhouse, data.map((point, index) =>
      `${plant.organizationId}\t${sensor}\t${point.ts}\t${point.value}\t${pointVersion(Number(job!.version_seq), index)}\t0\n`).join(''), 'TabSeparated');
    const range = { organizationId: plant.organizationId, instrumentIds: [sensor], startMs: T0, endMs: T0 + (SECONDS - 1) * 1_000 };
    await completeBulkPosts(ctx.deps.pg, [{ jobId: job!.id, points: SECONDS, range }]);
    expect((await ctx.deps.pg.query('SELECT state FROM ingest_jobs WHERE id = $1', [job!.id])).rows[0].state).toBe('completed');
    expect(await owed()).toEqual([{ job_id: job!.id, instrument_ids: [String(sensor)], start_ms: T0, end_ms: range.endMs }]);

    // A read of minute buckets cannot answer from rollups that are not there: it waits.
    let answered = false;
    const read = readSeries(ctx, plant.viewer.token, { instrument_id: sensor, bucket: '1m' }).finally(() => {
      answered = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(answered).toBe(false);
    // Within its grace period the row is its worker's; after it, one pass takes it, and only one.
    expect(await recomputeLeftBacklog(ctx.deps.pg, ctx.deps.clickhouse)).toBe(0);
    const passes = await Promise.all([recomputeLeftBacklog(ctx.deps.pg, ctx.deps.clickhouse, 0), recomputeLeftBacklog(ctx.deps.pg, ctx.deps.clickhouse, 0)]);
    expect(passes.sort()).toEqual([0, 1]);
    expect(await owed()).toEqual([]);
    const minutes = await read;
    expect(minutes.map((reading) => [reading.ts, reading.value, reading.min, reading.max])).toEqual([
      [new Date(T0).toISOString(), 4.5, 0, 9],
      [new Date(T0 + 60_000).toISOString(), 4.5, 0, 9],
      [new Date(T0 + 120_000).toISOString(), 4.5, 0, 9],
    ]);
  });

  it('a read waits only for the rows recorded before it, and gives up after its bound', async () => {
    const first = '00000000-0000-4000-8000-000000000001';
    const later = '00000000-0000-4000-8000-000000000002';
    await ctx.deps.pg.query('DELETE FROM rollup_backlog WHERE organization_id = $1', [plant.organizationId]);
    await recordOwed(first, plant.instrumentIds[1]!);
    let settled: boolean | undefined;
    const waiting = awaitOwedRollups(ctx.deps.pg, plant.organizationId).then((result) => {
      settled = result;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await recordOwed(later, plant.instrumentIds[1]!);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBeUndefined();
    await ctx.deps.pg.query('DELETE FROM rollup_backlog WHERE job_id = $1', [first]);
    await waiting;
    expect(settled).toBe(true);
    // The later row stays: a read bounded at 150 ms answers that it could not wait it out.
    expect(await awaitOwedRollups(ctx.deps.pg, plant.organizationId, 150)).toBe(false);
    await ctx.deps.pg.query('DELETE FROM rollup_backlog WHERE job_id = $1', [later]);
    expect(await awaitOwedRollups(ctx.deps.pg, plant.organizationId, 150)).toBe(true);
  });

  it('are recomputed by a running ingest-worker once a dead one left them past the grace period', async () => {
    const sensor = plant.instrumentIds[1]!;
    const start = T0 + 3_600_000;
    await ctx.deps.pg.query('DELETE FROM rollup_backlog WHERE organization_id = $1', [plant.organizationId]);
    await insertPoints(ctx.deps.clickhouse, Array.from({ length: 60 }, (_, second) =>
      `${plant.organizationId}\t${sensor}\t${start + second * 1_000}\t${second}\t${pointVersion(900_000_001, second)}\t0\n`).join(''), 'TabSeparated');
    await ctx.deps.pg.query(
      `INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms, recorded_at)
       VALUES ($1, '00000000-0000-4000-8000-000000000003', $2, $3, $4, now() - interval '1 minute')`,
      [plant.organizationId, [sensor], start, start + 59_000]);
    const worker = startWorker(ctx);
    try {
      // The read waits for the row: it answers once the worker's pass stored the minute.
      const [minute] = await readSeries(ctx, plant.viewer.token, {
        instrument_id: sensor, bucket: '1m', start_time: new Date(start).toISOString(), end_time: new Date(start + 59_999).toISOString(),
      });
      expect(await owed()).toEqual([]);
      expect([minute!.value, minute!.min, minute!.max]).toEqual([29.5, 0, 59]);
    } finally {
      await worker.close();
    }
  });
});
