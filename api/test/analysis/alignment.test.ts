/**
 * Time zeros for Compare runs: each alignment kind on unit operations with known comments and
 * readings, the ones left out with their reason, organisation scoping and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlignmentResult } from '@bioprocess/shared/analysis-alignment';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { addUnitOperation, createSite, sampled, writeReadings, type PlacedUnitOperation, type Site } from './support.ts';

const T = Date.UTC(2025, 2, 3, 8, 0, 0);
const HOUR = 3_600_000;
const MINUTE = 60_000;

let ctx: TestContext;
let site: Site;
let first: PlacedUnitOperation;
let second: PlacedUnitOperation;
let silent: PlacedUnitOperation;
let withoutDo: PlacedUnitOperation;
let withoutStart: PlacedUnitOperation;
let foreign: PlacedUnitOperation;
let foreignSite: Site;
const secondStart = T + 24 * HOUR;

async function comment(unitOperationId: number, atMs: number, content: string, organizationId = site.organizationId): Promise<void> {
  await ctx.deps.pg.query('INSERT INTO comments (organization_id, unit_operations_id, timestamp, content) VALUES ($1, $2, $3, $4)',
    [organizationId, unitOperationId, new Date(atMs), content]);
}

/** Dissolved oxygen falling a percent a minute from 100 %, from the unit operation's start. */
async function fallingOxygen(placed: PlacedUnitOperation, startMs: number, organizationId = site.organizationId): Promise<void> {
  await writeReadings(ctx, organizationId, placed.instruments.dissolved_o2!, sampled(startMs, startMs + 2 * HOUR, 30_000, (e) => 100 - e / MINUTE));
}

