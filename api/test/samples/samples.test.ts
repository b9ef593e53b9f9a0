import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sample, SampleInput } from '@bioprocess/shared/samples';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';
import { createProcessChain, pendingAuditEvents } from '../metadata/fixtures.ts';

type Json = Record<string, unknown>;

const day1: SampleInput = {
  sample_id: 'BR1-D1',
  drawn_at: '2024-03-02T08:00:00Z',
  notes: 'after feed',
  results: [
    { analyte: 'VCD', value: 4.2, unit: '10*6/mL', method: 'Vi-CELL BLU' },
    { analyte: 'Viability', value: 97.5, unit: '%', method: 'Vi-CELL BLU' },
    { analyte: 'Glucose', value: 5.1, unit: 'g/L', method: 'Cedex Bio', measured_at: '2024-03-02T08:40:00Z' },
    { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio' },
    { analyte: 'Titer', value: 50, flag: 'above_limit', unit: 'g/L', method: 'HPLC' },
  ],
};
const day2: SampleInput = {
  sample_id: 'BR1-D2', drawn_at: '2024-03-03T08:00:00Z',
  results: [{ analyte: 'Glucose', value: 3.9, unit: 'g/L' }],
};

describe('samples', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let unitOperationId: number;
  let foreignUnitOperationId: number;

  const samplesUrl = (id: number) => `/api/v1/unit-operations/${id}/samples`;

  async function saveGrid(token: string, id: number, payload: Json) {
    return ctx.request({ method: 'PUT', url: samplesUrl(id), token, payload });
  }

  async function listSamples(id = unitOperationId): Promise<Sample[]> {
    const response = await ctx.request({ method: 'GET', url: samplesUrl(id), token: org.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  async function sampleEvents(id: number): Promise<Json[]> {
    return (await pendingAuditEvents(ctx)).filter((event) => event.resource_type === 'sample' && event.resource_id === String(id));
  }

  async function storedRows(): Promise<{ samples: number; results: number }> {
    const { rows } = await ctx.deps.pg.query(
      `SELECT (SELECT count(*)::int FROM samples) AS samples, (SELECT count(*)::int FROM sample_results) AS results`,
    );
    return rows[0];
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    unitOperationId = (await createProcessChain(ctx, org.admin.token)).unitOperation.id;
    foreignUnitOperationId = (await createProcessChain(ctx, other.admin.token)).unitOperation.id;
  });
  afterAll(async () => { await ctx?.close(); });

  it('saves a grid of samples with their results and flags, and reads them back as entered', async () => {
    const saved = await saveGrid(org.editor.token, unitOperationId, { samples: [day2, day1] });
    expect(saved.statusCode, saved.body).toBe(200);
    const samples = await listSamples();
    expect(samples.map((sample) => sample.sample_id)).toEqual(['BR1-D1', 'BR1-D2']);
    const [first] = samples;
    expect(first).toMatchObject({
      organization_id: org.id, unit_operation_id: unitOperationId, drawn_at: '2024-03-02T08:00:00.000Z', notes: 'after feed',
    });
    expect(first!.results).toEqual([
      { analyte: 'VCD', value: 4.2, flag: null, unit: '10*6/mL', method: 'Vi-CELL BLU', measured_at: null },
      { analyte: 'Viability', value: 97.5, flag: null, unit: '%', method: 'Vi-CELL BLU', measured_at: null },
      { analyte: 'Glucose', value: 5.1, flag: null, unit: 'g/L', method: 'Cedex Bio', measured_at: '2024-03-02T08:40:00.000Z' },
      { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio', measured_at: null },
      { analyte: 'Titer', value: 50, flag: 'above_limit', unit: 'g/L', method: 'HPLC', measured_at: null },
    ]);
    expect(saved.json()).toEqual(samples);

    const one = await ctx.request({ method: 'GET', url: `/api/v1/samples/${first!.id}`, token: org.viewer.token });
    expect(one.json()).toEqual(first);

    // Saving what is stored again changes nothing and records no event.
    const eventsBefore = (await pendingAuditEvents(ctx)).length;
    const again = await saveGrid(org.editor.token, unitOperationId, { samples: [day1] });
    expect(again.statusCode).toBe(200);
    expect((await pendingAuditEvents(ctx)).length).toBe(eventsBefore);

    // A flag written back through the API comes back unchanged (the round trip the grid makes).
    const roundTrip = await saveGrid(org.editor.token, unitOperationId, {
      samples: [{ id: first!.id, sample_id: first!.sample_id, drawn_at: first!.drawn_at, notes: first!.notes, results: first!.results }],
    });
    expect(roundTrip.json()[0].results).toEqual(first!.results);
    expect((await pendingAuditEvents(ctx)).length).toBe(eventsBefore);
  });

  it('rejects a grid with bad cells as a whole, naming every bad cell by row and column', async () => {
    const before = await storedRows();
    const eventsBefore = (await pendingAuditEvents(ctx)).length;
    const response = await saveGrid(org.editor.token, unitOperationId, {
      samples: [
        { sample_id: 'BR1-D3', drawn_at: '2024-03-04T08:00:00Z', results: [{ analyte: 'Glucose', value: 2.5, unit: 'g/L' }] },
        { sample_id: 'BR1-D4', drawn_at: 'tomorrow morning', results: [{ analyte: 'Glucose', value: 'n/a', unit: 'g/L' }] },
        { sample_id: '', drawn_at: '2024-03-06T08:00:00Z', results: [{ analyte: 'Glucose', value: 1, unit: 'g/L' }, { analyte: 'glucose', value: 2, unit: 'g/L' }] },
      ],
    });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.cells).toEqual([
      { row: 2, column: 'Drawn', message: 'Invalid date format.' },
      { row: 2, column: 'Glucose [g/L]', message: 'A result needs a finite number (the limit when it is flagged).' },
      { row: 3, column: 'Sample ID', message: 'Sample ID is required.' },
      { row: 3, column: 'glucose [g/L]', message: 'analyte: Analyte appears more than once in this sample.' },
    ]);
    expect(body.error).toContain('row 2, Drawn: Invalid date format.');
    expect(body.error).toContain('row 3, Sample ID: Sample ID is required.');
    expect(await storedRows()).toEqual(before);
    expect((await pendingAuditEvents(ctx)).length).toBe(eventsBefore);

    const duplicate = await saveGrid(org.editor.token, unitOperationId, { samples: [day2, { ...day2, drawn_at: '2024-03-05T08:00:00Z' }] });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json().cells).toEqual([{ row: 2, column: 'Sample ID', message: 'Sample ID appears more than once.' }]);

    const malformed = await saveGrid(org.editor.token, unitOperationId, { samples: 'all of them' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toMatch(/^samples: /);
  });

  it('accepts UCUM units only, in the grid and in a correction', async () => {
    const before = await storedRows();
    const response = await saveGrid(org.editor.token, unitOperationId, {
      samples: [
        { sample_id: 'U1', drawn_at: '2024-03-04T09:00:00Z', results: [
          { analyte: 'OD', value: 3.2, unit: '1' },
          { analyte: 'Ammonium', value: 4.1, unit: 'mmol/L' },
          { analyte: 'Glucose', value: 2, unit: 'grams per litre' },
        ] },
        { sample_id: 'U2', drawn_at: '2024-03-04T10:00:00Z', results: [{ analyte: 'Weird', value: 1, unit: 'constructor' }] },
      ],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().cells).toEqual([
      { row: 1, column: 'Glucose [grams per litre]', message: "'grams per litre' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)." },
      { row: 2, column: 'Weird [constructor]', message: "'constructor' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)." },
    ]);
    expect(await storedRows()).toEqual(before);

    const [sample] = await listSamples();
    const patch = await ctx.request({
      method: 'PATCH', url: `/api/v1/samples/${sample!.id}`, token: org.editor.token,
      payload: { results: [{ analyte: 'Glucose', value: 5, unit: 'g/LL' }] },
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json()).toEqual({ error: "results.0.unit: 'g/LL' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %)." });
  });

  it('audits every correction and deletion with the sample before and after', async () => {
    const created = await saveGrid(org.editor.token, unitOperationId, {
      samples: [{ sample_id: 'A1', drawn_at: '2024-03-05T08:00:00Z', results: [{ analyte: 'Glucose', value: 4, unit: 'g/L' }] }],
    });
    const sample = (created.json() as Sample[]).find((row) => row.sample_id === 'A1')!;
    const patched = await ctx.request({
      method: 'PATCH', url: `/api/v1/samples/${sample.id}`, token: org.editor.token,
      payload: { notes: 're-measured', results: [{ analyte: 'Glucose', value: 3.6, unit: 'g/L', method: 'YSI 2950' }] },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ sample_id: 'A1', notes: 're-measured', results: [{ analyte: 'Glucose', value: 3.6, method: 'YSI 2950' }] });

    const byGrid = await saveGrid(org.editor.token, unitOperationId, {
      samples: [{ id: sample.id, sample_id: 'A1-redo', drawn_at: '2024-03-05T08:05:00Z', notes: 're-measured', results: [] }],
    });
    expect(byGrid.statusCode, byGrid.body).toBe(200);
    expect(await ctx.request({ method: 'DELETE', url: `/api/v1/samples/${sample.id}`, token: org.editor.token })).toMatchObject({ statusCode: 204 });
    expect((await ctx.request({ method: 'GET', url: `/api/v1/samples/${sample.id}`, token: org.viewer.token })).statusCode).toBe(404);

    const events = await sampleEvents(sample.id);
    expect(events.map((event) => event.action)).toEqual(['create', 'update', 'update', 'delete']);
    expect(events.every((event) => event.user_id === org.editor.id && event.organization_id === org.id)).toBe(true);
    const changes = events.map((event) => event.changes as { before: Sample | null; after: Sample | null });
    expect(changes[0]).toMatchObject({ before: null, after: { sample_id: 'A1', results: [{ value: 4, method: null }] } });
    expect(changes[1]).toMatchObject({
      before: { notes: null, results: [{ value: 4, method: null }] },
      after: { notes: 're-measured', results: [{ value: 3.6, method: 'YSI 2950' }] },
    });
    expect(changes[2]).toMatchObject({ before: { sample_id: 'A1' }, after: { sample_id: 'A1-redo', drawn_at: '2024-03-05T08:05:00.000Z', results: [] } });
    expect(changes[3]).toMatchObject({ before: { sample_id: 'A1-redo' }, after: null });
  });

  it('replaces a sample by its id within one save, swaps tube ids and refuses a taken one', async () => {
    const saved = await saveGrid(org.editor.token, unitOperationId, {
      samples: [
        { sample_id: 'S-A', drawn_at: '2024-03-06T08:00:00Z', results: [] },
        { sample_id: 'S-B', drawn_at: '2024-03-06T12:00:00Z', results: [] },
      ],
    });
    const a = (saved.json() as Sample[]).find((row) => row.sample_id === 'S-A')!;
    const b = (saved.json() as Sample[]).find((row) => row.sample_id === 'S-B')!;
    const swapped = await saveGrid(org.editor.token, unitOperationId, {
      samples: [
        { id: a.id, sample_id: 'S-B', drawn_at: a.drawn_at, results: [] },
        { id: b.id, sample_id: 'S-A', drawn_at: b.drawn_at, results: [] },
      ],
    });
    expect(swapped.statusCode, swapped.body).toBe(200);
    const after = await listSamples();
    expect(after.find((row) => row.id === a.id)!.sample_id).toBe('S-B');
    expect(after.find((row) => row.id === b.id)!.sample_id).toBe('S-A');

    const taken = await saveGrid(org.editor.token, unitOperationId, { samples: [{ id: a.id, sample_id: 'BR1-D1', drawn_at: a.drawn_at, results: [] }] });
    expect(taken.statusCode).toBe(400);
    expect(taken.json().cells).toEqual([{ row: 1, column: 'Sample ID', message: "Sample ID 'BR1-D1' is already used by another sample of this unit operation." }]);
    const renamed = await ctx.request({ method: 'PATCH', url: `/api/v1/samples/${a.id}`, token: org.editor.token, payload: { sample_id: 'BR1-D2' } });
    expect(renamed.statusCode).toBe(409);

    const removed = await saveGrid(org.editor.token, unitOperationId, { samples: [], delete_ids: [a.id, b.id] });
    expect(removed.statusCode).toBe(200);
    expect((removed.json() as Sample[]).some((row) => row.id === a.id || row.id === b.id)).toBe(false);
  });

  it('lets viewers read but not change samples, and editors and admins change them', async () => {
    const [sample] = await listSamples();
    const denied = await Promise.all([
      saveGrid(org.viewer.token, unitOperationId, { samples: [day2] }),
      ctx.request({ method: 'PATCH', url: `/api/v1/samples/${sample!.id}`, token: org.viewer.token, payload: { notes: 'x' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/samples/${sample!.id}`, token: org.viewer.token }),
    ]);
    expect(denied.map((response) => response.statusCode)).toEqual([403, 403, 403]);
    const byAdmin = await ctx.request({ method: 'PATCH', url: `/api/v1/samples/${sample!.id}`, token: org.admin.token, payload: { notes: 'checked' } });
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json().notes).toBe('checked');
  });

  it('answers 404 for another organisation\'s unit operation or sample, and never changes it', async () => {
    const foreign = await saveGrid(other.editor.token, foreignUnitOperationId, { samples: [day1] });
    expect(foreign.statusCode).toBe(200);
    const foreignSample = (foreign.json() as Sample[])[0]!;
    const before = await storedRows();

    const attempts = await Promise.all([
      ctx.request({ method: 'GET', url: samplesUrl(foreignUnitOperationId), token: org.admin.token }),
      saveGrid(org.admin.token, foreignUnitOperationId, { samples: [day2] }),
      ctx.request({ method: 'GET', url: `/api/v1/samples/${foreignSample.id}`, token: org.admin.token }),
      ctx.request({ method: 'PATCH', url: `/api/v1/samples/${foreignSample.id}`, token: org.admin.token, payload: { notes: 'mine now' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/samples/${foreignSample.id}`, token: org.admin.token }),
      // A foreign sample's id in the own unit operation's grid is not found either.
      saveGrid(org.admin.token, unitOperationId, { samples: [{ ...day2, id: foreignSample.id, sample_id: 'stolen' }] }),
      saveGrid(org.admin.token, unitOperationId, { samples: [], delete_ids: [foreignSample.id] }),
    ]);
    expect(attempts.map((response) => response.statusCode)).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(attempts.map((response) => response.json().error)).toEqual([
      'Unit operation not found', 'Unit operation not found', 'Sample not found', 'Sample not found', 'Sample not found', 'Sample not found', 'Sample not found',
    ]);
    expect(await storedRows()).toEqual(before);
    const untouched = await ctx.request({ method: 'GET', url: `/api/v1/samples/${foreignSample.id}`, token: other.viewer.token });
    expect(untouched.json()).toEqual(foreignSample);
  });
});
