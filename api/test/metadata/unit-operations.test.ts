import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATE_RANGE_MESSAGES } from '@bioprocess/shared/date-range';
import { UNIT_OPERATION_TYPES } from '@bioprocess/shared/enums';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createComment, createEquipment, createFacility, createRun, createUnitOperation, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

const HOUR = 3_600_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('unit operations', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let facilityId: number;
  let bioreactorId: number;
  let centrifugeId: number;
  let runId: number;
  let foreignRunId: number;
  let foreignEquipmentId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    facilityId = (await createFacility(ctx, org.admin.token)).id;
    bioreactorId = (await createEquipment(ctx, org.admin.token, facilityId, { name: 'BR-1', type: 'Stirred-tank Bioreactor' })).id;
    centrifugeId = (await createEquipment(ctx, org.admin.token, facilityId, { name: 'CF-1', type: 'Disc-stack centrifuge' })).id;
    runId = (await createRun(ctx, org.admin.token, facilityId)).id;
    const foreignFacility = await createFacility(ctx, other.admin.token);
    foreignRunId = (await createRun(ctx, other.admin.token, foreignFacility.id)).id;
    foreignEquipmentId = (await createEquipment(ctx, other.admin.token, foreignFacility.id)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  it('creates, reads, updates and deletes a unit operation with its derived status', async () => {
    const created = await createUnitOperation(ctx, org.editor.token, runId, bioreactorId, { start_time: iso(-HOUR) });
    expect(created).toMatchObject({ run_id: runId, type: 'fermentation', equipment_id: bioreactorId, end_time: null, status: 'Active' });

    const read = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${created.id}`, token: org.viewer.token });
    expect(read.json()).toEqual(created);
    const equipment = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${created.id}/equipment`, token: org.viewer.token });
    expect(equipment.statusCode).toBe(200);
    expect(equipment.json()).toMatchObject({ id: bioreactorId, name: 'BR-1', type: 'Stirred-tank Bioreactor' });

    const completed = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${created.id}`, token: org.editor.token, payload: { end_time: iso(-1000) },
    });
    expect(completed.statusCode).toBe(200);
    expect(completed.json()).toMatchObject({ status: 'Completed', type: 'fermentation', equipment_id: bioreactorId });
    const pending = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${created.id}`, token: org.editor.token,
      payload: { run_id: runId, type: 'centrifugation', equipment_id: centrifugeId, start_time: null, end_time: null },
    });
    expect(pending.json()).toMatchObject({ status: 'Pending', type: 'centrifugation', equipment_id: centrifugeId, start_time: null });

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${created.id}`, token: org.editor.token })).statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${created.id}`, token: org.viewer.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: 'Unit operation not found' });
    await vi.waitFor(async () => {
      const actions = (await pendingAuditEvents(ctx))
        .filter((event) => event.resource_type === 'unit_operation' && event.resource_id === String(created.id))
        .map((event) => event.action);
      expect(actions.sort()).toEqual(['create', 'delete', 'update', 'update']);
    });
  });

  it("lists a run's unit operations by start time, those without one last, and the organisation's with filters", async () => {
    const run = await createRun(ctx, org.admin.token, facilityId);
    const noStart = await createUnitOperation(ctx, org.admin.token, run.id, bioreactorId);
    const late = await createUnitOperation(ctx, org.admin.token, run.id, centrifugeId, { type: 'centrifugation', start_time: '2024-01-02T00:00:00Z' });
    const early = await createUnitOperation(ctx, org.admin.token, run.id, bioreactorId, { start_time: '2024-01-01T00:00:00Z' });
    const alsoNoStart = await createUnitOperation(ctx, org.admin.token, run.id, bioreactorId, { type: 'mixing' });

    const list = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/unit-operations`, token: org.viewer.token });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((u: { id: number }) => u.id)).toEqual([early.id, late.id, noStart.id, alsoNoStart.id]);
    expect(list.headers['x-total-count']).toBe('4');

    const all = await ctx.request({ method: 'GET', url: '/api/v1/unit-operations', token: org.viewer.token });
    expect(all.json().map((u: { id: number }) => u.id)).toEqual(expect.arrayContaining([noStart.id, late.id, early.id, alsoNoStart.id]));
    const filtered = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations?run_id=${run.id}&type=fermentation`, token: org.viewer.token });
    expect(filtered.json().map((u: { id: number }) => u.id)).toEqual([noStart.id, early.id]);
    expect(filtered.headers['x-total-count']).toBe('2');
    const paged = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/unit-operations?limit=2&offset=1`, token: org.viewer.token });
    expect(paged.json().map((u: { id: number }) => u.id)).toEqual([late.id, noStart.id]);
    const badType = await ctx.request({ method: 'GET', url: '/api/v1/unit-operations?type=brewing', token: org.viewer.token });
    expect(badType.statusCode).toBe(400);
  });

  it('validates type, equipment, run and the date range', async () => {
    const base = { run_id: runId, type: 'fermentation', equipment_id: bioreactorId };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, type: undefined }, 400, 'type: Type must be one of the unit operation types.'],
      [{ ...base, type: 'brewing' }, 400, 'type: Type must be one of the unit operation types.'],
      [{ ...base, equipment_id: undefined }, 400, 'equipment_id: Equipment is required.'],
      [{ ...base, start_time: 'soon' }, 400, DATE_RANGE_MESSAGES.invalidFormat],
      [{ ...base, start_time: '2024-01-02T00:00:00Z', end_time: '2024-01-01T23:59:59Z' }, 400, DATE_RANGE_MESSAGES.endBeforeStart],
      [{ ...base, run_id: foreignRunId }, 404, 'Run not found'],
      [{ ...base, equipment_id: foreignEquipmentId }, 404, 'Equipment not found'],
    ];
    for (const [payload, status, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/unit-operations', token: org.admin.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    // Equipment of its own: an open-ended window from 2024 would overlap the other tests' windows.
    const spareReactor = (await createEquipment(ctx, org.admin.token, facilityId, { name: 'BR-spare', type: 'Stirred-tank Bioreactor' })).id;
    const onlyStart = await createUnitOperation(ctx, org.admin.token, runId, spareReactor, { start_time: '2024-01-01T00:00:00Z', end_time: '' });
    expect(onlyStart.end_time).toBeNull();
    const endBeforeStored = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${onlyStart.id}`, token: org.admin.token, payload: { end_time: '2023-12-31T00:00:00Z' },
    });
    expect(endBeforeStored.statusCode).toBe(400);
    expect(endBeforeStored.json()).toEqual({ error: DATE_RANGE_MESSAGES.endBeforeStart });
    const foreignMove = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${onlyStart.id}`, token: org.admin.token, payload: { run_id: foreignRunId },
    });
    expect(foreignMove.statusCode).toBe(404);
    // The spare goes again: the other tests count the organisation's equipment.
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${onlyStart.id}`, token: org.admin.token })).statusCode).toBe(204);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${spareReactor}`, token: org.admin.token })).statusCode).toBe(204);
  });

  it('enforces roles and organisations', async () => {
    const unitOperation = await createUnitOperation(ctx, org.admin.token, runId, bioreactorId);
    const viewer = await Promise.all([
      ctx.request({ method: 'POST', url: '/api/v1/unit-operations', token: org.viewer.token, payload: { run_id: runId, type: 'mixing', equipment_id: bioreactorId } }),
      ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${unitOperation.id}`, token: org.viewer.token, payload: { type: 'mixing' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation.id}`, token: org.viewer.token }),
    ]);
    expect(viewer.map((response) => response.statusCode)).toEqual([403, 403, 403]);
    const urls = [
      ['GET', `/api/v1/unit-operations/${unitOperation.id}`], ['PUT', `/api/v1/unit-operations/${unitOperation.id}`],
      ['DELETE', `/api/v1/unit-operations/${unitOperation.id}`], ['GET', `/api/v1/unit-operations/${unitOperation.id}/equipment`],
      ['GET', `/api/v1/unit-operations/${unitOperation.id}/comments`],
    ] as const;
    for (const [method, url] of urls) {
      const response = await ctx.request({ method, url, token: other.admin.token, ...(method === 'PUT' ? { payload: { type: 'mixing' } } : {}) });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toEqual({ error: 'Unit operation not found' });
    }
    const foreignList = await ctx.request({ method: 'GET', url: '/api/v1/unit-operations', token: other.admin.token });
    expect(foreignList.json()).toEqual([]);
  });

  it('deletes the comments of a deleted unit operation', async () => {
    const unitOperation = await createUnitOperation(ctx, org.admin.token, runId, bioreactorId);
    const comment = await createComment(ctx, org.admin.token, unitOperation.id);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation.id}`, token: org.admin.token })).statusCode).toBe(204);
    expect((await ctx.request({ method: 'GET', url: `/api/v1/comments/${comment.id}`, token: org.admin.token })).statusCode).toBe(404);
  });

  it('lists every unit-operation type with the equipment allowed for it', async () => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/unit-operation-types', token: org.viewer.token });
    expect(response.statusCode).toBe(200);
    const byType = new Map(response.json().map((entry: { type: string; equipment_ids: number[] }) => [entry.type, entry.equipment_ids]));
    expect([...byType.keys()]).toEqual([...UNIT_OPERATION_TYPES]);
    expect(byType.get('fermentation')).toEqual([bioreactorId]);
    expect(byType.get('centrifugation')).toEqual([centrifugeId]);
    // Nothing matches milling here: every piece of equipment of the organisation is offered.
    expect(byType.get('milling')).toEqual([bioreactorId, centrifugeId]);
    const foreign = await ctx.request({ method: 'GET', url: '/api/v1/unit-operation-types', token: other.viewer.token });
    expect(foreign.json().find((entry: { type: string }) => entry.type === 'fermentation').equipment_ids).toEqual([foreignEquipmentId]);
  });

  it('answers 404 for the equipment of a unit operation without equipment', async () => {
    const { rows } = await ctx.deps.pg.query(
      `INSERT INTO unit_operations (organization_id, run_id, type) VALUES ($1, $2, 'mixing') RETURNING id`, [org.id, runId],
    );
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${rows[0].id}/equipment`, token: org.viewer.token });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Equipment not found' });
  });
});
