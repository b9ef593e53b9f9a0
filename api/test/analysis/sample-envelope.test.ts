/**
 * Sample analytes in Analyze: each reference's glucose samples interpolated linearly onto the grid
 * between its first and last sample (never beyond), then the same statistics as any parameter. The
 * envelope is checked against values computed by hand; flagged results and results in another unit
 * are left out; a reference without the analyte is `no_data`; a saved golden batch holds the analyte
 * and the deviation ranks a target whose glucose runs low.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deviation, Envelope } from '@bioprocess/shared/analysis';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { addUnitOperation, createSite, type PlacedUnitOperation, type Site } from './support.ts';
import { interpolateOntoGrid } from '../../src/analysis/sample-grid.ts';

const T = Date.UTC(2025, 4, 5, 6, 0, 0);
const HOUR = 3_600_000;

let ctx: TestContext;
let site: Site;
const references: PlacedUnitOperation[] = [];
let withoutSamples: PlacedUnitOperation;
let target: PlacedUnitOperation;

async function withSamples(startMs: number, samples: Array<[hours: number, value: number, flag?: 'below_limit', unit?: string]>): Promise<PlacedUnitOperation> {
  const placed = await addUnitOperation(ctx, site, { startMs, endMs: startMs + 10 * HOUR, types: ['temperature'] });
  const response = await ctx.request({
    method: 'PUT', url: `/api/v1/unit-operations/${placed.id}/samples`, token: site.editor.token,
    payload: {
      samples: samples.map(([hours, value, flag, unit], index) => ({
        sample_id: `S${index}`, drawn_at: new Date(startMs + hours * HOUR).toISOString(),
        results: [{ analyte: index === 0 ? 'glucose' : 'Glucose', value, flag: flag ?? null, unit: unit ?? 'g/L' }],
      })),
    },
  });
  expect(response.statusCode, response.body).toBe(200);
  return placed;
}

beforeAll(async () => {
  ctx = await createTestContext();
  site = await createSite(ctx);
  // Glucose falling from 6 g/L, sampled at different hours in each reference.
  references.push(await withSamples(T, [[0, 6], [4, 4], [8, 2]]));
  references.push(await withSamples(T + 20 * HOUR, [[1, 5], [5, 3], [9, 1]]));
  // A flagged result and one in another unit are not values of the envelope.
  references.push(await withSamples(T + 40 * HOUR, [[0, 7], [2, 0.5, 'below_limit'], [6, 4], [7, 9, undefined, 'mmol/L']]));
  withoutSamples = await addUnitOperation(ctx, site, { startMs: T + 60 * HOUR, endMs: T + 70 * HOUR, types: ['temperature'] });
  target = await withSamples(T + 80 * HOUR, [[0, 3], [4, 1], [8, 0.2]]);
}, 60_000);

afterAll(async () => {
  await ctx?.close();
});

async function post(url: string, payload: unknown, token = site.viewer.token) {
  return ctx.request({ method: 'POST', url, token, payload: payload as Record<string, unknown> });
}

describe('sample analytes in Analyze', () => {
  it('interpolates between samples at the grid step starts, never beyond the first and last', () => {
    expect(interpolateOntoGrid([[1_000, 2], [5_000, 6]], 0, 2_000)).toEqual([[1, 3], [2, 5]]);
    expect(interpolateOntoGrid([[0, 1], [0, 3], [4_000, 6]], 0, 1_000)).toEqual([[0, 2], [1, 3], [2, 4], [3, 5], [4, 6]]);
    expect(interpolateOntoGrid([[500, 9]], 0, 1_000)).toEqual([]);
    expect(interpolateOntoGrid([], 0, 1_000)).toEqual([]);
  });

  it('an envelope of a sample analyte matches hand-computed statistics per hour', async () => {
    const response = await post('/api/v1/analysis/envelope', {
      reference_unit_operation_ids: [...references.map((entry) => entry.id), withoutSamples.id], parameter: 'sample:Glucose',
      grid_step_seconds: 3600, band: { kind: 'sigma', k: 1 }, show_min_max: true,
    });
    expect(response.statusCode, response.body).toBe(200);
    const envelope = response.json() as Envelope;
    expect(envelope.references.map((entry) => [entry.unit_operation_id, entry.instrument_id])).toEqual(references.map((entry) => [entry.id, null]));
    expect(envelope.left_out).toEqual([{ unit_operation_id: withoutSamples.id, reason: 'no_data' }]);
    // Per hour: reference 1 is 6 - 0.5 h (0..8 h), reference 2 is 5.5 - 0.5 h (1..9 h), reference 3 is
    // 7 - 0.5 h (0..6 h; its flagged 2 h and mmol/L 7 h results are not values).
    const byHand: Array<[number, number[]]> = [
      [0, [6, 7]], [1, [5.5, 5, 6.5]], [2, [5, 4.5, 6]], [3, [4.5, 4, 5.5]], [4, [4, 3.5, 5]], [5, [3.5, 3, 4.5]],
      [6, [3, 2.5, 4]], [7, [2.5, 2]], [8, [2, 1.5]], [9, [1]],
    ];
    expect(envelope.points.map((point) => point.t)).toEqual(byHand.map(([hour]) => hour * 3600));
    for (const [index, [, values]] of byHand.entries()) {
      const point = envelope.points[index]!;
      const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
      const sd = values.length < 2 ? null : Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1));
      expect(point.count).toBe(values.length);
      expect(point.mean).toBeCloseTo(mean, 12);
      expect(point.min).toBe(Math.min(...values));
      expect(point.max).toBe(Math.max(...values));
      if (sd === null) {
        expect(point.lower).toBeNull();
      } else {
        expect(point.lower).toBeCloseTo(mean - sd, 12);
        expect(point.upper).toBeCloseTo(mean + sd, 12);
      }
    }
    // Hour 2 by hand: values 5, 4.5, 6; mean 5.1667, sample deviation 0.7638.
    expect(envelope.points[2]!.mean).toBeCloseTo(5.166_666_666_7, 9);
    expect(envelope.points[2]!.upper! - envelope.points[2]!.mean!).toBeCloseTo(0.763_762_615_8, 9);
  });

  it('a golden batch holds a sample analyte and the deviation ranks a target whose glucose runs low', async () => {
    const saved = await post('/api/v1/golden-batches', {
      name: 'Glucose golden', unit_operation_type: 'fermentation', reference_unit_operation_ids: references.map((entry) => entry.id),
      parameters: ['sample:Glucose'], grid_step_seconds: 3600, band: { kind: 'sigma', k: 1 },
    }, site.editor.token);
    expect(saved.statusCode, saved.body).toBe(201);
    expect(saved.json().parameters).toEqual(['sample:Glucose']);
    const response = await post('/api/v1/analysis/deviation', { golden_batch_id: saved.json().id, target_unit_operation_ids: [target.id] });
    expect(response.statusCode, response.body).toBe(200);
    const deviation = response.json() as Deviation;
    expect(deviation.ranking).toHaveLength(1);
    expect(deviation.ranking[0]).toMatchObject({ parameter: 'sample:Glucose', unit_operation_id: target.id });
    const glucose = deviation.targets[0]!.parameters[0]!;
    expect(glucose.instrument_id).toBeNull();
    // The target's own interpolation: 3 - 0.5 h to 4 h, then 1 - 0.2 h to 8 h.
    expect(glucose.series).toEqual([[0, 3], [3600, 2.5], [7200, 2], [10800, 1.5], [14400, 1], [18000, 0.8], [21600, 0.6], [25200, 0.4], [28800, 0.2]]
      .map(([t, value]) => [t, expect.closeTo(value!, 12)]));
    expect(glucose.outside).toBeGreaterThan(0);
    expect(glucose.flagged).toBe(true);

    const bad = await post('/api/v1/analysis/envelope', { reference_unit_operation_ids: references.map((entry) => entry.id), parameter: 'sample: ' });
    expect(bad.statusCode).toBe(400);
  });
});
