/**
 * The thread that stores the rollups of the api's own bulk writes (owed-rollups-thread.ts): it stores a
 * commit with its own connections and deletes its backlog rows; a commit it cannot store stays owed for
 * the backlog pass, and the thread goes on with the next; closing waits for the rollups asked for and
 * ends the thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { feedPoints, freePort, owedRollups, rollupFigures, T0, waitAllFinished } from '../support/pipeline.ts';
import { createOwedRollupsThread, type ThreadRollups } from '../../src/timeseries/owed-rollups-thread.ts';

const POINTS = 120;

describe('the rollups thread', () => {
  let ctx: TestContext;
  let plant: Plant;
  /** The job whose backlog row the tests record again, and what it owes. */
  let owed: ThreadRollups;

  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 2);
    // Points written and their rollups stored through the api.
    const answer = await ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: [...feedPoints(plant.instrumentIds[0]!, 0, POINTS), ...feedPoints(plant.instrumentIds[1]!, 0, POINTS)] },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    const { rows: [job] } = await ctx.deps.pg.query<{ id: string }>('SELECT id FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId]);
    owed = {
      jobId: job!.id, points: 2 * POINTS,
      range: { organizationId: plant.organizationId, instrumentIds: plant.instrumentIds.slice(0, 2), startMs: T0, endMs: T0 + (POINTS - 1) * 1000 },
    };
  });
  afterAll(async () => {
    await ctx?.close();
  });

  /** Records the job's rollups as owed again. */
  const oweAgain = () => ctx.deps.pg.query(
    'INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms) VALUES ($1, $2, $3, $4, $5)',
    [owed.range.organizationId, owed.jobId, owed.range.instrumentIds, owed.range.startMs, owed.range.endMs]);
  const newestMinuteVersion = async () => {
    const result = await ctx.deps.clickhouse.query({
      query: `SELECT toString(max(version)) FROM points_rollup_1m WHERE organization_id = ${plant.organizationId}`, format: 'JSONCompact',
    });
    return BigInt((await result.json<[string]>()).data[0]![0]);
  };

  it('stores a commit with its own connections, deletes its backlog rows, and ends when closed', async () => {
    await oweAgain();
    const before = await newestMinuteVersion();
    const thread = createOwedRollupsThread(ctx.env, createLogger('test', 'silent'));
    thread.recompute(owed);
    await thread.drain();
    expect(await owedRollups(ctx, plant.organizationId)).toBe(0);
    // Stored again, by the thread, with a newer version; exact.
    expect(await newestMinuteVersion()).toBeGreaterThan(before);
    const { minutes, hours } = await rollupFigures(ctx, plant.organizationId);
    expect(minutes.fromRollups).toEqual(minutes.fromPoints);
    expect(hours.fromRollups).toEqual(hours.fromPoints);
    // Ends its connections and the thread (a hanging thread would keep the test run alive).
    await thread.close();
  });

  it('leaves a commit it cannot store owed, says so, and stores the next once it can', async () => {
    const warnings: string[] = [];
    const logger = createLogger('test', 'warn', { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) });
    // A ClickHouse nobody listens on.
    const unreachable = createOwedRollupsThread({ ...ctx.env, CLICKHOUSE_URL: `http://127.0.0.1:${await freePort()}` }, logger);
    await oweAgain();
    unreachable.recompute(owed);
    await unreachable.drain();
    expect(await owedRollups(ctx, plant.organizationId)).toBe(1);
    expect(warnings).toContain('rollups of a completed bulk post not recomputed; the backlog pass will');
    // The same thread takes the next commit (it did not stop on the failure): still unreachable, still owed.
    warnings.length = 0;
    unreachable.recompute(owed);
    await unreachable.drain();
    expect(warnings).toHaveLength(1);
    await unreachable.close();

    const thread = createOwedRollupsThread(ctx.env, logger);
    thread.recompute(owed);
    await thread.drain();
    await thread.close();
    expect(await owedRollups(ctx, plant.organizationId)).toBe(0);
  });
});
