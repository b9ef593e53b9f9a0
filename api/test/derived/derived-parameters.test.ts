/**
 * Derived parameters through the real api, PostgreSQL, ingest-worker and ClickHouse: every built-in
 * formula against a calculation written out here, versions and audit, roles, organisation isolation,
 * and the 400s of bad formulas.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';

const T0 = Date.UTC(2025, 2, 3, 8);
const MINUTE = 60_000;
const STEPS = 180;
const PROPERTIES = { working_volume: 2.5, feed_concentration: 500, biomass_per_od: 0.4 };
const INLET_O2 = 0.2095;
const INLET_CO2 = 0.0004;

/** Synthetic off-gas, air flow, OD and feed signals, one reading a minute. */
const signals = {
  exhaust_o2: (i: number) => 20.9 - 2 * Math.sin(i / 40) ** 2,
  exhaust_co2: (i: number) => 0.04 + 1.5 * Math.sin(i / 40) ** 2,
  gas_flow_rate: (i: number) => 2 + 0.01 * i,
  optical_density: (i: number) => 0.5 * Math.exp(0.3 * i / 60),
  feed_rate: (i: number) => (i < 60 ? 0 : 0.5 + 0.002 * i),
} as const;
type Signal = keyof typeof signals;

interface DerivedSeries {
  version: number | null;
  inputs: Array<{ reference: string; instrument_id: number }>;
  bucket_ms: number | null;
  points: Array<{ ts: string; value: number | null }>;
}

function expectClose(actual: Array<number | null>, expected: Array<number | null>) {
  expect(actual.length).toBe(expected.length);
  actual.forEach((value, i) => {
    const wanted = expected[i];
    if (wanted === null || wanted === undefined || !Number.isFinite(wanted)) {
      expect(value, `point ${i}`).toBeNull();
      return;
    }
    expect(value, `point ${i}`).not.toBeNull();
    const scale = Math.max(Math.abs(wanted), 1e-12);
    expect(Math.abs(value! - wanted) / scale, `point ${i}: ${value} vs ${wanted}`).toBeLessThan(1e-9);
  });
}

