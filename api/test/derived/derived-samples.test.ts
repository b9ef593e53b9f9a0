/**
 * Derived parameters over sample analytes, through the real api, PostgreSQL, ingest-worker and
 * ClickHouse: a specific glucose consumption rate over daily samples against a hand calculation, sample
 * analytes put on an instrument's grid by interpolation or by the last value, the choice kept per formula
 * and version, flagged results as gaps, and the 400s of unknown or ambiguous analytes.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SampleInput } from '@bioprocess/shared/samples';
import type { DerivedSeries } from '@bioprocess/shared/derived/contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';

const T0 = Date.UTC(2025, 4, 5, 8);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Daily samples of a fed-batch: glucose falls, cells grow; on day 3 glucose is below the analyzer's limit. */
const DAILY: Array<{ day: number; glucose: number | '< 0.5'; vcd: number }> = [
  { day: 0, glucose: 6, vcd: 1 },
  { day: 1, glucose: 5, vcd: 2 },
  { day: 2, glucose: 2.6, vcd: 4 },
  { day: 3, glucose: '< 0.5', vcd: 5 },
];

function sampleOf({ day, glucose, vcd }: (typeof DAILY)[number]): SampleInput {
  return {
    sample_id: `D${day}`, drawn_at: new Date(T0 + day * DAY).toISOString(),
    results: [
      glucose === '< 0.5'
        ? { analyte: 'Glucose', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio' }
        : { analyte: 'Glucose', value: glucose, unit: 'g/L', method: 'Cedex Bio' },
      { analyte: 'VCD', value: vcd, unit: '10*6/mL', method: 'Vi-CELL BLU' },
    ],
  };
}

function expectValues(series: DerivedSeries, expected: Array<number | null>) {
  const actual = series.points.map((point) => point.value);
  expect(actual.length).toBe(expected.length);
  actual.forEach((value, i) => {
    if (expected[i] === null) expect(value, `point ${i}`).toBeNull();
    else expect(value, `point ${i}`).toBeCloseTo(expected[i]!, 12);
  });
}

describe('derived parameters over samples', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let organizationId: number;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let unitOperationId: number;
  let runId: number;
  let equipmentId: number;

  async function createFormula(payload: Record<string, unknown>): Promise<{ id: number; version: number; sample_values: string }> {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/derived-parameters', token: editor.token, payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }

  async function series(formulaId: number, token = viewer.token): Promise<DerivedSeries> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${formulaId}`, token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  async function preview(expression: string, sampleValues: string, id = unitOperationId) {
    return ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: viewer.token,
      payload: { expression, sample_values: sampleValues, unit_operation_id: id },
    });
  }

  async function createUnitOperation(start: number, end: number): Promise<number> {
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/unit-operations', token: editor.token,
      payload: { run_id: runId, type: 'fermentation', equipment_id: equipmentId, start_time: new Date(start).toISOString(), end_time: new Date(end).toISOString() },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().id;
  }

  async function saveSamples(id: number, samples: SampleInput[]) {
    const saved = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${id}/samples`, token: editor.token, payload: { samples } });
    expect(saved.statusCode, saved.body).toBe(200);
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    organizationId = await ctx.createOrganization();
    editor = await ctx.createUser({ organizationId, role: 'editor' });
    viewer = await ctx.createUser({ organizationId, role: 'viewer' });
    outsider = await ctx.createUser({ organizationId: await ctx.createOrganization(), role: 'admin' });
    const facility = await ctx.deps.pg.query(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Lab', 'lab') RETURNING id`, [organizationId]);
    const equipment = await ctx.deps.pg.query(
      `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
      [organizationId, facility.rows[0].id, `BR ${randomBytes(2).toString('hex')}`]);
    equipmentId = equipment.rows[0].id as number;
    const instrument = await ctx.deps.pg.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type, unit) VALUES ($1, $2, 'BR temperature', 'temperature', 'Cel') RETURNING id`,
      [organizationId, equipmentId]);
    const run = await ctx.deps.pg.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Fed-batch', 'titer') RETURNING id`, [organizationId, facility.rows[0].id]);
    runId = run.rows[0].id as number;
    unitOperationId = await createUnitOperation(T0, T0 + 3 * DAY);
    await saveSamples(unitOperationId, DAILY.map(sampleOf));
    // A temperature reading every 6 hours: the grid a formula mixing it with samples is computed on.
    const data = Array.from({ length: 13 }, (_, i) => ({ ts: new Date(T0 + i * 6 * HOUR).toISOString(), instrument_id: instrument.rows[0].id, value: 37 }));
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: editor.token, payload: { data } });
    expect(posted.statusCode, posted.body).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  it('computes a specific glucose consumption rate over daily samples as a hand calculation does', async () => {
    const formula = await createFormula({ name: 'qGlc', unit: 'g/10*9 cells/d', expression: `-time_derivative(sample("Glucose"), 'd') / sample("VCD")` });
    expect(formula.sample_values).toBe('interpolate');
    const result = await series(formula.id);
    expect(result.points.map((point) => point.ts)).toEqual(DAILY.map(({ day }) => new Date(T0 + day * DAY).toISOString()));
    // qGlc on day d = -(Glc(d) - Glc(d-1)) / 1 day / VCD(d); none on day 0 (no earlier sample) nor day 3 (glucose below the limit).
    const day1 = -(5 - 6) / 1 / 2;
    const day2 = -(2.6 - 5) / 1 / 4;
    expect(day1).toBe(0.5);
    expectValues(result, [null, day1, day2, null]);
    expect(result.sample_inputs).toEqual([
      { reference: 'sample("Glucose")', analyte: 'Glucose', unit: 'g/L', samples: 4 },
      { reference: 'sample("VCD")', analyte: 'VCD', unit: '10*6/mL', samples: 4 },
    ]);
    expect(result.inputs).toEqual([]);
  });

  it("puts samples on an instrument's grid by interpolation or by the last value, as the formula chooses", async () => {
    const expression = '[temperature] * 0 + sample("glucose")';
    const interpolated = await preview(expression, 'interpolate');
    expect(interpolated.statusCode, interpolated.body).toBe(200);
    expect(interpolated.json().points).toHaveLength(13);
    // Every 6 h: a quarter of the way from one day's sample to the next; nothing between day 2 and the flagged day 3.
    const between = (from: number, to: number) => [from, from + (to - from) / 4, from + (to - from) / 2, from + (3 * (to - from)) / 4];
    expectValues(interpolated.json(), [...between(6, 5), ...between(5, 2.6), 2.6, null, null, null, null]);
    const last = await preview(expression, 'last');
    expect(last.statusCode, last.body).toBe(200);
    expectValues(last.json(), [6, 6, 6, 6, 5, 5, 5, 5, 2.6, 2.6, 2.6, 2.6, null]);
    expect(last.json().sample_values).toBe('last');
  });

  it('keeps the choice with each version of the formula', async () => {
    const formula = await createFormula({ name: 'Glucose held', expression: 'sample("Glucose", "g/L")', sample_values: 'last' });
    expect(formula.sample_values).toBe('last');
    const edited = await ctx.request({ method: 'PUT', url: `/api/v1/derived-parameters/${formula.id}`, token: editor.token, payload: { sample_values: 'interpolate' } });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ version: 2, sample_values: 'interpolate', expression: 'sample("Glucose", "g/L")' });
    const versions = await ctx.request({ method: 'GET', url: `/api/v1/derived-parameters/${formula.id}/versions`, token: viewer.token });
    expect(versions.json().map((version: { version: number; sample_values: string }) => [version.version, version.sample_values])).toEqual([[2, 'interpolate'], [1, 'last']]);
    // Over samples alone the formula is computed at the drawn times, the flagged day a gap.
    expectValues(await series(formula.id), [6, 5, 2.6, null]);
    const bad = await ctx.request({ method: 'PUT', url: `/api/v1/derived-parameters/${formula.id}`, token: editor.token, payload: { sample_values: 'spline' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/sample_values/);
  });

  it('answers 400 naming an unknown analyte, an analyte stored in two units, or a malformed sample reference', async () => {
    const unknown = await preview('sample("Lactate")', 'interpolate');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatch(/Unknown sample analyte sample\("Lactate"\)/);
    const twoUnits = await createUnitOperation(T0 + 4 * DAY, T0 + 6 * DAY);
    await saveSamples(twoUnits, [
      { sample_id: 'M1', drawn_at: new Date(T0 + 4 * DAY).toISOString(), results: [{ analyte: 'Glucose', value: 30, unit: 'mmol/L' }] },
      { sample_id: 'M2', drawn_at: new Date(T0 + 5 * DAY).toISOString(), results: [{ analyte: 'Glucose', value: 5, unit: 'g/L' }] },
    ]);
    const ambiguous = await preview('sample("Glucose")', 'interpolate', twoUnits);
    expect(ambiguous.statusCode).toBe(400);
    expect(ambiguous.json().error).toMatch(/stored in 2 units \(mmol\/L, g\/L\): name one/);
    const named = await preview('sample("Glucose", "mmol/L")', 'interpolate', twoUnits);
    expect(named.statusCode, named.body).toBe(200);
    expectValues(named.json(), [30]);
    for (const expression of ['sample(Glucose)', 'sample()', 'sample("Glucose", "g/L", "x")']) {
      const malformed = await ctx.request({ method: 'POST', url: '/api/v1/derived-parameters', token: editor.token, payload: { name: `bad ${expression}`, expression } });
      expect(malformed.statusCode, expression).toBe(400);
      expect(malformed.json().error, expression).toMatch(/sample takes an analyte/);
    }
  });

  it('is refused by Analyze, whose envelopes do not take sparse sample values yet', async () => {
    const formula = await createFormula({ name: 'Glucose for Analyze', expression: 'sample("Glucose", "g/L")' });
    const second = await createUnitOperation(T0 + 7 * DAY, T0 + 10 * DAY);
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/envelope', token: viewer.token,
      payload: { reference_unit_operation_ids: [unitOperationId, second], parameter: `derived:${formula.id}` },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatch(/Analyze does not take formulas over samples yet/);
  });

  it("reads only the unit operation's own samples: another organisation's unit operation is 404", async () => {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: outsider.token,
      payload: { expression: 'sample("Glucose")', unit_operation_id: unitOperationId },
    });
    expect(response.statusCode).toBe(404);
  });
});
