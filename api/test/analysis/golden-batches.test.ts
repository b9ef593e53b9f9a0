/**
 * Golden batches: create, read, update and delete; audited with before and after in the same
 * transaction; viewers read, editors and admins write; another organisation's batch or reference is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoldenBatch } from '@bioprocess/shared/analysis';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { addUnitOperation, createSite, sampled, writeReadings, type PlacedUnitOperation, type Site } from './support.ts';

const T = Date.UTC(2025, 1, 3, 6, 0, 0);
const HOUR = 3_600_000;

let ctx: TestContext;
let site: Site;
let otherSite: Site;
const references: PlacedUnitOperation[] = [];
let foreign: PlacedUnitOperation;
let centrifuge: PlacedUnitOperation;

beforeAll(async () => {
  ctx = await createTestContext();
  site = await createSite(ctx);
  otherSite = await createSite(ctx);
  for (let index = 0; index < 3; index += 1) {
    const startMs = T + index * 3 * HOUR;
    const placed = await addUnitOperation(ctx, site, { startMs, endMs: startMs + HOUR, types: ['temperature', 'pH'] });
    await writeReadings(ctx, site.organizationId, placed.instruments.temperature!, sampled(startMs, startMs + HOUR, 10_000, (e) => 30 + index + e / HOUR));
    await writeReadings(ctx, site.organizationId, placed.instruments.pH!, sampled(startMs, startMs + HOUR, 10_000, () => 7));
    references.push(placed);
  }
  foreign = await addUnitOperation(ctx, otherSite, { startMs: T, endMs: T + HOUR, types: ['temperature'] });
  centrifuge = await addUnitOperation(ctx, site, { startMs: T, endMs: T + HOUR, types: ['temperature'], unitOperationType: 'centrifugation' });
}, 60_000);

afterAll(async () => {
  await ctx?.close();
});

const body = () => ({
  name: 'Good fermentations',
  unit_operation_type: 'fermentation',
  reference_unit_operation_ids: references.slice(0, 2).map((reference) => reference.id),
  parameters: ['temperature', 'pH'],
});

describe('golden batches', () => {
  it('editors save, update and delete with before/after audit events; viewers read', async () => {
    const created = await ctx.request({ method: 'POST', url: '/api/v1/golden-batches', token: site.editor.token, payload: body() });
    expect(created.statusCode, created.body).toBe(201);
    const batch = created.json() as GoldenBatch;
    expect(batch).toMatchObject({ ...body(), alignment: { kind: 'start' }, band: { kind: 'percentiles', lower: 5, upper: 95 }, grid_step_seconds: null, instrument_overrides: [] });

    const listed = await ctx.request({ method: 'GET', url: '/api/v1/golden-batches?unit_operation_type=fermentation', token: site.viewer.token });
    expect(listed.json()).toEqual([batch]);
    expect((await ctx.request({ method: 'GET', url: `/api/v1/golden-batches/${batch.id}`, token: site.viewer.token })).json()).toEqual(batch);

    const updated = await ctx.request({
      method: 'PUT', url: `/api/v1/golden-batches/${batch.id}`, token: site.admin.token,
      payload: { reference_unit_operation_ids: references.map((reference) => reference.id), band: { kind: 'sigma', k: 3 } },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const after = updated.json() as GoldenBatch;
    expect(after).toMatchObject({ name: batch.name, band: { kind: 'sigma', k: 3 }, reference_unit_operation_ids: references.map((reference) => reference.id) });

    // A deviation against the saved batch uses its references and parameters.
    const deviation = await ctx.request({
      method: 'POST', url: '/api/v1/analysis/deviation', token: site.viewer.token,
      payload: { golden_batch_id: batch.id, target_unit_operation_ids: [references[2]!.id] },
    });
    expect(deviation.statusCode, deviation.body).toBe(200);
    expect(deviation.json().envelopes.map((envelope: { parameter: string }) => envelope.parameter)).toEqual(['temperature', 'pH']);

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/golden-batches/${batch.id}`, token: site.editor.token })).statusCode).toBe(204);
    expect((await ctx.request({ method: 'GET', url: `/api/v1/golden-batches/${batch.id}`, token: site.viewer.token })).statusCode).toBe(404);

    const events = (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'golden_batch' && event.resource_id === String(batch.id));
    expect(events.map((event) => event.action)).toEqual(['create', 'update', 'delete']);
    expect(events[0]!.changes).toEqual({ before: null, after: batch });
    expect(events[1]!.changes).toEqual({ before: batch, after });
    expect(events[2]!.changes).toEqual({ before: after, after: null });
  });

  it('viewers cannot write; another organisation\'s batch and references are 404; bad input is 400 and writes nothing', async () => {
    expect((await ctx.request({ method: 'POST', url: '/api/v1/golden-batches', token: site.viewer.token, payload: body() })).statusCode).toBe(403);
    const created = await ctx.request({ method: 'POST', url: '/api/v1/golden-batches', token: site.editor.token, payload: body() });
    const id = (created.json() as GoldenBatch).id;
    expect((await ctx.request({ method: 'PUT', url: `/api/v1/golden-batches/${id}`, token: site.viewer.token, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/golden-batches/${id}`, token: site.viewer.token })).statusCode).toBe(403);

    for (const request of [
      { method: 'GET' as const, url: `/api/v1/golden-batches/${id}` },
      { method: 'PUT' as const, url: `/api/v1/golden-batches/${id}`, payload: { name: 'Taken over' } },
      { method: 'DELETE' as const, url: `/api/v1/golden-batches/${id}` },
    ]) {
      const response = await ctx.request({ ...request, token: otherSite.admin.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: 'Golden batch not found' });
    }
    expect((await ctx.request({ method: 'GET', url: '/api/v1/golden-batches', token: otherSite.viewer.token })).json()).toEqual([]);
    const deviation = await ctx.request({ method: 'POST', url: '/api/v1/analysis/deviation', token: otherSite.viewer.token, payload: { golden_batch_id: id, target_unit_operation_ids: [foreign.id] } });
    expect(deviation.statusCode).toBe(404);

    const before = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM golden_batches');
    const refused = [
      { ...body(), reference_unit_operation_ids: [references[0]!.id, foreign.id] },
      { ...body(), reference_unit_operation_ids: [references[0]!.id, centrifuge.id] },
      { ...body(), parameters: [] },
      { ...body(), name: '' },
      { ...body(), instrument_overrides: [{ unit_operation_id: references[0]!.id, instrument_id: foreign.instruments.temperature! }] },
    ];
    const statuses = [];
    for (const payload of refused) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/golden-batches', token: site.editor.token, payload });
      statuses.push(response.statusCode);
      expect(typeof response.json().error).toBe('string');
    }
    expect(statuses).toEqual([404, 400, 400, 400, 404]);
    expect((await ctx.deps.pg.query('SELECT count(*)::int AS n FROM golden_batches')).rows[0].n).toBe(before.rows[0].n);
  });
});