describe('derived parameters', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let organizationId: number;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let unitOperationId: number;
  let instrumentIds: Record<Signal, number>;

  async function library(token = editor.token): Promise<Array<{ id: number; name: string; library_key: string | null; version: number }>> {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/derived-parameters', token });
    expect(response.statusCode).toBe(200);
    return response.json();
  }

  async function derived(id: number, token = editor.token, query = ''): Promise<DerivedSeries> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${id}${query}`, token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    organizationId = await ctx.createOrganization();
    editor = await ctx.createUser({ organizationId, role: 'editor' });
    viewer = await ctx.createUser({ organizationId, role: 'viewer' });
    outsider = await ctx.createUser({ organizationId: await ctx.createOrganization(), role: 'admin' });
    const facility = await ctx.deps.pg.query(
      `INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Lab', 'lab') RETURNING id`, [organizationId]);
    const equipment = await ctx.deps.pg.query(
      `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
      [organizationId, facility.rows[0].id, `BR ${randomBytes(2).toString('hex')}`]);
    const equipmentId = equipment.rows[0].id as number;
    instrumentIds = {} as Record<Signal, number>;
    for (const type of Object.keys(signals) as Signal[]) {
      const { rows } = await ctx.deps.pg.query(
        'INSERT INTO instruments (organization_id, equipment_id, name, type, unit) VALUES ($1, $2, $3, $4, NULL) RETURNING id',
        [organizationId, equipmentId, `BR ${type}`, type]);
      instrumentIds[type] = rows[0].id as number;
    }
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Fed-batch', 'titer') RETURNING id`,
      [organizationId, facility.rows[0].id]);
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/unit-operations', token: editor.token,
      payload: {
        run_id: run.rows[0].id, type: 'fermentation', equipment_id: equipmentId,
        start_time: new Date(T0).toISOString(), end_time: new Date(T0 + (STEPS - 1) * MINUTE).toISOString(), properties: PROPERTIES,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().properties).toEqual(PROPERTIES);
    unitOperationId = created.json().id;

    const data = (Object.keys(signals) as Signal[]).flatMap((type) => Array.from({ length: STEPS }, (_, i) => ({
      ts: new Date(T0 + i * MINUTE).toISOString(), instrument_id: instrumentIds[type], value: signals[type](i),
    })));
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: editor.token, payload: { data } });
    expect(posted.statusCode, posted.body).toBe(200);
  });

  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('gives every organisation editable copies of the built-in library, once', async () => {
    const first = await library();
    expect(first.map((entry) => entry.library_key).sort()).toEqual(
      ['biomass_yield', 'cer', 'cumulative_feed', 'our', 'rq', 'specific_growth_rate']);
    const rq = first.find((entry) => entry.library_key === 'rq')!;
    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/derived-parameters/${rq.id}`, token: editor.token });
    expect(deleted.statusCode).toBe(204);
    expect((await library()).some((entry) => entry.library_key === 'rq')).toBe(false);
    // Another organisation has its own copies, and never sees these.
    const theirs = await library(outsider.token);
    expect(theirs).toHaveLength(6);
    expect(theirs.some((entry) => first.some((mine) => mine.id === entry.id))).toBe(false);
  });

  it('computes OUR, CER, RQ and biomass yield exactly as the formulas written out by hand', async () => {
    const byKey = new Map((await library()).map((entry) => [entry.library_key, entry]));
    const inertIn = 1 - INLET_O2 - INLET_CO2;
    const factor = 60 * 1000 / 22.414;
    const our = (i: number) => factor * signals.gas_flow_rate(i) / PROPERTIES.working_volume
      * (INLET_O2 - signals.exhaust_o2(i) / 100 * inertIn / (1 - signals.exhaust_o2(i) / 100 - signals.exhaust_co2(i) / 100));
    const cer = (i: number) => factor * signals.gas_flow_rate(i) / PROPERTIES.working_volume
      * (signals.exhaust_co2(i) / 100 * inertIn / (1 - signals.exhaust_o2(i) / 100 - signals.exhaust_co2(i) / 100) - INLET_CO2);
    const indexes = Array.from({ length: STEPS }, (_, i) => i);

    const ourSeries = await derived(byKey.get('our')!.id);
    expect(ourSeries.bucket_ms).toBeNull();
    expect(ourSeries.inputs.map((input) => input.reference).sort()).toEqual(['exhaust_co2', 'exhaust_o2', 'gas_flow_rate']);
    expect(ourSeries.points[0]!.ts).toBe(new Date(T0).toISOString());
    expectClose(ourSeries.points.map((point) => point.value), indexes.map(our));
    expectClose((await derived(byKey.get('cer')!.id)).points.map((point) => point.value), indexes.map(cer));

    // RQ as the organisation writes it again after deleting its copy.
    const rq = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters', token: editor.token,
      payload: { name: 'RQ (own)', unit: 'mol/mol', expression: `(${(await ctx.deps.pg.query('SELECT expression FROM derived_parameters WHERE id = $1', [byKey.get('cer')!.id])).rows[0].expression}) / (${(await ctx.deps.pg.query('SELECT expression FROM derived_parameters WHERE id = $1', [byKey.get('our')!.id])).rows[0].expression})` },
    });
    expect(rq.statusCode, rq.body).toBe(201);
    expectClose((await derived(rq.json().id)).points.map((point) => point.value), indexes.map((i) => cer(i) / our(i)));

    // Growth rate: least squares of ln OD over the trailing two hours (exact for exponential growth).
    const mu = await derived(byKey.get('specific_growth_rate')!.id);
    expectClose(mu.points.map((point) => point.value), indexes.map((i) => (i === 0 ? null : 0.3)));

    // Yield: growth x biomass over the substrate feed rate; no feed yet means no yield.
    const yieldSeries = await derived(byKey.get('biomass_yield')!.id);
    expectClose(yieldSeries.points.map((point) => point.value), indexes.map((i) => {
      if (i === 0 || signals.feed_rate(i) === 0) return null;
      return 0.3 * signals.optical_density(i) * PROPERTIES.biomass_per_od * PROPERTIES.working_volume
        / (signals.feed_rate(i) * 60 / 1000 * PROPERTIES.feed_concentration);
    }));
  });

  it('integrates the feed rate into the cumulative feed', async () => {
    const byKey = new Map((await library()).map((entry) => [entry.library_key, entry]));
    const series = await derived(byKey.get('cumulative_feed')!.id);
    let total = 0;
    const expected = Array.from({ length: STEPS }, (_, i) => {
      if (i > 0) total += (signals.feed_rate(i) + signals.feed_rate(i - 1)) / 2;
      return total;
    });
    expectClose(series.points.map((point) => point.value), expected);
  });

  it('bucket-averages the inputs when they hold more readings than the limit', async () => {
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters', token: editor.token,
      payload: { name: 'Double flow', expression: '2 * [gas_flow_rate]' },
    });
    const series = await derived(created.json().id, editor.token, '?limit=30');
    // The readings' own rule picks the width: whole minutes, at most 30 buckets.
    const width = series.bucket_ms!;
    expect(width % MINUTE).toBe(0);
    expect(series.points.length).toBeLessThanOrEqual(30);
    expect(series.points.length).toBeGreaterThan(20);
    const expected = series.points.map((point) => {
      const from = (Date.parse(point.ts) - T0) / MINUTE;
      const minutes = Array.from({ length: width / MINUTE }, (_, k) => from + k).filter((i) => i >= 0 && i < STEPS);
      return minutes.length === 0 ? null : 2 * minutes.reduce((sum, i) => sum + signals.gas_flow_rate(i), 0) / minutes.length;
    });
    expectClose(series.points.map((point) => point.value), expected);
  });

  it('keeps each edit as a version, audited with before and after; viewers read but never write', async () => {
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters', token: editor.token,
      payload: { name: 'Flow per volume', unit: '1/min', expression: '[gas_flow_rate] / working_volume' },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as number;
    expect(created.json().version).toBe(1);
    const edited = await ctx.request({
      method: 'PUT', url: `/api/v1/derived-parameters/${id}`, token: editor.token, payload: { expression: '[gas_flow_rate] / working_volume * 60', unit: '1/h' },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({ version: 2, unit: '1/h', name: 'Flow per volume' });
    const versions = await ctx.request({ method: 'GET', url: `/api/v1/derived-parameters/${id}/versions`, token: viewer.token });
    expect(versions.json().map((version: { version: number; expression: string }) => [version.version, version.expression])).toEqual([
      [2, '[gas_flow_rate] / working_volume * 60'], [1, '[gas_flow_rate] / working_volume'],
    ]);
    expect((await derived(id, viewer.token)).version).toBe(2);
    const events = (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'derived_parameter' && event.resource_id === String(id));
    expect(events.map((event) => event.action)).toEqual(['create', 'update']);
    expect(events[1]!.changes).toMatchObject({ before: { version: 1, unit: '1/min' }, after: { version: 2, unit: '1/h' } });

    for (const request of [
      { method: 'POST' as const, url: '/api/v1/derived-parameters', payload: { name: 'Nope', expression: '1' } },
      { method: 'PUT' as const, url: `/api/v1/derived-parameters/${id}`, payload: { name: 'Nope' } },
      { method: 'DELETE' as const, url: `/api/v1/derived-parameters/${id}` },
    ]) {
      expect((await ctx.request({ ...request, token: viewer.token })).statusCode).toBe(403);
    }
    const duplicate = await ctx.request({ method: 'POST', url: '/api/v1/derived-parameters', token: editor.token, payload: { name: 'flow PER volume', expression: '1' } });
    expect(duplicate.statusCode).toBe(409);
  });

  it('answers 400 naming the position and problem of a bad formula, an unknown reference or a missing property', async () => {
    const bad = await ctx.request({ method: 'POST', url: '/api/v1/derived-parameters', token: editor.token, payload: { name: 'Bad', expression: '[od] * * 2' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Expression error at position 8: Expected expression after *');
    const preview = (expression: string) => ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: viewer.token, payload: { expression, unit_operation_id: unitOperationId },
    });
    const unknown = await preview('[dissolved_o2] * 2');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toContain('Unknown reference [dissolved_o2]');
    const property = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${unitOperationId}`, token: editor.token, payload: { properties: { feed_concentration: null } },
    });
    expect(property.json().properties).toEqual({ working_volume: 2.5, biomass_per_od: 0.4 });
    const missing = await preview('[feed_rate] * feed_concentration');
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toContain('has no feed_concentration');
    const ok = await preview(`rolling_mean(["BR optical_density"], '10min')`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().points).toHaveLength(STEPS);
  });

  it('never reaches another organisation: its unit operations and formulas are 404', async () => {
    const [mine] = await library();
    const foreign = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${mine!.id}`, token: outsider.token });
    expect(foreign.statusCode).toBe(404);
    const [theirs] = await library(outsider.token);
    const crossed = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/derived/${theirs!.id}`, token: editor.token });
    expect(crossed.statusCode).toBe(404);
    const previewed = await ctx.request({
      method: 'POST', url: '/api/v1/derived-parameters/preview', token: outsider.token, payload: { expression: '[exhaust_o2]', unit_operation_id: unitOperationId },
    });
    expect(previewed.statusCode).toBe(404);
  });
});
