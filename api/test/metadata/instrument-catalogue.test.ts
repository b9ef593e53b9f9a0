import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE_MESSAGES } from '@bioprocess/shared/instruments/catalogue';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createEquipment, createFacility, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

describe("an organisation's own instrument types and units", () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let equipmentId: number;
  let foreignEquipmentId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    equipmentId = (await createEquipment(ctx, org.admin.token, (await createFacility(ctx, org.admin.token)).id)).id;
    foreignEquipmentId = (await createEquipment(ctx, other.admin.token, (await createFacility(ctx, other.admin.token)).id)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  const post = (token: string, kind: 'types' | 'units', payload: Record<string, unknown>) =>
    ctx.request({ method: 'POST', url: `/api/v1/instrument-catalogue/${kind}`, token, payload });
  const catalogue = async (token: string) => (await ctx.request({ method: 'GET', url: '/api/v1/instrument-catalogue', token })).json();
  const countRows = async (table: string) => Number((await ctx.deps.pg.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

  it('admins add types and units, every member reads them, other organisations never see them', async () => {
    const type = await post(org.admin.token, 'types', { name: 'Capacitance', default_unit: 'pF/cm' });
    expect(type.statusCode).toBe(201);
    expect(type.json()).toMatchObject({ name: 'Capacitance', default_unit: 'pF/cm' });
    const unit = await post(org.admin.token, 'units', { code: 'umol/L', label: 'micromolar' });
    expect(unit.statusCode).toBe(201);

    for (const member of [org.viewer, org.editor, org.admin]) {
      const read = await catalogue(member.token);
      expect(read.types.map((entry: { name: string }) => entry.name)).toEqual(['Capacitance']);
      expect(read.units.map((entry: { code: string }) => entry.code)).toEqual(['umol/L']);
      expect(read.built_in_types).toContain('redox_potential');
      expect(read.built_in_units).toEqual(expect.arrayContaining(['mmol/L', 'U/L', '10*6/mL', 'mV', 'celsius', 'OD600']));
    }
    expect(await catalogue(other.admin.token)).toMatchObject({ types: [], units: [] });

    // The other organisation cannot use the type, nor remove either entry.
    const foreign = await ctx.request({ method: 'POST', url: '/api/v1/instruments', token: other.admin.token,
      payload: { name: 'Probe', type: 'Capacitance', equipment_id: foreignEquipmentId } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toEqual({ error: CATALOGUE_MESSAGES.unknownType('Capacitance') });
    const foreignDelete = await ctx.request({ method: 'DELETE', url: `/api/v1/instrument-catalogue/units/${unit.json().id}`, token: other.admin.token });
    expect(foreignDelete.statusCode).toBe(404);
    expect(await countRows('instrument_catalogue_units')).toBe(1);
  });

  it('refuses editors and viewers, and writes nothing for them', async () => {
    const before = await countRows('instrument_catalogue_types');
    for (const member of [org.viewer, org.editor]) {
      expect((await post(member.token, 'types', { name: `By ${member.role}` })).statusCode).toBe(403);
      expect((await post(member.token, 'units', { code: 'kat/L', label: 'katal per litre' })).statusCode).toBe(403);
    }
    expect(await countRows('instrument_catalogue_types')).toBe(before);
  });

  it('answers 400 naming the bad code or name, 409 for a repeat', async () => {
    const cases: Array<['types' | 'units', Record<string, unknown>, number, string]> = [
      ['units', { code: 'furlongs/fortnight', label: 'speed' }, 400, "code: 'furlongs/fortnight' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)."],
      ['units', { code: 'cells/mL', label: 'cells' }, 400, "code: 'cells/mL' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)."],
      ['units', { code: '__proto__', label: 'x' }, 400, "code: '__proto__' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)."],
      ['units', { code: 'mmol/L', label: 'millimolar' }, 400, "code: 'mmol/L' is already one of the units."],
      ['units', { code: 'ng/mL' }, 400, 'label: Label is required.'],
      ['types', { name: 'Probe', default_unit: 'parsecs per jiffy' }, 400,
        "default_unit: Default unit: Unit 'parsecs per jiffy' is neither one of the units nor a UCUM code (e.g. mL/h, mmol/L, 10*6/mL, mV, {a.u.})."],
      ['types', { name: 'Redox_Potential' }, 400, "name: 'Redox_Potential' is already one of the instrument types."],
      ['types', { name: 'Bad [name]' }, 400, 'name: Name may not contain quotes, brackets or control characters.'],
      ['types', { name: 'capacitance' }, 409, CATALOGUE_MESSAGES.typeNameTaken],
      ['units', { code: 'umol/L', label: 'again' }, 409, CATALOGUE_MESSAGES.unitCodeTaken],
    ];
    const typesBefore = await countRows('instrument_catalogue_types');
    const unitsBefore = await countRows('instrument_catalogue_units');
    for (const [kind, payload, status, error] of cases) {
      const response = await post(org.admin.token, kind, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    expect([await countRows('instrument_catalogue_types'), await countRows('instrument_catalogue_units')]).toEqual([typesBefore, unitsBefore]);
  });

  it("instruments take the organisation's types and any UCUM unit, and keep them when a type is removed", async () => {
    const create = (payload: Record<string, unknown>) =>
      ctx.request({ method: 'POST', url: '/api/v1/instruments', token: org.editor.token, payload: { equipment_id: equipmentId, ...payload } });
    const probe = await create({ name: 'Biomass probe', type: 'capacitance', unit: 'pF/cm' });
    expect(probe.statusCode).toBe(201);
    // Stored as the organisation spells its type; the unit as written.
    expect(probe.json()).toMatchObject({ type: 'Capacitance', unit: 'pF/cm' });
    for (const [type, unit] of [['feed_rate', 'mL/h'], ['redox_potential', 'mV'], ['cell_density', '10*6/mL'], ['optical_density', '{a.u.}'], ['temperature', 'celsius']]) {
      const created = await create({ name: `${type} ${unit}`, type, unit });
      expect(created.statusCode, `${type} ${unit}`).toBe(201);
      expect(created.json().unit).toBe(unit);
    }
    const bad = await create({ name: 'Stirrer', type: 'stir_rate', unit: 'rev/s' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toContain("'rev/s'");

    const typeId = (await catalogue(org.admin.token)).types[0].id;
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/instrument-catalogue/types/${typeId}`, token: org.admin.token })).statusCode).toBe(204);
    // The instrument keeps its type: renaming it is fine, a new one of that type is refused.
    const renamed = await ctx.request({ method: 'PUT', url: `/api/v1/instruments/${probe.json().id}`, token: org.editor.token, payload: { name: 'Biomass probe 2', type: 'Capacitance' } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ type: 'Capacitance', unit: 'pF/cm' });
    expect((await create({ name: 'Second probe', type: 'Capacitance' })).statusCode).toBe(400);
  });

  it('audits every change with who made it', async () => {
    const events = (await pendingAuditEvents(ctx)).filter((event) => String(event.event_type).startsWith('instrument_'));
    expect(events.map((event) => [event.event_type, event.resource_type, event.user_id])).toEqual([
      ['instrument_type.created', 'instrument_type', org.admin.id],
      ['instrument_unit.created', 'instrument_unit', org.admin.id],
      ['instrument_type.deleted', 'instrument_type', org.admin.id],
    ]);
    expect(events[0]!.changes).toEqual({ before: null, after: { name: 'Capacitance', default_unit: 'pF/cm' } });
  });
});
