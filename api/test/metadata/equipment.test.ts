import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createEquipment, createFacility, createInstrument, createRun, createUnitOperation, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

describe('equipment', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let facilityId: number;
  let foreignFacilityId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    facilityId = (await createFacility(ctx, org.admin.token)).id;
    foreignFacilityId = (await createFacility(ctx, other.admin.token)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  it('creates equipment with status 1, then reads, lists, updates and deletes it', async () => {
    const created = await createEquipment(ctx, org.editor.token, facilityId, { name: 'Sartorius 5L', type: 'Bioreactor', oem: 'Sartorius' });
    expect(created).toMatchObject({ name: 'Sartorius 5L', type: 'Bioreactor', oem: 'Sartorius', facility_id: facilityId, status: 1 });

    const read = await ctx.request({ method: 'GET', url: `/api/v1/equipment/${created.id}`, token: org.viewer.token });
    expect(read.json()).toEqual(created);
    const list = await ctx.request({ method: 'GET', url: '/api/v1/equipment', token: org.viewer.token });
    expect(list.json()).toContainEqual(created);

    const secondFacility = await createFacility(ctx, org.admin.token, { name: 'Second site' });
    const moved = await ctx.request({
      method: 'PUT', url: `/api/v1/equipment/${created.id}`, token: org.editor.token, payload: { facility_id: secondFacility.id, oem: '' },
    });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ facility_id: secondFacility.id, oem: null, name: 'Sartorius 5L', status: 1 });

    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${created.id}`, token: org.editor.token });
    expect(deleted.statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/equipment/${created.id}`, token: org.viewer.token });
    expect(gone.json()).toEqual({ error: 'Equipment not found' });
    await vi.waitFor(async () => {
      const actions = (await pendingAuditEvents(ctx))
        .filter((event) => event.resource_type === 'equipment' && event.resource_id === String(created.id))
        .map((event) => event.action);
      expect(actions.sort()).toEqual(['create', 'delete', 'update']);
    });
  });

  it('validates the body and requires a facility of the organisation', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ type: 'Bioreactor', facility_id: facilityId }, 400, 'name: Name is required.'],
      [{ name: 'X', facility_id: facilityId }, 400, 'type: Type is required.'],
      [{ name: 'X', type: 'Bioreactor' }, 400, 'facility_id: Facility is required.'],
      [{ name: 'X', type: 'Bioreactor', facility_id: foreignFacilityId }, 404, 'Facility not found'],
      [{ name: 'X', type: 'Bioreactor', facility_id: 987654 }, 404, 'Facility not found'],
    ];
    for (const [payload, status, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/equipment', token: org.admin.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    const equipment = await createEquipment(ctx, org.admin.token, facilityId);
    const moveAbroad = await ctx.request({
      method: 'PUT', url: `/api/v1/equipment/${equipment.id}`, token: org.admin.token, payload: { facility_id: foreignFacilityId },
    });
    expect(moveAbroad.statusCode).toBe(404);
    expect(moveAbroad.json()).toEqual({ error: 'Facility not found' });
  });

  it('enforces roles and organisations', async () => {
    const equipment = await createEquipment(ctx, org.admin.token, facilityId);
    const viewerWrites = await Promise.all([
      ctx.request({ method: 'POST', url: '/api/v1/equipment', token: org.viewer.token, payload: { name: 'X', type: 'Y', facility_id: facilityId } }),
      ctx.request({ method: 'PUT', url: `/api/v1/equipment/${equipment.id}`, token: org.viewer.token, payload: { name: 'Z' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipment.id}`, token: org.viewer.token }),
    ]);
    expect(viewerWrites.map((response) => response.statusCode)).toEqual([403, 403, 403]);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await ctx.request({
        method, url: `/api/v1/equipment/${equipment.id}`, token: other.admin.token, ...(method === 'PUT' ? { payload: { name: 'Mine' } } : {}),
      });
      expect(response.statusCode, method).toBe(404);
    }
    const foreignList = await ctx.request({ method: 'GET', url: '/api/v1/equipment', token: other.admin.token });
    expect(foreignList.json().map((e: { id: number }) => e.id)).not.toContain(equipment.id);
  });

  it('refuses to delete equipment that still has instruments or unit operations, naming them', async () => {
    const equipment = await createEquipment(ctx, org.admin.token, facilityId);
    const instruments = [
      await createInstrument(ctx, org.admin.token, equipment.id),
      await createInstrument(ctx, org.admin.token, equipment.id),
    ];
    const run = await createRun(ctx, org.admin.token, facilityId);
    const unitOperation = await createUnitOperation(ctx, org.admin.token, run.id, equipment.id);

    const both = await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipment.id}`, token: org.admin.token });
    expect(both.statusCode).toBe(409);
    expect(both.json()).toEqual({ error: 'Equipment is used by 2 instruments and 1 unit operation; delete or move them first.' });

    await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperation.id}`, token: org.admin.token });
    await ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${instruments[0]!.id}`, token: org.admin.token });
    const one = await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipment.id}`, token: org.admin.token });
    expect(one.json()).toEqual({ error: 'Equipment is used by 1 instrument; delete or move them first.' });
    await ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${instruments[1]!.id}`, token: org.admin.token });
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipment.id}`, token: org.admin.token })).statusCode).toBe(204);
  });
});
