/**
 * Envelopes and deviations on synthetic unit operations with known shapes, different sampling rates,
 * a gap, nulls, an overwrite and a deleted range: every statistic is checked against a brute-force
 * computation from the readings the test wrote, for each alignment kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope, Deviation } from '@bioprocess/shared/analysis';
import type { InstrumentType } from '@bioprocess/shared/enums';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import {
  addUnitOperation, bruteCells, bruteEnvelope, bruteTolerance, createSite, deleteReadings, sampled, writeReadings,
  type BruteMember, type PlacedUnitOperation, type Readings, type Site,
} from './support.ts';

const T = Date.UTC(2025, 0, 6, 8, 0, 0);
const HOUR = 3_600_000;
const MINUTE = 60_000;
const DURATION = 2 * HOUR;

const shapes: Record<'temperature' | 'pH' | 'dissolved_o2', (i: number) => (elapsedMs: number) => number> = {
  temperature: (i) => (e) => 30 + 0.5 * i + 2 * Math.sin(e / 900_000),
  pH: (i) => (e) => 6.5 + (e / DURATION) * (1 + 0.1 * i),
  dissolved_o2: (i) => (e) => 100 - (e / MINUTE) * (0.5 + 0.1 * i),
};
const TYPES = Object.keys(shapes) as Array<keyof typeof shapes>;

interface Reference {
  placed: PlacedUnitOperation;
  startMs: number;
  endMs: number;
  /** What reads should see per parameter after overwrites and deletions. */
  readings: Record<string, Readings>;
}

let ctx: TestContext;
let site: Site;
const references: Reference[] = [];
let withoutStart: PlacedUnitOperation;
let withoutPh: Reference;
let otherType: PlacedUnitOperation;
let foreign: PlacedUnitOperation;
let target: Reference;

/** Keeps the readings map in step with what a write and a deletion do to the store. */
function applyWrite(current: Readings, written: Readings): Readings {
  const byTs = new Map(current);
  for (const [ts, value] of written) byTs.set(ts, value);
  return [...byTs].sort(([a], [b]) => a - b);
}

async function placeReference(options: { index: number; startMs: number; everyMs: number; gap?: [number, number]; nullEvery?: number; types?: InstrumentType[] }): Promise<Reference> {
  const types = (options.types ?? TYPES) as Array<keyof typeof shapes>;
  const endMs = options.startMs + DURATION;
  const placed = await addUnitOperation(ctx, site, { startMs: options.startMs, endMs, types, runName: `Reference ${options.index}` });
  const readings: Record<string, Readings> = {};
  for (const type of types) {
    const shape = shapes[type](options.index);
    const series = sampled(options.startMs, endMs + 1, options.everyMs, (e) => {
      if (options.gap && e >= options.gap[0] && e < options.gap[1]) return undefined as unknown as null;
      if (options.nullEvery && Math.round(e / options.everyMs) % options.nullEvery === 0) return null;
      return shape(e);
    }).filter(([, value]) => value !== undefined);
    // Readings of the equipment outside the unit operation's window must not count.
    const outside = sampled(options.startMs - 10 * MINUTE, options.startMs, 30_000, () => 1_000);
    await writeReadings(ctx, site.organizationId, placed.instruments[type]!, [...outside, ...series]);
    readings[type] = series;
  }
  return { placed, startMs: options.startMs, endMs, readings };
}

