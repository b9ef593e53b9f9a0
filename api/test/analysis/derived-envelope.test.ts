/**
 * Envelopes and deviations of a derived parameter: each reference's formula is evaluated on the grid
 * from the grid averages of its inputs, and the statistics are checked against a brute-force
 * computation from the readings the test wrote. Also: a reference lacking an input or a property is
 * left out, another organisation's derived parameter is a 404, saved golden batches hold derived parameters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deviation, Envelope } from '@bioprocess/shared/analysis';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { addUnitOperation, bruteCells, createSite, percentile, sampled, writeReadings, type PlacedUnitOperation, type Readings, type Site } from './support.ts';

const T = Date.UTC(2025, 3, 7, 6, 0, 0);
const HOUR = 3_600_000;
const DURATION = 2 * HOUR;
const VOLUME = [2, 2.5, 3, 4];

interface Placed {
  placed: PlacedUnitOperation;
  startMs: number;
  endMs: number;
  readings: { temperature: Readings; pH: Readings };
  volume: number;
}

let ctx: TestContext;
let site: Site;
let otherSite: Site;
const references: Placed[] = [];
let withoutPh: PlacedUnitOperation;
let withoutVolume: Placed;
let target: Placed;
let formulaId: number;
let foreignFormulaId: number;

async function place(index: number, startMs: number, everyMs: number, options: { volume?: number | null; drift?: number } = {}): Promise<Placed> {
  const endMs = startMs + DURATION;
  const placed = await addUnitOperation(ctx, site, { startMs, endMs, types: ['temperature', 'pH'], runName: `Derived ${index}` });
  const volume = options.volume === undefined ? VOLUME[index % VOLUME.length]! : options.volume;
  if (volume !== null) {
    await ctx.deps.pg.query('UPDATE unit_operations SET properties = $2 WHERE id = $1', [placed.id, JSON.stringify({ working_volume: volume })]);
  }
  const drift = options.drift ?? 0;
  const temperature = sampled(startMs, endMs + 1, everyMs, (e) => 30 + index + 2 * Math.sin(e / 600_000) + (e > HOUR ? drift : 0));
  const pH = sampled(startMs, endMs + 1, everyMs * 2, (e) => 6.8 + 0.1 * index + 0.0001 * (e / 1000));
  await writeReadings(ctx, site.organizationId, placed.instruments.temperature!, temperature);
  await writeReadings(ctx, site.organizationId, placed.instruments.pH!, pH);
  return { placed, startMs, endMs, readings: { temperature, pH }, volume: volume ?? 0 };
}

beforeAll(async () => {
  ctx = await createTestContext();
  site = await createSite(ctx);
  otherSite = await createSite(ctx);
  references.push(await place(0, T, 1_000));
  references.push(await place(1, T + 3 * HOUR + 17_000, 5_000));
  references.push(await place(2, T + 6 * HOUR + 42_500, 10_000));
  references.push(await place(3, T + 9 * HOUR, 2_000));
  withoutPh = await addUnitOperation(ctx, site, { startMs: T + 12 * HOUR, endMs: T + 14 * HOUR, types: ['temperature'] });
  withoutVolume = await place(4, T + 15 * HOUR, 1_000, { volume: null });
  target = await place(5, T + 18 * HOUR, 1_000, { drift: 40 });
  const created = await ctx.request({
    method: 'POST', url: '/api/v1/derived-parameters', token: site.editor.token,
    payload: { name: 'Heat index', unit: 'K/L', expression: '[temperature] * [pH] / working_volume' },
  });
  expect(created.statusCode, created.body).toBe(201);
  formulaId = created.json().id;
  const foreign = await ctx.request({
    method: 'POST', url: '/api/v1/derived-parameters', token: otherSite.editor.token, payload: { name: 'Foreign', expression: '[temperature] + 1' },
  });
  foreignFormulaId = foreign.json().id;
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

/** Per grid cell of one unit operation: temperature average x pH average / volume, where both exist. */
function bruteDerived(reference: Placed, stepMs: number): Map<number, number> {
  const member = (readings: Readings) => ({ readings, startMs: reference.startMs, endMs: reference.endMs, timeZeroMs: reference.startMs });
  const temperature = bruteCells(member(reference.readings.temperature), stepMs);
  const pH = bruteCells(member(reference.readings.pH), stepMs);
  const values = new Map<number, number>();
  for (const [cell, value] of temperature) {
    const other = pH.get(cell);
    if (other !== undefined) values.set(cell, (value * other) / reference.volume);
  }
  return values;
}

