/**
 * The deviation ranking on the demo's fed-batches: the readings the demo seeds (the same simulator,
 * the same seeds) against its golden batch of five good runs. The run with the faulty feed valve
 * must name the feed rate first; a good run must have nothing flagged; a brief brush with the band
 * is not flagged while a long one is; fewer than five references warn; tolerances are edited by
 * editors only, audited, and change the band.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_SCORE, type Deviation, type Envelope, type GoldenBatch } from '@bioprocess/shared/analysis';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { seedDemoMetadata, simulatedSeries, type SeedPlan } from '../../src/demo/seed.ts';
import { DEMO_HOUR_MS } from '../../src/demo/demo-organisation.ts';
import { writeReadings } from './support.ts';

let ctx: TestContext;
let plan: SeedPlan;
let tokens: { viewer: string; editor: string };
let batch: GoldenBatch;
const NOW = Date.UTC(2026, 10, 29, 6, 0, 0);

type SeededOperation = SeedPlan['unitOperations'][number];
const fedBatches = () => plan.unitOperations.filter((operation) => operation.spec.simulate === 'fed-batch');
const faulty = () => fedBatches().find((operation) => operation.spec.feedFault)!;
const references = () => fedBatches().filter((operation) => batch.reference_unit_operation_ids.includes(operation.id));
const goodRunning = () => fedBatches().find((operation) => operation.endMs === null)!;

async function writeSeries(operation: SeededOperation, equipment: string, adjust?: (key: string, ts: number, value: number) => number): Promise<number> {
  const instruments = plan.instruments.get(equipment)!;
  let written = 0;
  for (const [key, series] of simulatedSeries(operation, NOW)) {
    const readings = series.map(([ts, value]): [number, number] => [ts, adjust ? adjust(key, ts, value) : value]);
    await writeReadings(ctx, plan.organizationId, instruments.get(key)!, readings);
    written += readings.length;
  }
  return written;
}

async function deviation(payload: Record<string, unknown>, token = tokens.viewer): Promise<Deviation> {
  const response = await ctx.request({ method: 'POST', url: '/api/v1/analysis/deviation', token, payload });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Deviation;
}

/** A unit operation of its own run on BR-02, holding the readings of a reference (its seed) from `startMs`, optionally changed. */
async function copyOfReference(name: string, startMs: number, adjust: (key: string, ts: number, value: number) => number): Promise<number> {
  const reference = references()[0]!;
  const { pg } = ctx.deps;
  const equipmentId = (await pg.query(`SELECT id FROM equipment WHERE organization_id = $1 AND name LIKE 'BR-02%'`, [plan.organizationId])).rows[0].id;
  const facilityId = (await pg.query('SELECT facility_id FROM equipment WHERE id = $1', [equipmentId])).rows[0].facility_id;
  const run = await pg.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, $3, 'GFP') RETURNING id`, [plan.organizationId, facilityId, name]);
  const durationMs = reference.endMs! - reference.startMs;
  const row = await pg.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time) VALUES ($1, $2, 'fermentation', $3, $4, $5) RETURNING id`,
    [plan.organizationId, run.rows[0].id, equipmentId, new Date(startMs), new Date(startMs + durationMs)]);
  // The reference's own seed: the same culture, moved to another time and vessel.
  await writeSeries({ ...reference, startMs, endMs: startMs + durationMs }, 'br2', adjust);
  return Number(row.rows[0].id);
}

beforeAll(async () => {
  ctx = await createTestContext();
  const seeded = await seedDemoMetadata(ctx.deps, NOW);
  if (!seeded) throw new Error('expected a fresh demo seed');
  plan = seeded;
  let written = 0;
  for (const operation of fedBatches()) written += await writeSeries(operation, operation.spec.equipment);
  expect(written).toBeGreaterThan(100_000);
  const login = async (email: string) => (await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'Demo-Bioprocess1!' } })).json().token as string;
  tokens = { viewer: await login('viewer@demo.bioprocess.local'), editor: await login('editor@demo.bioprocess.local') };
  const batches = (await ctx.request({ method: 'GET', url: '/api/v1/golden-batches', token: tokens.viewer })).json() as GoldenBatch[];
  if (!batches[0]) throw new Error('the demo has no golden batch');
  batch = batches[0];
}, 600_000);

afterAll(async () => {
  await ctx?.close();
});

