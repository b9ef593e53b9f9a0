import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createEquipment, createFacility, createRun, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

describe('facilities', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
  });
  afterAll(async () => { await ctx?.close(); });

  it('creates, reads, lists, updates and deletes a facility, auditing each write', async () => {
    const created = await createFacility(ctx, org.editor.token, { name: '  Main lab  ', type: 'lab', country: 'NL', address: 'Delft' });
    expect(created).toMatchObject({ name: 'Main lab', type: 'lab', country: 'NL', address: 'Delft', organization_id: org.id });
    expect(typeof created.created_at).toBe('string');

    const read = await ctx.request({ method: 'GET', url: `/api/v1/facilities/${created.id}`, token: org.viewer.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);

    const list = await ctx.request({ method: 'GET', url: '/api/v1/facilities', token: org.viewer.token });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((f: { id: number }) => f.id)).toContain(created.id);
    expect(Number(list.headers['x-total-count'])).toBe(list.json().length);

    const updated = await ctx.request({
      method: 'PUT', url: `/api/v1/facilities/${created.id}`, token: org.editor.token,
      payload: { type: 'demo plant', country: null },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ name: 'Main lab', type: 'demo plant', country: null, address: 'Delft' });

    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${created.id}`, token: org.editor.token });
    expect(deleted.statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/facilities/${created.id}`, token: org.viewer.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: 'Facility not found' });

    await vi.waitFor(async () => {
      const events = (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'facility' && event.resource_id === String(created.id));
      expect(events.map((event) => event.action).sort()).toEqual(['create', 'delete', 'update']);
      const update = events.find((event) => event.action === 'update')!;
      expect(update).toMatchObject({ event_type: 'data', user_id: org.editor.id, organization_id: org.id });
      expect(update.changes).toMatchObject({ before: { type: 'lab' }, after: { type: 'demo plant' } });
    });
  });

  it('validates the body', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'lab' }, 'name: Name is required.'],
      [{ name: '   ', type: 'lab' }, 'name: Name is required.'],
      [{ name: 'X' }, 'type: Type must be one of: lab, pilot plant, demo plant, commercial plant, co-manufacturer.'],
      [{ name: 'X', type: 'garage' }, 'type: Type must be one of: lab, pilot plant, demo plant, commercial plant, co-manufacturer.'],
    ];
    for (const [payload, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/facilities', token: org.admin.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json()).toEqual({ error });
    }
    const badId = await ctx.request({ method: 'GET', url: '/api/v1/facilities/abc', token: org.admin.token });
    expect(badId.statusCode).toBe(400);
    expect(badId.json()).toEqual({ error: 'params.id: Invalid id' });
  });

  it('lets viewers read but not write, and requires a token', async () => {
    const facility = await createFacility(ctx, org.admin.token);
    const attempts = [
      ctx.request({ method: 'POST', url: '/api/v1/facilities', token: org.viewer.token, payload: { name: 'X', type: 'lab' } }),
      ctx.request({ method: 'PUT', url: `/api/v1/facilities/${facility.id}`, token: org.viewer.token, payload: { name: 'Y' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${facility.id}`, token: org.viewer.token }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'You do not have permission to perform this action' });
    }
    const anonymous = await ctx.request({ method: 'GET', url: '/api/v1/facilities' });
    expect(anonymous.statusCode).toBe(401);
  });

  it("answers 404 for another organisation's facility and never lists it", async () => {
    const foreign = await createFacility(ctx, other.admin.token, { name: 'Foreign plant' });
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await ctx.request({
        method, url: `/api/v1/facilities/${foreign.id}`, token: org.admin.token, ...(method === 'PUT' ? { payload: { name: 'Taken' } } : {}),
      });
      expect(response.statusCode, method).toBe(404);
      expect(response.json()).toEqual({ error: 'Facility not found' });
    }
    const list = await ctx.request({ method: 'GET', url: '/api/v1/facilities', token: org.admin.token });
    expect(list.json().map((f: { id: number }) => f.id)).not.toContain(foreign.id);
    const still = await ctx.request({ method: 'GET', url: `/api/v1/facilities/${foreign.id}`, token: other.viewer.token });
    expect(still.json().name).toBe('Foreign plant');
  });

  it('refuses to delete a facility that still has equipment or runs, naming them', async () => {
    const facility = await createFacility(ctx, org.admin.token);
    const [equipmentA, equipmentB] = [
      await createEquipment(ctx, org.admin.token, facility.id),
      await createEquipment(ctx, org.admin.token, facility.id, { name: 'BR-02' }),
    ];
    const runs = [];
    for (let i = 0; i < 3; i += 1) runs.push(await createRun(ctx, org.admin.token, facility.id));

    const both = await ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${facility.id}`, token: org.admin.token });
    expect(both.statusCode).toBe(409);
    expect(both.json()).toEqual({ error: 'Facility is used by 2 equipment and 3 runs; delete or move them first.' });

    for (const run of runs.slice(1)) {
      expect((await ctx.request({ method: 'DELETE', url: `/api/v1/runs/${run.id}`, token: org.admin.token })).statusCode).toBe(204);
    }
    await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipmentA.id}`, token: org.admin.token });
    await ctx.request({ method: 'DELETE', url: `/api/v1/equipment/${equipmentB.id}`, token: org.admin.token });
    const oneRun = await ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${facility.id}`, token: org.admin.token });
    expect(oneRun.statusCode).toBe(409);
    expect(oneRun.json()).toEqual({ error: 'Facility is used by 1 run; delete or move them first.' });
    await ctx.request({ method: 'DELETE', url: `/api/v1/runs/${runs[0]!.id}`, token: org.admin.token });
    const free = await ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${facility.id}`, token: org.admin.token });
    expect(free.statusCode).toBe(204);
  });

  it('never answers 500 when runs are created while their facility is deleted', async () => {
    for (let round = 0; round < 3; round += 1) {
      const facility = await createFacility(ctx, org.admin.token);
      const [deletion, ...creations] = await Promise.all([
        ctx.request({ method: 'DELETE', url: `/api/v1/facilities/${facility.id}`, token: org.admin.token }),
        ...Array.from({ length: 4 }, () => ctx.request({
          method: 'POST', url: '/api/v1/runs', token: org.admin.token, payload: { facility_id: facility.id, name: 'Race', target: 'T' },
        })),
      ]);
      const created = creations.filter((response) => response.statusCode === 201).length;
      if (deletion!.statusCode === 204) {
        // The delete went first: every creation found no facility.
        expect(created).toBe(0);
        for (const response of creations) expect(response.json()).toEqual({ error: 'Facility not found' });
      } else {
        expect(deletion!.statusCode).toBe(409);
        expect(creations.every((response) => [201, 404].includes(response.statusCode))).toBe(true);
        expect(created).toBeGreaterThan(0);
      }
    }
  });
});