function bruteStatistics(list: readonly Placed[], stepMs: number) {
  const byCell = new Map<number, number[]>();
  for (const reference of list) {
    for (const [cell, value] of bruteDerived(reference, stepMs)) byCell.set(cell, [...(byCell.get(cell) ?? []), value]);
  }
  return [...byCell].sort(([a], [b]) => a - b).map(([cell, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { t: (cell * stepMs) / 1000, count: values.length, median: percentile(sorted, 0.5), lower: percentile(sorted, 0.05), upper: percentile(sorted, 0.95), min: sorted[0]!, max: sorted.at(-1)!, mean: values.reduce((sum, value) => sum + value, 0) / values.length };
  });
}

const ids = (list: readonly Placed[]) => list.map((entry) => entry.placed.id);

async function post(url: string, payload: unknown, token = site.viewer.token) {
  return ctx.request({ method: 'POST', url, token, payload: payload as Record<string, unknown> });
}

describe('derived parameters in Analyze', () => {
  it('an envelope of a derived parameter matches a brute-force evaluation on the grid; references lacking an input or a property are left out', async () => {
    for (const step of [300, 7]) {
      const response = await post('/api/v1/analysis/envelope', {
        reference_unit_operation_ids: [...ids(references), withoutPh.id, withoutVolume.placed.id], parameter: `derived:${formulaId}`, grid_step_seconds: step,
      });
      expect(response.statusCode, response.body).toBe(200);
      const envelope = response.json() as Envelope;
      expect(envelope.parameter).toBe(`derived:${formulaId}`);
      expect(envelope.derived_parameter).toEqual({ id: formulaId, name: 'Heat index', unit: 'K/L', version: 1 });
      expect(envelope.references.map((reference) => [reference.unit_operation_id, reference.instrument_id])).toEqual(ids(references).map((id) => [id, null]));
      expect(envelope.left_out).toEqual([
        { unit_operation_id: withoutPh.id, reason: 'no_instrument' },
        { unit_operation_id: withoutVolume.placed.id, reason: 'no_property' },
      ]);
      const expected = bruteStatistics(references, step * 1000);
      expect(envelope.points.map((point) => point.t)).toEqual(expected.map((point) => point.t));
      for (const [index, point] of envelope.points.entries()) {
        const want = expected[index]!;
        expect(point.count).toBe(want.count);
        for (const key of ['median', 'mean', 'lower', 'upper', 'min', 'max'] as const) expect(point[key]).toBeCloseTo(want[key], 9);
      }
    }
  });

  it('a saved golden batch holds a derived parameter; a deviation ranks the drifting target against it', async () => {
    const saved = await post('/api/v1/golden-batches', {
      name: 'Heat golden', unit_operation_type: 'fermentation', reference_unit_operation_ids: ids(references),
      parameters: ['pH', `derived:${formulaId}`], grid_step_seconds: 300,
    }, site.editor.token);
    expect(saved.statusCode, saved.body).toBe(201);
    expect(saved.json().parameters).toEqual(['pH', `derived:${formulaId}`]);
    const response = await post('/api/v1/analysis/deviation', { golden_batch_id: saved.json().id, target_unit_operation_ids: [target.placed.id] });
    expect(response.statusCode, response.body).toBe(200);
    const deviation = response.json() as Deviation;
    expect(deviation.ranking[0]).toMatchObject({ parameter: `derived:${formulaId}`, unit_operation_id: target.placed.id });
    const derived = deviation.targets[0]!.parameters.find((entry) => entry.parameter === `derived:${formulaId}`)!;
    expect(derived.instrument_id).toBeNull();
    // The target's own values, evaluated like the references'.
    const own = [...bruteDerived(target, 300_000)].map(([cell, value]) => [cell * 300, value]);
    expect(derived.series.length).toBe(own.length);
    derived.series.forEach(([t, value], index) => { expect(t).toBe(own[index]![0]); expect(value).toBeCloseTo(own[index]![1]!, 9); });
    expect(derived.outside).toBeGreaterThan(0);
  });

  it('another organisation\'s derived parameter is a 404; a malformed one is a 400', async () => {
    const foreign = `derived:${foreignFormulaId}`;
    for (const [url, payload, token] of [
      ['/api/v1/analysis/envelope', { reference_unit_operation_ids: ids(references), parameter: foreign }, site.viewer.token],
      ['/api/v1/analysis/deviation', { reference_unit_operation_ids: ids(references), parameters: [foreign], target_unit_operation_ids: [target.placed.id] }, site.viewer.token],
      ['/api/v1/golden-batches', { name: 'Foreign', unit_operation_type: 'fermentation', reference_unit_operation_ids: ids(references), parameters: [foreign] }, site.editor.token],
    ] as const) {
      const response = await post(url, payload, token);
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({ error: 'Derived parameter not found' });
    }
    for (const parameter of ['derived:abc', 'derived:0', 'derived:', 'derived:99999999999999999999']) {
      const response = await post('/api/v1/analysis/envelope', { reference_unit_operation_ids: ids(references), parameter });
      expect(response.statusCode, parameter).toBe(400);
      expect(typeof response.json().error).toBe('string');
    }
    const missing = await post('/api/v1/analysis/envelope', { reference_unit_operation_ids: ids(references), parameter: 'derived:999999999' });
    expect(missing.statusCode).toBe(404);
  });
});

describe('golden batch statistics between requests', () => {
  it('a deviation against a saved batch follows new readings and edits of the batch', async () => {
    const saved = await post('/api/v1/golden-batches', {
      name: 'Kept', unit_operation_type: 'fermentation', reference_unit_operation_ids: ids(references), parameters: ['pH'], grid_step_seconds: 600,
    }, site.editor.token);
    const deviation = async () => {
      const response = await post('/api/v1/analysis/deviation', { golden_batch_id: saved.json().id, target_unit_operation_ids: [target.placed.id] });
      expect(response.statusCode, response.body).toBe(200);
      return (response.json() as Deviation).envelopes[0]!;
    };
    const before = await deviation();
    expect(Math.max(...before.points.map((point) => point.max!))).toBeLessThan(10);
    expect(await deviation()).toEqual(before);
    // A later write replaces the first reference's pH: the next deviation sees it.
    const first = references[0]!;
    await writeReadings(ctx, site.organizationId, first.placed.instruments.pH!, first.readings.pH.map(([ts]) => [ts, 50]));
    const after = await deviation();
    expect(after.points.every((point) => point.max === 50)).toBe(true);
    // An edit of the batch (band) gives other statistics at once.
    const edited = await ctx.request({ method: 'PUT', url: `/api/v1/golden-batches/${saved.json().id}`, token: site.editor.token, payload: { band: { kind: 'sigma', k: 1 } } });
    expect(edited.statusCode).toBe(200);
    const sigma = await deviation();
    expect(sigma.band).toEqual({ kind: 'sigma', k: 1 });
    const point = sigma.points[0]!;
    expect(point.upper! - point.mean!).toBeCloseTo(point.mean! - point.lower!, 9);
    expect(point.upper).not.toBe(after.points[0]!.upper);
  });
});

describe('unit operations sharing an equipment', () => {
  it('each reads the shared instrument only inside its own window (brute force), also for a derived parameter', async () => {
    // Two later runs on the first reference's bioreactor: the same temperature and pH instruments.
    const first = references[0]!;
    const { pg } = ctx.deps;
    const again: Placed[] = [];
    for (const [index, offsetMs] of [[6, 30 * HOUR], [7, 33 * HOUR + 30_000]] as const) {
      const startMs = T + offsetMs;
      const endMs = startMs + DURATION;
      const run = await pg.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, $3, 'titer') RETURNING id`,
        [site.organizationId, site.facilityId, `Shared ${index}`]);
      const { rows } = await pg.query(
        `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time, properties) VALUES ($1, $2, 'fermentation', $3, $4, $5, $6) RETURNING id`,
        [site.organizationId, run.rows[0].id, first.placed.equipmentId, new Date(startMs), new Date(endMs), JSON.stringify({ working_volume: 3 })]);
      const temperature = sampled(startMs - 5 * 60_000, endMs + 5 * 60_000, 3_000, (e) => 25 + index + Math.cos(e / 500_000));
      const pH = sampled(startMs - 5 * 60_000, endMs + 5 * 60_000, 4_000, (e) => 7 + 0.01 * index + 0.00005 * (e / 1000));
      await writeReadings(ctx, site.organizationId, first.placed.instruments.temperature!, temperature);
      await writeReadings(ctx, site.organizationId, first.placed.instruments.pH!, pH);
      again.push({ placed: { ...first.placed, id: Number(rows[0].id) }, startMs, endMs, readings: { temperature, pH }, volume: 3 });
    }
    const response = await post('/api/v1/analysis/envelope', { reference_unit_operation_ids: ids(again), parameter: 'temperature', grid_step_seconds: 120 });
    expect(response.statusCode, response.body).toBe(200);
    const envelope = response.json() as Envelope;
    const cells = again.map((entry) => bruteCells({ readings: entry.readings.temperature, startMs: entry.startMs, endMs: entry.endMs, timeZeroMs: entry.startMs }, 120_000));
    const expected = [...new Set(cells.flatMap((map) => [...map.keys()]))].sort((a, b) => a - b);
    expect(envelope.points.map((point) => point.t)).toEqual(expected.map((cell) => cell * 120));
    for (const point of envelope.points) {
      const values = cells.flatMap((map) => { const value = map.get(point.t / 120); return value === undefined ? [] : [value]; }).sort((a, b) => a - b);
      expect(point.count).toBe(values.length);
      expect(point.min).toBeCloseTo(values[0]!, 9);
      expect(point.max).toBeCloseTo(values.at(-1)!, 9);
    }
    const derived = await post('/api/v1/analysis/envelope', { reference_unit_operation_ids: ids(again), parameter: `derived:${formulaId}`, grid_step_seconds: 120 });
    expect(derived.statusCode, derived.body).toBe(200);
    const expectedDerived = bruteStatistics(again, 120_000);
    expect((derived.json() as Envelope).points.map((point) => [point.t, point.count])).toEqual(expectedDerived.map((point) => [point.t, point.count]));
    (derived.json() as Envelope).points.forEach((point, index) => expect(point.median).toBeCloseTo(expectedDerived[index]!.median, 9));
  });
});