beforeAll(async () => {
  ctx = await createTestContext();
  site = await createSite(ctx);
  references.push(await placeReference({ index: 0, startMs: T, everyMs: 1_000 }));
  references.push(await placeReference({ index: 1, startMs: T + 3 * HOUR + 17_500, everyMs: 5_000 }));
  references.push(await placeReference({ index: 2, startMs: T + 6 * HOUR + 42_000, everyMs: 10_000, gap: [30 * MINUTE, 50 * MINUTE], nullEvery: 7 }));
  const fourth = await placeReference({ index: 3, startMs: T + 9 * HOUR, everyMs: 1_000 });
  // A later write replaces ten minutes of temperature; a range deletion removes five minutes of it.
  const overwrite = sampled(fourth.startMs + 10 * MINUTE, fourth.startMs + 20 * MINUTE, 1_000, (e) => 40 + e / MINUTE);
  await writeReadings(ctx, site.organizationId, fourth.placed.instruments.temperature!, overwrite);
  fourth.readings.temperature = applyWrite(fourth.readings.temperature!, overwrite);
  const deletedFrom = fourth.startMs + 40 * MINUTE + 500;
  const deletedTo = fourth.startMs + 45 * MINUTE + 250;
  await deleteReadings(ctx, site.organizationId, fourth.placed.instruments.temperature!, deletedFrom, deletedTo);
  fourth.readings.temperature = fourth.readings.temperature!.filter(([ts]) => ts < deletedFrom || ts > deletedTo);
  references.push(fourth);

  // Comments mark induction on three references; the fourth has only an unrelated comment.
  for (const [index, reference] of references.entries()) {
    const text = index === 3 ? 'Routine sampling, no inductions here' : index === 1 ? 'INDUCTION with IPTG' : 'Induction started';
    await ctx.deps.pg.query(
      `INSERT INTO comments (organization_id, unit_operations_id, timestamp, content) VALUES ($1, $2, $3, $4)`,
      [site.organizationId, reference.placed.id, new Date(reference.startMs + (20 + 3 * index) * MINUTE + 1_234), text]);
    // A later mention does not move time zero: the first matching comment counts.
    if (index !== 3) {
      await ctx.deps.pg.query(
        `INSERT INTO comments (organization_id, unit_operations_id, timestamp, content) VALUES ($1, $2, $3, 'induction again')`,
        [site.organizationId, reference.placed.id, new Date(reference.startMs + 90 * MINUTE)]);
    }
  }
  withoutStart = await addUnitOperation(ctx, site, { startMs: null, endMs: null, types: ['temperature'] });
  withoutPh = await placeReference({ index: 4, startMs: T + 12 * HOUR, everyMs: 2_000, types: ['temperature'] });
  otherType = await addUnitOperation(ctx, site, { startMs: T, endMs: T + HOUR, types: ['temperature'], unitOperationType: 'centrifugation' });
  const otherSite = await createSite(ctx);
  foreign = await addUnitOperation(ctx, otherSite, { startMs: T, endMs: T + HOUR, types: ['temperature'] });

  // A running target: temperature drifts 5 degrees above its shape after an hour, pH stays inside.
  const startMs = Math.floor(Date.now() / 1000) * 1000 - DURATION;
  const placed = await addUnitOperation(ctx, site, { startMs, endMs: null, types: TYPES, runName: 'Drifting run' });
  const readings: Record<string, Readings> = {};
  for (const type of TYPES) {
    const shape = shapes[type](1.5);
    const drift = type === 'temperature' ? (e: number) => shape(e) + (e >= HOUR ? 5 : 0) : shape;
    readings[type] = sampled(startMs, startMs + DURATION, 1_000, drift);
    await writeReadings(ctx, site.organizationId, placed.instruments[type]!, readings[type]);
  }
  target = { placed, startMs, endMs: startMs + DURATION, readings };
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

async function envelope(body: Record<string, unknown>, token = site.viewer.token): Promise<Envelope> {
  const response = await ctx.request({ method: 'POST', url: '/api/v1/analysis/envelope', token, payload: body });
  if (response.statusCode !== 200) throw new Error(`envelope answered ${response.statusCode}: ${response.body}`);
  return response.json() as Envelope;
}

function expectEnvelope(actual: Envelope, expected: ReturnType<typeof bruteEnvelope>): void {
  expect(actual.points.map((point) => point.t)).toEqual(expected.map((point) => point.t));
  for (const [index, point] of actual.points.entries()) {
    const want = expected[index]!;
    expect(point.count).toBe(want.count);
    for (const key of ['median', 'mean', 'lower', 'upper', 'min', 'max'] as const) {
      if (want[key] === null) expect(point[key]).toBeNull();
      else expect(point[key]).toBeCloseTo(want[key], 9);
    }
  }
}

const members = (list: readonly Reference[], parameter: string, timeZero: (reference: Reference) => number = (reference) => reference.startMs): BruteMember[] =>
  list.map((reference) => ({ readings: reference.readings[parameter]!, startMs: reference.startMs, endMs: reference.endMs, timeZeroMs: timeZero(reference) }));

const ids = (list: ReadonlyArray<{ placed: PlacedUnitOperation }>) => list.map((reference) => reference.placed.id);

describe('envelope', () => {
  it('matches a brute-force computation on a minute grid (rollups), aligned on start, P5-P95', async () => {
    const result = await envelope({ reference_unit_operation_ids: ids(references), parameter: 'temperature', grid_step_seconds: 300 });
    expect(result.grid_step_seconds).toBe(300);
    expect(result.left_out).toEqual([]);
    expect(result.references.map((reference) => reference.unit_operation_id)).toEqual(ids(references));
    expectEnvelope(result, bruteEnvelope(members(references, 'temperature'), 300_000, { kind: 'percentiles', lower: 5, upper: 95 }));
  });

  it('matches on a grid of seconds (raw points) with a P16-P84 band', async () => {
    const result = await envelope({
      reference_unit_operation_ids: ids(references), parameter: 'temperature', grid_step_seconds: 7, band: { kind: 'percentiles', lower: 16, upper: 84 },
    });
    expectEnvelope(result, bruteEnvelope(members(references, 'temperature'), 7_000, { kind: 'percentiles', lower: 16, upper: 84 }));
  });

  it('matches with mean +/- k sigma and the default grid step, and leaves out min/max on request', async () => {
    const result = await envelope({
      reference_unit_operation_ids: ids(references), parameter: 'dissolved_o2', band: { kind: 'sigma', k: 1.5 }, show_min_max: false,
    });
    expect(result.grid_step_seconds).toBe(8); // two hours over about a thousand steps
    const expected = bruteEnvelope(members(references, 'dissolved_o2'), 8_000, { kind: 'sigma', k: 1.5 });
    expectEnvelope({ ...result, points: result.points.map((point, index) => ({ ...point, min: expected[index]!.min, max: expected[index]!.max })) }, expected);
    expect(result.points.every((point) => point.min === null && point.max === null)).toBe(true);
  });

  it('aligns on the first comment naming a word; references without it, or without a start, are left out', async () => {
    const result = await envelope({
      reference_unit_operation_ids: [...ids(references), withoutStart.id], parameter: 'temperature', grid_step_seconds: 60, alignment: { kind: 'event', word: 'induction' },
    });
    expect(result.left_out).toEqual([
      { unit_operation_id: references[3]!.placed.id, reason: 'event_not_found' },
      { unit_operation_id: withoutStart.id, reason: 'no_start' },
    ]);
    const aligned = references.slice(0, 3);
    const timeZero = (reference: Reference) => reference.startMs + (20 + 3 * references.indexOf(reference)) * MINUTE + 1_234;
    expect(result.references.map((reference) => reference.time_zero)).toEqual(aligned.map((reference) => new Date(timeZero(reference)).toISOString()));
    expect(result.points.some((point) => point.t < 0)).toBe(true);
    expectEnvelope(result, bruteEnvelope(members(aligned, 'temperature', timeZero), 60_000, { kind: 'percentiles', lower: 5, upper: 95 }));
  });

  it('aligns on a threshold crossing upward and downward; a reference that never crosses, or lacks the parameter, is left out', async () => {
    const firstCrossing = (readings: Readings, value: number, up: boolean) => {
      let seenOtherSide = false;
      for (const [ts, reading] of readings) {
        if (reading === null) continue;
        if (up ? reading < value : reading > value) seenOtherSide = true;
        else if (seenOtherSide) return ts;
      }
      return null;
    };
    const upward = await envelope({
      reference_unit_operation_ids: [...ids(references), withoutPh.placed.id], parameter: 'temperature', grid_step_seconds: 120,
      alignment: { kind: 'threshold', parameter: 'pH', value: 7.55, direction: 'up' },
    });
    // Reference 0's pH stays below 7.55; the extra reference has no pH probe.
    expect(upward.left_out).toEqual([
      { unit_operation_id: references[0]!.placed.id, reason: 'event_not_found' },
      { unit_operation_id: withoutPh.placed.id, reason: 'no_instrument' },
    ]);
    const crossing = (reference: Reference) => firstCrossing(reference.readings.pH!, 7.55, true)!;
    expect(upward.references.map((reference) => reference.time_zero)).toEqual(references.slice(1).map((reference) => new Date(crossing(reference)).toISOString()));
    expectEnvelope(upward, bruteEnvelope(members(references.slice(1), 'temperature', crossing), 120_000, { kind: 'percentiles', lower: 5, upper: 95 }));

    const downward = await envelope({
      reference_unit_operation_ids: ids(references), parameter: 'pH', grid_step_seconds: 30,
      alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 60, direction: 'down' },
    });
    const falling = (reference: Reference) => firstCrossing(reference.readings.dissolved_o2!, 60, false)!;
    expect(downward.left_out).toEqual([]);
    expectEnvelope(downward, bruteEnvelope(members(references, 'pH', falling), 30_000, { kind: 'percentiles', lower: 5, upper: 95 }));
  });

  it('an explicit instrument overrides the one the equipment gives', async () => {
    // Reading reference 1's temperature from reference 0's probe (a window with no data there) leaves it without data.
    const result = await envelope({
      reference_unit_operation_ids: ids(references), parameter: 'temperature', grid_step_seconds: 300,
      instrument_overrides: [{ unit_operation_id: references[1]!.placed.id, instrument_id: references[0]!.placed.instruments.temperature! }],
    });
    expect(result.left_out).toEqual([{ unit_operation_id: references[1]!.placed.id, reason: 'no_data' }]);
  });

  it('answers 404 for another organisation\'s unit operation or instrument, 400 for bad input', async () => {
    const request = (body: Record<string, unknown>) => ctx.request({ method: 'POST', url: '/api/v1/analysis/envelope', token: site.viewer.token, payload: body });
    const foreignReference = await request({ reference_unit_operation_ids: [references[0]!.placed.id, foreign.id], parameter: 'temperature' });
    expect(foreignReference.statusCode).toBe(404);
    expect(foreignReference.json()).toEqual({ error: 'Unit operation not found' });
    const foreignInstrument = await request({
      reference_unit_operation_ids: ids(references), parameter: 'temperature', instrument_overrides: [{ unit_operation_id: references[0]!.placed.id, instrument_id: foreign.instruments.temperature! }],
    });
    expect(foreignInstrument.statusCode).toBe(404);
    for (const body of [
      { reference_unit_operation_ids: [references[0]!.placed.id], parameter: 'temperature' },
      { reference_unit_operation_ids: ids(references), parameter: 'nonsense' },
      { reference_unit_operation_ids: ids(references), parameter: 'temperature', band: { kind: 'percentiles', lower: 90, upper: 10 } },
      { reference_unit_operation_ids: ids(references), parameter: 'temperature', alignment: { kind: 'event', word: "x') OR 1=1 --" } },
      { reference_unit_operation_ids: ids(references), parameter: 'temperature', grid_step_seconds: 1, alignment: { kind: 'start' } },
      { reference_unit_operation_ids: [references[0]!.placed.id, otherType.id], parameter: 'temperature' },
    ]) {
      const response = await request(body);
      if (body.grid_step_seconds === 1) {
        // Two hours at one second is 7,201 grid times: allowed.
        expect(response.statusCode).toBe(200);
        continue;
      }
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(typeof response.json().error).toBe('string');
    }
  });
});

describe('deviation', () => {
  it('ranks the drifting parameter of a running target first, with shares and excursions from the brute-force envelope widened to its tolerance', async () => {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: site.viewer.token,
      payload: { reference_unit_operation_ids: ids(references), parameters: 'all', grid_step_seconds: 60, target_unit_operation_ids: [target.placed.id] },
    });
    expect(response.statusCode, response.body).toBe(200);
    const deviation = response.json() as Deviation;
    expect(deviation.envelopes.map((envelope) => envelope.parameter)).toEqual(['dissolved_o2', 'pH', 'temperature']);
    expect(deviation.ranking[0]).toMatchObject({ parameter: 'temperature', unit_operation_id: target.placed.id });
    const [result] = deviation.targets;
    for (const parameter of TYPES) {
      const expectedEnvelope = bruteEnvelope(members(references, parameter), 60_000, { kind: 'percentiles', lower: 5, upper: 95 });
      const tolerance = bruteTolerance(members(references, parameter), 60_000, expectedEnvelope, 'median');
      const envelope = deviation.envelopes.find((entry) => entry.parameter === parameter)!;
      expect(envelope.tolerance.value!, parameter).toBeCloseTo(tolerance, 9);
      for (const point of expectedEnvelope) {
        point.lower = Math.min(point.lower!, point.median - tolerance);
        point.upper = Math.max(point.upper!, point.median + tolerance);
      }
      expect(envelope.points.map((point) => point.compared_lower)).toEqual(expectedEnvelope.map((point) => expect.closeTo(point.lower!, 9)));
      const cells = bruteCells({ readings: target.readings[parameter]!, startMs: target.startMs, endMs: Date.now(), timeZeroMs: target.startMs }, 60_000);
      let compared = 0;
      const outside: Array<{ t: number; value: number; distance: number; bandWidths: number }> = [];
      for (const point of expectedEnvelope) {
        const value = cells.get(point.t / 60);
        if (value === undefined || point.count < 2) continue;
        compared += 1;
        if (value < point.lower! || value > point.upper!) {
          const distance = value < point.lower! ? point.lower! - value : value - point.upper!;
          outside.push({ t: point.t, value, distance, bandWidths: distance / (point.upper! - point.lower!) });
        }
      }
      const actual = result!.parameters.find((entry) => entry.parameter === parameter)!;
      expect(actual.compared, parameter).toBe(compared);
      expect(actual.outside, parameter).toBe(outside.length);
      expect(actual.first_excursion?.t ?? null).toBe(outside[0]?.t ?? null);
      // The largest excursion is the one furthest outside in widths of the band where it happens.
      const largest = outside.reduce<typeof outside[number] | null>((best, entry) => (!best || entry.bandWidths > best.bandWidths ? entry : best), null);
      if (largest) expect(actual.largest_excursion!.distance).toBeCloseTo(largest.distance, 9);
      else expect(actual.largest_excursion).toBeNull();
    }
    const temperature = result!.parameters.find((entry) => entry.parameter === 'temperature')!;
    expect(temperature.share_outside).toBeGreaterThan(0.3);
    expect(temperature.flagged).toBe(true);
    expect(temperature.reason).toMatch(/^outside for [\d.]+ h, up to [\d.]+ band widths above at \d+:\d\d, from \d+:\d\d/);
    expect(temperature.largest_excursion).toMatchObject({ bound: 'upper' });
    expect(temperature.largest_excursion!.t).toBeGreaterThanOrEqual(3_600);
  });

  it('lists a target without its event as left out, and refuses a target of another type', async () => {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: site.viewer.token,
      payload: { reference_unit_operation_ids: ids(references), parameters: ['temperature'], alignment: { kind: 'event', word: 'induction' }, target_unit_operation_ids: [target.placed.id] },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().targets_left_out).toEqual([{ unit_operation_id: target.placed.id, reason: 'event_not_found' }]);
    const mixed = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: site.viewer.token,
      payload: { reference_unit_operation_ids: ids(references), parameters: 'all', target_unit_operation_ids: [otherType.id] },
    });
    expect(mixed.statusCode).toBe(400);
    const foreignTarget = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: site.viewer.token,
      payload: { reference_unit_operation_ids: ids(references), parameters: 'all', target_unit_operation_ids: [foreign.id] },
    });
    expect(foreignTarget.statusCode).toBe(404);
  });
});