beforeAll(async () => {
  ctx = await createTestContext();
  site = await createSite(ctx);
  first = await addUnitOperation(ctx, site, { startMs: T, endMs: T + 2 * HOUR, types: ['dissolved_o2'], runName: 'First' });
  second = await addUnitOperation(ctx, site, { startMs: secondStart, endMs: secondStart + 2 * HOUR, types: ['dissolved_o2'], runName: 'Second' });
  silent = await addUnitOperation(ctx, site, { startMs: T + 48 * HOUR, endMs: T + 50 * HOUR, types: ['dissolved_o2'], runName: 'Silent' });
  withoutDo = await addUnitOperation(ctx, site, { startMs: T, endMs: T + 2 * HOUR, types: ['temperature'], runName: 'No probe' });
  withoutStart = await addUnitOperation(ctx, site, { startMs: null, endMs: null, types: ['dissolved_o2'], runName: 'Planned' });
  await fallingOxygen(first, T);
  await fallingOxygen(second, secondStart);
  // The silent run's oxygen stays at 90 %: it never falls below 30 %.
  await writeReadings(ctx, site.organizationId, silent.instruments.dissolved_o2!, sampled(T + 48 * HOUR, T + 50 * HOUR, 60_000, () => 90));

  await comment(first.id, T + 10 * MINUTE, 'Inoculated from shake flask');
  await comment(first.id, T + 40 * MINUTE, 'Induction with IPTG');
  await comment(first.id, T + 70 * MINUTE, 'second induction');
  await comment(second.id, secondStart + 25 * MINUTE, 'INDUCTION started');
  // Only a word of its own counts: 'inductions' is not 'induction'.
  await comment(silent.id, T + 49 * HOUR, 'no inductions planned');

  foreignSite = await createSite(ctx);
  foreign = await addUnitOperation(ctx, foreignSite, { startMs: T, endMs: T + 2 * HOUR, types: ['dissolved_o2'], runName: 'Foreign' });
  await fallingOxygen(foreign, T, foreignSite.organizationId);
  await comment(foreign.id, T + 5 * MINUTE, 'Induction', foreignSite.organizationId);
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

function align(body: Record<string, unknown>, token = site.viewer.token) {
  return ctx.request({ method: 'POST', url: '/api/v1/analysis/alignment', token, payload: body });
}

async function aligned(body: Record<string, unknown>): Promise<AlignmentResult> {
  const response = await align(body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as AlignmentResult;
}

const zeros = (result: AlignmentResult) => Object.fromEntries(result.aligned.map((entry) => [entry.unit_operation_id, entry.time_zero]));
const iso = (ms: number) => new Date(ms).toISOString();

describe('alignment', () => {
  it('puts time zero at each start by default, and leaves out one without a start', async () => {
    const result = await aligned({ unit_operation_ids: [second.id, first.id, withoutStart.id], alignment: { kind: 'start' } });
    expect(result.aligned).toEqual([
      { unit_operation_id: second.id, run_id: second.runId, run_name: 'Second', time_zero: iso(secondStart) },
      { unit_operation_id: first.id, run_id: first.runId, run_name: 'First', time_zero: iso(T) },
    ]);
    expect(result.left_out).toEqual([{ unit_operation_id: withoutStart.id, reason: 'no_start' }]);
  });

  it('puts time zero at the first comment naming the word, any case, whole words only', async () => {
    const result = await aligned({ unit_operation_ids: [first.id, second.id, silent.id], alignment: { kind: 'event', word: 'induction' } });
    expect(zeros(result)).toEqual({ [first.id]: iso(T + 40 * MINUTE), [second.id]: iso(secondStart + 25 * MINUTE) });
    expect(result.left_out).toEqual([{ unit_operation_id: silent.id, reason: 'event_not_found' }]);
    expect(result.alignment).toEqual({ kind: 'event', word: 'induction' });
  });

  it('puts time zero at the first threshold crossing, downward or upward', async () => {
    const down = await aligned({
      unit_operation_ids: [first.id, second.id, silent.id, withoutDo.id],
      alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 30, direction: 'down' },
    });
    // 100 % falling a percent a minute, read every 30 s: at or below 30 % after 70 minutes.
    expect(zeros(down)).toEqual({ [first.id]: iso(T + 70 * MINUTE), [second.id]: iso(secondStart + 70 * MINUTE) });
    expect(down.left_out).toEqual(expect.arrayContaining([
      { unit_operation_id: silent.id, reason: 'event_not_found' },
      { unit_operation_id: withoutDo.id, reason: 'no_instrument' },
    ]));
    expect(down.left_out).toHaveLength(2);

    // Falling oxygen never rises above 50 %; the silent run's constant 90 % never crosses either.
    const up = await aligned({ unit_operation_ids: [first.id, silent.id], alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 50, direction: 'up' } });
    expect(up.aligned).toEqual([]);
    expect(up.left_out).toEqual([
      { unit_operation_id: first.id, reason: 'event_not_found' },
      { unit_operation_id: silent.id, reason: 'event_not_found' },
    ]);
  });

  it('reads the threshold on an instrument override', async () => {
    // A unit operation without a probe of its own reads the first run's probe over the same hours.
    const result = await aligned({
      unit_operation_ids: [withoutDo.id, second.id], alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 30, direction: 'down' },
      instrument_overrides: [{ unit_operation_id: withoutDo.id, instrument_id: first.instruments.dissolved_o2! }],
    });
    expect(zeros(result)).toEqual({ [withoutDo.id]: iso(T + 70 * MINUTE), [second.id]: iso(secondStart + 70 * MINUTE) });
    expect(result.left_out).toEqual([]);
  });

  it('answers 404 for another organisation\'s unit operation or instrument, whoever asks', async () => {
    for (const token of [site.viewer.token, site.admin.token]) {
      const response = await align({ unit_operation_ids: [first.id, foreign.id], alignment: { kind: 'start' } }, token);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: 'Unit operation not found' });
    }
    const foreignInstrument = await align({
      unit_operation_ids: [first.id], alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 30, direction: 'down' },
      instrument_overrides: [{ unit_operation_id: first.id, instrument_id: foreign.instruments.dissolved_o2! }],
    });
    expect(foreignInstrument.statusCode).toBe(404);
    // The other organisation sees its own unit operation aligned on its own comment, and none of ours.
    const own = await align({ unit_operation_ids: [foreign.id], alignment: { kind: 'event', word: 'induction' } }, foreignSite.viewer.token);
    expect(own.statusCode).toBe(200);
    expect(zeros(own.json() as AlignmentResult)).toEqual({ [foreign.id]: iso(T + 5 * MINUTE) });
    const ours = await align({ unit_operation_ids: [first.id], alignment: { kind: 'start' } }, foreignSite.viewer.token);
    expect(ours.statusCode).toBe(404);
  });

  it('answers 401 without a token', async () => {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/analysis/alignment', payload: { unit_operation_ids: [first.id], alignment: { kind: 'start' } } });
    expect(response.statusCode).toBe(401);
  });

  it('answers 400 with an error for bad input', async () => {
    for (const body of [
      {},
      { unit_operation_ids: [], alignment: { kind: 'start' } },
      { unit_operation_ids: [first.id] },
      { unit_operation_ids: ['x'], alignment: { kind: 'start' } },
      { unit_operation_ids: [-1], alignment: { kind: 'start' } },
      { unit_operation_ids: Array.from({ length: 201 }, (_, i) => i + 1), alignment: { kind: 'start' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'sunrise' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'event', word: '' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'event', word: "x') OR 1=1 --" } },
      { unit_operation_ids: [first.id], alignment: { kind: 'threshold', parameter: 'nonsense', value: 30, direction: 'down' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: '30', direction: 'down' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 30, direction: 'sideways' } },
      { unit_operation_ids: [first.id], alignment: { kind: 'start' }, surprise: true },
    ]) {
      const response = await align(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(typeof response.json().error).toBe('string');
    }
  });
});
