import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { INSTRUMENT_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createEquipment, createFacility, createInstrument, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

const INSTRUMENT_KEYS = ['alias', 'created_at', 'draw_as_steps', 'equipment_id', 'id', 'name', 'organization_id', 'type', 'unit', 'updated_at'];

describe('instruments', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let equipmentId: number;
  let secondEquipmentId: number;
  let foreignEquipmentId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    const facility = await createFacility(ctx, org.admin.token);
    equipmentId = (await createEquipment(ctx, org.admin.token, facility.id)).id;
    secondEquipmentId = (await createEquipment(ctx, org.admin.token, facility.id, { name: 'BR-02' })).id;
    const foreignFacility = await createFacility(ctx, other.admin.token);
    foreignEquipmentId = (await createEquipment(ctx, other.admin.token, foreignFacility.id)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  it('draw_as_steps: defaults from the type on a create, kept by an update that leaves it out, refused when not a boolean', async () => {
    const stirrer = await createInstrument(ctx, org.editor.token, equipmentId, { name: 'Stirrer setpoint', type: 'stir_rate', unit: 'rpm' });
    const probe = await createInstrument(ctx, org.editor.token, equipmentId, { name: 'Temperature probe', type: 'temperature', unit: 'celsius' });
    expect([stirrer.draw_as_steps, probe.draw_as_steps]).toEqual([true, false]);
    const deadband = await createInstrument(ctx, org.editor.token, equipmentId, { name: 'Heater duty', type: 'temperature', draw_as_steps: true });
    expect(deadband.draw_as_steps).toBe(true);

    const renamed = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${stirrer.id}`, token: org.editor.token, payload: { alias: 'SIC_SP' } });
    expect(renamed.json()).toMatchObject({ alias: 'SIC_SP', draw_as_steps: true });
    const cleared = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${stirrer.id}`, token: org.editor.token, payload: { draw_as_steps: false } });
    expect(cleared.json()).toMatchObject({ draw_as_steps: false });
    const stored = await ctx.request({ method: 'GET', url: `/api/v1/instruments/${stirrer.id}`, token: org.viewer.token });
    expect(stored.json().draw_as_steps).toBe(false);

    const refused = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${probe.id}`, token: org.editor.token, payload: { draw_as_steps: 'yes' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatch(/draw_as_steps|Draw as steps/);
    const unchanged = await ctx.request({ method: 'GET', url: `/api/v1/instruments/${probe.id}`, token: org.viewer.token });
    expect(unchanged.json().draw_as_steps).toBe(false);
  });

  it('POST and PUT answer one instrument; lists per organisation and per equipment', async () => {
    const created = await createInstrument(ctx, org.editor.token, equipmentId, { name: 'pH probe', type: 'pH', unit: 'pH' });
    expect(Object.keys(created).sort()).toEqual(INSTRUMENT_KEYS);
    expect(created).toMatchObject({ name: 'pH probe', type: 'pH', unit: 'pH', alias: null, equipment_id: equipmentId });

    const aliased = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${created.id}`, token: org.editor.token, payload: { alias: 'pH_PV' } });
    expect(aliased.statusCode).toBe(200);
    expect(Object.keys(aliased.json()).sort()).toEqual(INSTRUMENT_KEYS);
    expect(aliased.json()).toMatchObject({ id: created.id, name: 'pH probe', alias: 'pH_PV', unit: 'pH' });

    const full = await ctx.request({
      method: 'PUT', url: `/api/v1/instruments/${created.id}`, token: org.editor.token,
      payload: { name: 'pH probe 2', type: 'pH', unit: null, alias: null, equipment_id: secondEquipmentId },
    });
    expect(full.json()).toMatchObject({ name: 'pH probe 2', unit: null, alias: null, equipment_id: secondEquipmentId });

    const perEquipment = await ctx.request({ method: 'GET', url: `/api/v1/equipment/${secondEquipmentId}/instruments`, token: org.viewer.token });
    expect(perEquipment.statusCode).toBe(200);
    expect(perEquipment.json().map((i: { id: number }) => i.id)).toEqual([created.id]);
    expect(perEquipment.headers['x-total-count']).toBe('1');
    const all = await ctx.request({ method: 'GET', url: '/api/v1/instruments', token: org.viewer.token });
    expect(all.json().map((i: { id: number }) => i.id)).toContain(created.id);
    const one = await ctx.request({ method: 'GET', url: `/api/v1/instruments/${created.id}`, token: org.viewer.token });
    expect(one.json()).toEqual(full.json());

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${created.id}`, token: org.editor.token })).statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/instruments/${created.id}`, token: org.viewer.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: 'Instrument not found' });
    await vi.waitFor(async () => {
      const actions = (await pendingAuditEvents(ctx))
        .filter((event) => event.resource_type === 'instrument' && event.resource_id === String(created.id))
        .map((event) => event.action);
      expect(actions.sort()).toEqual(['create', 'delete', 'update', 'update']);
    });
  });

  it('refuses a duplicate name within the equipment, compared case-insensitively', async () => {
    const first = await createInstrument(ctx, org.admin.token, equipmentId, { name: 'Temperature' });
    for (const name of ['Temperature', 'TEMPERATURE', ' temperature ']) {
      const duplicate = await ctx.request({
        method: 'POST', url: '/api/v1/instruments', token: org.admin.token, payload: { name, type: 'temperature', equipment_id: equipmentId },
      });
      expect(duplicate.statusCode, name).toBe(409);
      expect(duplicate.json()).toEqual({ error: INSTRUMENT_MESSAGES.duplicateName });
    }
    // Another equipment may use the name; renaming onto a taken name is refused too.
    const elsewhere = await createInstrument(ctx, org.admin.token, secondEquipmentId, { name: 'temperature' });
    const moveOnto = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${elsewhere.id}`, token: org.admin.token, payload: { equipment_id: equipmentId } });
    expect(moveOnto.statusCode).toBe(409);
    expect(moveOnto.json()).toEqual({ error: INSTRUMENT_MESSAGES.duplicateName });
    const second = await createInstrument(ctx, org.admin.token, equipmentId, { name: 'Stirrer' });
    const rename = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${second.id}`, token: org.admin.token, payload: { name: 'temperature' } });
    expect(rename.statusCode).toBe(409);
    // Changing only the case of its own name is fine.
    const recase = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${first.id}`, token: org.admin.token, payload: { name: 'TEMPERATURE' } });
    expect(recase.statusCode).toBe(200);
  });

  it('answers the duplicate message when two creations race', async () => {
    const payload = { name: 'Raced', type: 'titer', unit: 'g/L', equipment_id: equipmentId };
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => ctx.request({ method: 'POST', url: '/api/v1/instruments', token: org.admin.token, payload })),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409)) {
      expect(response.json()).toEqual({ error: INSTRUMENT_MESSAGES.duplicateName });
    }
  });

  it('validates type, unit, name and equipment', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ type: 'pH', equipment_id: equipmentId }, 400, 'name: Name is required.'],
      [{ name: 'A', type: 'colour', equipment_id: equipmentId }, 400, "Type 'colour' is neither one of the instrument types nor one of your organisation's own."],
      [{ name: 'A', type: 'pH', unit: 'furlongs', equipment_id: equipmentId }, 400,
        "unit: Unit 'furlongs' is neither one of the units nor a UCUM code (e.g. mL/h, mmol/L, 10*6/mL, mV, {a.u.})."],
      [{ name: 'A', type: 'pH', equipment_id: foreignEquipmentId }, 404, 'Equipment not found'],
    ];
    for (const [payload, status, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/instruments', token: org.admin.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    const listForeign = await ctx.request({ method: 'GET', url: `/api/v1/equipment/${foreignEquipmentId}/instruments`, token: org.admin.token });
    expect(listForeign.statusCode).toBe(404);
  });

  it('enforces roles and organisations', async () => {
    const instrument = await createInstrument(ctx, org.admin.token, equipmentId);
    const viewer = await Promise.all([
      ctx.request({ method: 'POST', url: '/api/v1/instruments', token: org.viewer.token, payload: { name: 'V', type: 'pH', equipment_id: equipmentId } }),
      ctx.request({ method: 'PUT', url: `/api/v1/instruments/${instrument.id}`, token: org.viewer.token, payload: { alias: 'x' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/instruments/${instrument.id}`, token: org.viewer.token }),
    ]);
    expect(viewer.map((response) => response.statusCode)).toEqual([403, 403, 403]);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await ctx.request({
        method, url: `/api/v1/instruments/${instrument.id}`, token: other.admin.token, ...(method === 'PUT' ? { payload: { alias: 'x' } } : {}),
      });
      expect(response.statusCode, method).toBe(404);
    }
  });

  it('bulk: a whole plate in one call, in order, audited each; all or nothing when one name is taken, repeated or the equipment foreign', async () => {
    const facility = await createFacility(ctx, org.admin.token, { name: 'Plate lab' });
    const reader = (await createEquipment(ctx, org.admin.token, facility.id, { name: 'Plate reader' })).id;
    const wells = 'ABCDEFGH'.split('').flatMap((row) => Array.from({ length: 12 }, (_, column) => `${row}${column + 1}`));
    const count = async () => Number((await ctx.deps.pg.query('SELECT count(*) FROM instruments WHERE equipment_id = $1', [reader])).rows[0].count);
    const auditBefore = (await pendingAuditEvents(ctx)).length;
    const bulk = (instruments: unknown[]) => ctx.request({ method: 'POST', url: '/api/v1/instruments/bulk', token: org.editor.token, payload: { instruments } });

    const repeated = await bulk([{ equipment_id: reader, name: 'A1', type: 'optical_density' }, { equipment_id: reader, name: 'a1', type: 'optical_density' }]);
    expect(repeated.statusCode).toBe(409);
    expect(repeated.json().error).toBe("instruments[1].name: 'a1' is also instruments[0]'s name on the same equipment");
    expect(await count()).toBe(0);

    const created = await bulk(wells.map((well) => ({ equipment_id: reader, name: well, type: 'optical_density', unit: null, alias: well })));
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().map((instrument: { name: string }) => instrument.name)).toEqual(wells);
    expect(await count()).toBe(96);
    expect((await pendingAuditEvents(ctx)).length - auditBefore).toBe(96);

    const taken = await bulk([{ equipment_id: reader, name: 'Temperature', type: 'temperature' }, { equipment_id: reader, name: 'H12', type: 'optical_density' }]);
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error).toBe(`instruments[1] ('H12'): ${INSTRUMENT_MESSAGES.duplicateName}`);
    const foreign = await bulk([{ equipment_id: reader, name: 'Temperature', type: 'temperature' }, { equipment_id: foreignEquipmentId, name: 'X', type: 'temperature' }]);
    expect(foreign.statusCode).toBe(404);
    expect(await count()).toBe(96);

    expect((await bulk([])).statusCode).toBe(400);
    expect((await bulk(Array.from({ length: 801 }, (_, index) => ({ equipment_id: reader, name: `W${index}`, type: 'optical_density' })))).statusCode).toBe(400);
    const viewer = await ctx.request({ method: 'POST', url: '/api/v1/instruments/bulk', token: org.viewer.token, payload: { instruments: [{ equipment_id: reader, name: 'V', type: 'temperature' }] } });
    expect(viewer.statusCode).toBe(403);
  });
});
