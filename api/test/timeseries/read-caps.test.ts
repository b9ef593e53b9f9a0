/**
 * The caps of reads through the real HTTP server and services: a read covering more instruments or
 * readings than READ_MAX_* answers 400 naming the cap before a single statement reaches ClickHouse, and
 * an accepted read queries exactly its instruments and streams at most its readings. Deviations and
 * exports are capped the same way. Statements are counted on the api's own ClickHouse client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { READ_MAX_INSTRUMENTS, READ_MAX_POINTS, READ_MAX_READING_BYTES } from '@bioprocess/shared/timeseries';
import { MAX_ANSWER_VALUES } from '@bioprocess/shared/analysis';
import { EXPORT_MAX_INSTRUMENTS } from '@bioprocess/shared/exports';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 4, 1, 6);
const READINGS_PER_INSTRUMENT = 30;

describe('read caps', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let unitOperationId: number;
  /** Every statement the api sent to ClickHouse since the last reset. */
  const statements: string[] = [];

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, READ_MAX_INSTRUMENTS + 5);
    unitOperationId = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const data = plant.instrumentIds.flatMap((instrumentId) => Array.from({ length: READINGS_PER_INSTRUMENT }, (_, index) => ({
      measured_at: T0 + index * 1000, instrument_id: instrumentId, float_value: index / 4,
    })));
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(posted.statusCode, posted.body).toBe(200);
    // Counted, then passed on unchanged to the real client.
    const clickhouse = ctx.deps.clickhouse;
    const query = clickhouse.query.bind(clickhouse);
    const exec = clickhouse.exec.bind(clickhouse);
    clickhouse.query = ((params: { query: string }) => { statements.push(params.query); return query(params as never); }) as typeof clickhouse.query;
    clickhouse.exec = ((params: { query: string }) => { statements.push(params.query); return exec(params as never); }) as typeof clickhouse.exec;
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  const get = (url: string) => ctx.request({ method: 'GET', url, token: plant.viewer.token });
  /** The instruments the statements select: single ids, as oneOf writes one instrument (ranges and lists are reported whole). */
  const instrumentsQueried = () => new Set(statements.flatMap((sql) => [
    ...[...sql.matchAll(/instrument_id = (\d+)/g)].map((match) => match[1]!),
    ...[...sql.matchAll(/instrument_id (?:>=|IN) [^)]*\)/g)].map((match) => match[0]),
  ]));

  it('refuses a read of every instrument of an organisation holding more than the cap, naming it, and reads nothing', async () => {
    statements.length = 0;
    const covered = plant.instrumentIds.length;
    for (const url of [
      '/api/v1/time-series-data?limit=100000',
      '/api/v1/time-series-data',
      `/api/v1/time-series-data?equipment_id=${plant.equipmentId}`,
      `/api/v1/unit-operations/${unitOperationId}/time-series-data`,
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error).toContain(`at most ${READ_MAX_INSTRUMENTS} instruments; this one covers ${covered}`);
      expect(response.json().error).toContain('instrument_id');
    }
    expect(statements).toEqual([]);
  });

  it('refuses a read whose instruments x limit exceed the readings cap, and reads nothing', async () => {
    statements.length = 0;
    const limit = Math.floor(READ_MAX_POINTS / 3) + 1;
    const unitOperation = await get(`/api/v1/unit-operations/${unitOperationId}/time-series-data?limit=100000`);
    expect(unitOperation.statusCode).toBe(400);
    const equipment = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?equipment_id=${plant.equipmentId}&limit=100000`, token: plant.viewer.token });
    expect(equipment.statusCode).toBe(400);
    // Three instruments at just over a third of the cap each.
    const { rows } = await ctx.deps.pg.query('SELECT id FROM equipment WHERE organization_id = $1', [plant.organizationId]);
    const pair = await ctx.deps.pg.query(
      `INSERT INTO equipment (organization_id, facility_id, name, type) SELECT organization_id, facility_id, 'Pair', 'bioreactor' FROM equipment WHERE id = $1 RETURNING id`,
      [rows[0].id]);
    const pairId = pair.rows[0].id as number;
    await addInstruments(ctx, plant.organizationId, pairId, 3);
    const response = await get(`/api/v1/time-series-data?equipment_id=${pairId}&limit=${limit}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe(`A read may answer at most ${READ_MAX_POINTS} readings; this one may answer 3 instruments x limit ${limit} = ${3 * limit}. Lower limit or read fewer instruments.`);
    expect(statements).toEqual([]);
  });

  it('streams an accepted read: only its instruments are queried, at most its readings answered, each within the byte bound', async () => {
    const chosen = plant.instrumentIds[3]!;
    statements.length = 0;
    const one = await get(`/api/v1/unit-operations/${unitOperationId}/time-series-data?instrument_id=${chosen}&limit=1000`);
    expect(one.statusCode, one.body).toBe(200);
    const readings = one.json() as Array<{ ts: string; instrument_id: number; value: number | null }>;
    expect(readings).toHaveLength(READINGS_PER_INSTRUMENT);
    expect(new Set(readings.map((reading) => reading.instrument_id))).toEqual(new Set([chosen]));
    expect(readings[4]).toEqual({ ts: new Date(T0 + 4000).toISOString(), instrument_id: chosen, value: 1 });
    // Every statement names the one instrument and no other of the equipment.
    expect(statements.length).toBeGreaterThan(0);
    expect(instrumentsQueried()).toEqual(new Set([String(chosen)]));
    expect(one.rawPayload.length).toBeLessThanOrEqual(readings.length * READ_MAX_READING_BYTES);

    // A bucketed read answers min and max, and never more than `limit` per instrument.
    const bucketed = await get(`/api/v1/time-series-data?instrument_id=${chosen}&limit=5&start_time=${T0}&end_time=${T0 + 29_999}`);
    expect(bucketed.statusCode).toBe(200);
    const buckets = bucketed.json() as Array<{ value: number | null; min: number | null; max: number | null }>;
    expect(buckets.length).toBeLessThanOrEqual(5);
    expect(buckets.every((bucket) => bucket.min !== undefined && bucket.max !== undefined)).toBe(true);
    expect(Math.min(...buckets.map((bucket) => bucket.min!))).toBe(0);
    expect(Math.max(...buckets.map((bucket) => bucket.max!))).toBe((READINGS_PER_INSTRUMENT - 1) / 4);
  });

  it('caps derived series by inputs x limit before reading', async () => {
    statements.length = 0;
    await ctx.deps.pg.query(`UPDATE instruments SET alias = 'inflow' WHERE id = $1`, [plant.instrumentIds[0]]);
    await ctx.deps.pg.query(`UPDATE instruments SET alias = 'outflow' WHERE id = $1`, [plant.instrumentIds[1]]);
    await ctx.deps.pg.query(`UPDATE instruments SET alias = 'bleed' WHERE id = $1`, [plant.instrumentIds[2]]);
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: plant.viewer.token,
      payload: { unit_operation_id: unitOperationId, expression: '[inflow] + [outflow] - [bleed]', limit: 100_000 },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toContain(`at most ${READ_MAX_POINTS} readings; this one may answer 3 instruments x limit 100000`);
    expect(statements).toEqual([]);
    const allowed = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: plant.viewer.token,
      payload: { unit_operation_id: unitOperationId, expression: '[inflow] + [outflow]', limit: 1000 },
    });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json().points).toHaveLength(READINGS_PER_INSTRUMENT);
  });

  it('caps a deviation by grid times x parameters x series before computing statistics', async () => {
    const reference = () => createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 10 * 3_600_000).toISOString() });
    const references = [await reference(), await reference()];
    const target = await reference();
    statements.length = 0;
    // 10 hours at 2 s: 18,001 grid times; six parameters; the envelope and one target.
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: plant.viewer.token,
      payload: {
        reference_unit_operation_ids: references, target_unit_operation_ids: [target], grid_step_seconds: 2,
        parameters: ['temperature', 'pH', 'dissolved_o2', 'stir_rate', 'titer', 'feed_rate'],
      },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe(`An analysis may answer at most ${MAX_ANSWER_VALUES} values; this one may answer 18001 grid times x 6 parameters x 2 `
      + `(the envelope and each target) = ${18001 * 6 * 2}. Choose a larger grid step, fewer parameters or fewer targets.`);
    expect(statements).toEqual([]);
  });

  it('refuses an export covering more instruments than EXPORT_MAX_INSTRUMENTS through its unit operation', async () => {
    const organizationId = plant.organizationId;
    const { rows } = await ctx.deps.pg.query(
      `INSERT INTO equipment (organization_id, facility_id, name, type) SELECT organization_id, facility_id, 'Crowded', 'bioreactor' FROM equipment WHERE id = $1 RETURNING id`,
      [plant.equipmentId]);
    const crowded = rows[0].id as number;
    await ctx.deps.pg.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type, unit)
       SELECT $1, $2, 'Probe ' || n, 'temperature', 'celsius' FROM generate_series(1, $3::int) n`, [organizationId, crowded, EXPORT_MAX_INSTRUMENTS + 1]);
    const unitOperation = await ctx.deps.pg.query(
      `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
       SELECT $1, run_id, 'fermentation', $2, start_time, end_time FROM unit_operations WHERE id = $3 RETURNING id`, [organizationId, crowded, unitOperationId]);
    const editor = await ctx.createUser({ organizationId, role: 'editor' });
    statements.length = 0;
    const response = await ctx.request({ method: 'GET', url: `/api/v1/exports/time-series?unit_operation_id=${unitOperation.rows[0].id}&format=csv-long`, token: editor.token });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe(`An export may cover at most ${EXPORT_MAX_INSTRUMENTS} instruments; this one covers ${EXPORT_MAX_INSTRUMENTS + 1}. Name instruments with instrument_ids.`);
    expect(statements).toEqual([]);
  });
});