describe('deviation ranking on the demo', () => {
  it('names the faulty feed valve\'s feed rate first, flagged, with why, against the five good runs', async () => {
    expect(batch.reference_unit_operation_ids).toHaveLength(5);
    const answer = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [faulty().id] });
    expect(answer.warnings).toEqual([]);
    expect(answer.references).toBe(5);
    const [first] = answer.ranking;
    expect(first, JSON.stringify(answer.ranking)).toMatchObject({ parameter: 'feed_rate', unit_operation_id: faulty().id, flagged: true });
    expect(first!.score).toBeGreaterThan(FLAG_SCORE);
    // Worst first by score; each row says why in words.
    expect(answer.ranking.map((row) => row.score)).toEqual([...answer.ranking.map((row) => row.score)].sort((a, b) => b - a));
    const feed = answer.targets[0]!.parameters.find((entry) => entry.parameter === 'feed_rate')!;
    expect(first!.reason).toBe(feed.reason);
    expect(feed.reason).toMatch(/^outside for [\d.]+ h, up to [\d.]+ band widths above at \d+:\d\d, from \d+:\d\d/);
    // The leak starts at 3 h, long before the feed pump does: the first excursion is in the batch phase.
    expect(feed.first_excursion!.t).toBeGreaterThanOrEqual(3 * 3_600);
    expect(feed.first_excursion!.t).toBeLessThan(5 * 3_600);
    expect(feed.first_excursion!.bound).toBe('upper');
    // The temperature is controlled and unaffected by the leak: not flagged.
    expect(answer.ranking.find((row) => row.parameter === 'temperature')!.flagged).toBe(false);
    // The band is never narrower than the tolerance either side of its centre (the mean, for a sigma band).
    for (const envelope of answer.envelopes) {
      expect(envelope.tolerance.value, envelope.parameter).toBeGreaterThan(0);
      for (const point of envelope.points.filter((entry) => entry.compared_lower !== null)) {
        expect(point.compared_upper! - point.compared_lower!).toBeGreaterThanOrEqual(2 * envelope.tolerance.value! * (1 - 1e-9));
      }
    }
  });

  it('flags nothing on a good run (the running one, compared up to now)', async () => {
    const answer = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [goodRunning().id] });
    const [target] = answer.targets;
    expect(target!.parameters.length).toBe(batch.parameters.length);
    expect(target!.parameters.every((entry) => entry.compared > 0)).toBe(true);
    expect(answer.ranking.filter((row) => row.flagged), JSON.stringify(answer.ranking)).toEqual([]);
  });

  it('does not flag a brief brush with the band, but flags the same excursion held for hours', async () => {
    const before = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [faulty().id] });
    const temperature = before.envelopes.find((envelope) => envelope.parameter === 'temperature')!;
    const bump = 1.5 * temperature.tolerance.value!;
    const base = Date.UTC(2026, 9, 1, 6, 0, 0);
    const within = (from: number, to: number) => (key: string, ts: number, value: number) =>
      (key === 'temperature' && ts >= base + 20 * DEMO_HOUR_MS + from && ts < base + 20 * DEMO_HOUR_MS + to ? value + bump : value);
    const brief = await copyOfReference('Brief warm spell', base, within(0, 10 * 60_000));
    const long = await copyOfReference('Long warm spell', base + 60 * DEMO_HOUR_MS, (key, ts, value) => within(0, 6 * DEMO_HOUR_MS)(key, ts - 60 * DEMO_HOUR_MS, value));
    const answer = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [brief, long] });
    const of = (id: number) => answer.targets.find((target) => target.unit_operation_id === id)!.parameters.find((entry) => entry.parameter === 'temperature')!;
    expect(of(brief).outside).toBeGreaterThan(0);
    expect(of(brief).flagged).toBe(false);
    expect(of(brief).reason).toMatch(/not flagged/);
    expect(of(long).flagged).toBe(true);
    expect(of(long).longest_excursion!.hours).toBeGreaterThan(5);
    expect(answer.ranking[0]).toMatchObject({ parameter: 'temperature', unit_operation_id: long });
    // Everything else of the copies is a reference's own culture: not flagged.
    expect(answer.ranking.filter((row) => row.flagged).map((row) => `${row.unit_operation_id}:${row.parameter}`)).toEqual([`${long}:temperature`]);
  });

  it('warns with fewer than five references, in the deviation and the envelope, and still names the feed rate first', async () => {
    const three = batch.reference_unit_operation_ids.slice(0, 3);
    const answer = await deviation({ reference_unit_operation_ids: three, parameters: batch.parameters, target_unit_operation_ids: [faulty().id] });
    expect(answer.references).toBe(3);
    expect(answer.warnings).toEqual(['The band is made from 3 references; fewer than 5 make it too uncertain to trust.']);
    expect(answer.ranking[0]).toMatchObject({ parameter: 'feed_rate', flagged: true });
    // The case: with a P5-P95 band of three runs every parameter was 53-96 % "outside"; now the pH is not flagged.
    expect(answer.ranking.find((row) => row.parameter === 'pH')!.flagged).toBe(false);
    const envelope = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/envelope', token: tokens.viewer, payload: { reference_unit_operation_ids: three, parameter: 'pH' },
    });
    expect(envelope.statusCode).toBe(200);
    expect((envelope.json() as Envelope).warnings).toHaveLength(1);
  });

  it('lets editors set a tolerance per parameter, audited, which widens the band; viewers cannot; bad tolerances are 400', async () => {
    const url = `/api/v1/golden-batches/${batch.id}`;
    expect((await ctx.request({ method: 'PUT', url, token: tokens.viewer, payload: { tolerances: { feed_rate: 1 } } })).statusCode).toBe(403);
    for (const tolerances of [{ feed_rate: 0 }, { feed_rate: -1 }, { nonsense: 1 }, { titer: 1 }, { feed_rate: 'wide' }]) {
      const response = await ctx.request({ method: 'PUT', url, token: tokens.editor, payload: { tolerances } });
      expect(response.statusCode, JSON.stringify(tolerances)).toBe(400);
      expect(typeof response.json().error).toBe('string');
    }
    const stored = await ctx.deps.pg.query('SELECT tolerances FROM golden_batches WHERE id = $1', [batch.id]);
    expect(stored.rows[0].tolerances).toEqual({});

    const updated = await ctx.request({ method: 'PUT', url, token: tokens.editor, payload: { tolerances: { feed_rate: 5 } } });
    expect(updated.statusCode, updated.body).toBe(200);
    const after = updated.json() as GoldenBatch;
    expect(after.tolerances).toEqual({ feed_rate: 5 });
    const events = (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'golden_batch' && event.resource_id === String(batch.id));
    expect(events.map((event) => event.action)).toEqual(['update']);
    expect(events[0]!.changes).toMatchObject({ before: { tolerances: {} }, after: { tolerances: { feed_rate: 5 } } });

    // A feed tolerance of 5 mL/min (more than the pump ever gives) swallows the leak.
    const answer = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [faulty().id] });
    const envelope = answer.envelopes.find((entry) => entry.parameter === 'feed_rate')!;
    expect(envelope.tolerance).toMatchObject({ value: 5, source: 'set' });
    expect(answer.ranking.find((row) => row.parameter === 'feed_rate')!.flagged).toBe(false);

    // Taking the parameter out of the batch takes its tolerance with it.
    const narrowed = await ctx.request({ method: 'PUT', url, token: tokens.editor, payload: { parameters: batch.parameters.filter((parameter) => parameter !== 'feed_rate') } });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect((narrowed.json() as GoldenBatch).tolerances).toEqual({});
    await ctx.request({ method: 'PUT', url, token: tokens.editor, payload: { parameters: batch.parameters } });
  });

  it('answers for a unit operation left open for months (the run page\'s 400), comparing it over the references\' span', async () => {
    const { pg } = ctx.deps;
    const equipment = await pg.query(`SELECT id, facility_id FROM equipment WHERE organization_id = $1 AND name LIKE 'BR-02%'`, [plan.organizationId]);
    const run = await pg.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'Never closed', 'GFP') RETURNING id`,
      [plan.organizationId, equipment.rows[0].facility_id]);
    // Started 21 months ago and never ended: over 300,000 grid times of 3 minutes until now.
    const row = await pg.query(
      `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time) VALUES ($1, $2, 'fermentation', $3, $4, NULL) RETURNING id`,
      [plan.organizationId, run.rows[0].id, equipment.rows[0].id, new Date(NOW - 640 * 24 * DEMO_HOUR_MS)]);
    const answer = await deviation({ golden_batch_id: batch.id, target_unit_operation_ids: [Number(row.rows[0].id)] });
    const [target] = answer.targets;
    expect(target!.parameters.map((entry) => entry.parameter).sort()).toEqual([...batch.parameters].sort());
    expect(target!.parameters.every((entry) => entry.compared === 0 && !entry.flagged)).toBe(true);
    expect(target!.parameters[0]!.reason).toMatch(/^not compared/);
  });
});
