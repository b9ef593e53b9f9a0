/**
 * Samples out again: the sample file (CSV long and wide) of a unit operation and of a run, the sample
 * sheets of the time-series XLSX, flags kept in each; editors and admins only, another organisation's
 * unit operation or run 404; and the round trip: the wide file pasted into the grid (the console's own
 * paste parser and grid model) and saved through the api gives the same results.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { SAMPLE_LONG_COLUMNS, type Sample, type SampleInput } from '@bioprocess/shared/samples';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { createHash } from 'node:crypto';
import JSZip from 'jszip';
import type { ArchiveManifest } from '../../src/exports/archive.ts';
import { followExportJob, startExportWorkerFor } from '../exports/job-support.ts';
import { parsePaste } from '../../../console/src/samples/paste-parser.ts';
import { applyPaste, buildSaveRequest, gridFromSamples, gridProblems, isGridChanged, type SampleView } from '../../../console/src/samples/grid-model.ts';

const T0 = Date.UTC(2024, 2, 1, 8);
const HOUR = 3_600_000;

const day1: SampleInput = {
  sample_id: 'BR1-D1', drawn_at: new Date(T0 + 24 * HOUR).toISOString(), notes: 'after feed, "bolus"',
  results: [
    { analyte: 'VCD', value: 4.2, unit: '10*6/mL', method: 'Vi-CELL BLU' },
    { analyte: 'Glucose', value: 5.1, unit: 'g/L', method: 'Cedex Bio', measured_at: new Date(T0 + 25 * HOUR).toISOString() },
    { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio' },
    { analyte: 'Titer', value: 50, flag: 'above_limit', unit: 'g/L', method: 'HPLC' },
  ],
};
const day2: SampleInput = {
  sample_id: 'BR1-D2', drawn_at: new Date(T0 + 48 * HOUR + 15 * 60_000).toISOString(),
  results: [
    { analyte: 'VCD', value: 8.9, unit: '10*6/mL', method: 'Vi-CELL BLU' },
    { analyte: 'Glucose', value: 3.9, unit: 'g/L', method: 'Cedex Bio' },
    { analyte: 'Lactate', value: 1.25, unit: 'g/L', method: 'Cedex Bio' },
  ],
};

function csv(text: string): string[][] {
  return parse(text) as string[][];
}

/** What a spreadsheet puts on the clipboard for a block of cells: tab-separated, quoted where a cell needs it. */
function asClipboard(rows: string[][]): string {
  const cell = (text: string) => (/[\t\n"]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  return `${rows.map((row) => row.map(cell).join('\t')).join('\r\n')}\r\n`;
}

function toView(sample: Sample): SampleView {
  return {
    id: sample.id, unitOperationId: sample.unit_operation_id, sampleId: sample.sample_id, drawnAt: sample.drawn_at, notes: sample.notes,
    results: sample.results.map((result) => ({ ...result, measuredAt: result.measured_at })),
  };
}

describe('samples in exports', () => {
  let ctx: TestContext;
  let plant: Plant;
  let admin: TestUser;
  let unitOperationId: number;
  let secondUnitOperationId: number;
  let runId: number;
  let foreign: { unitOperationId: number; runId: number; editor: TestUser };

  const sampleExport = (token: string, query: Record<string, string | number>) =>
    ctx.request({ method: 'GET', url: `/api/v1/exports/samples?${new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]))}`, token });

  async function listSamples(id: number): Promise<Sample[]> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${id}/samples`, token: plant.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 1);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    unitOperationId = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 72 * HOUR).toISOString() });
    runId = Number((await ctx.deps.pg.query('SELECT run_id FROM unit_operations WHERE id = $1', [unitOperationId])).rows[0].run_id);
    secondUnitOperationId = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString() });
    const saved = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${unitOperationId}/samples`, token: plant.editor.token, payload: { samples: [day1, day2] } });
    expect(saved.statusCode, saved.body).toBe(200);
    const other = await createPlant(ctx, 1);
    const otherUnitOperation = await createUnitOperation(ctx, other, { start: new Date(T0).toISOString() });
    const otherRun = Number((await ctx.deps.pg.query('SELECT run_id FROM unit_operations WHERE id = $1', [otherUnitOperation])).rows[0].run_id);
    foreign = { unitOperationId: otherUnitOperation, runId: otherRun, editor: other.editor };
  });
  afterAll(async () => { await ctx?.close(); });

  it('writes one row per result in the long file, the value or the flag with its limit, elapsed from the start', async () => {
    const response = await sampleExport(plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-long' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="unit-operation-${unitOperationId}-\\d{8}T\\d{6}-samples-long\\.csv"$`));
    const [header, ...rows] = csv(response.body);
    expect(header).toEqual([...SAMPLE_LONG_COLUMNS]);
    const id = String(unitOperationId);
    const d1 = new Date(T0 + 24 * HOUR).toISOString();
    const d2 = new Date(T0 + 48 * HOUR + 15 * 60_000).toISOString();
    expect(rows).toEqual([
      [id, 'BR1-D1', d1, '86400', 'VCD', '4.2', '', '', '10*6/mL', 'Vi-CELL BLU', '', 'after feed, "bolus"'],
      [id, 'BR1-D1', d1, '86400', 'Glucose', '5.1', '', '', 'g/L', 'Cedex Bio', new Date(T0 + 25 * HOUR).toISOString(), 'after feed, "bolus"'],
      [id, 'BR1-D1', d1, '86400', 'Lactate', '', 'below_limit', '0.5', 'g/L', 'Cedex Bio', '', 'after feed, "bolus"'],
      [id, 'BR1-D1', d1, '86400', 'Titer', '', 'above_limit', '50', 'g/L', 'HPLC', '', 'after feed, "bolus"'],
      [id, 'BR1-D2', d2, '173700', 'VCD', '8.9', '', '', '10*6/mL', 'Vi-CELL BLU', '', ''],
      [id, 'BR1-D2', d2, '173700', 'Glucose', '3.9', '', '', 'g/L', 'Cedex Bio', '', ''],
      [id, 'BR1-D2', d2, '173700', 'Lactate', '1.25', '', '', 'g/L', 'Cedex Bio', '', ''],
    ]);
    const event = (await pendingAuditEvents(ctx)).find((candidate) => candidate.event_type === 'samples.exported');
    expect(event).toMatchObject({ resource_type: 'unit_operation', resource_id: id, success: true, changes: { after: { format: 'csv-long', samples: 2, rows: 7, complete: true } } });
  });

  it('writes one row per sample in the wide file, a column per analyte and unit naming its one method, flags as the grid writes them', async () => {
    const response = await sampleExport(plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide' });
    expect(response.statusCode, response.body).toBe(200);
    expect(csv(response.body)).toEqual([
      ['Sample ID', 'Drawn', 'VCD [10*6/mL] (Vi-CELL BLU)', 'Glucose [g/L] (Cedex Bio)', 'Lactate [g/L] (Cedex Bio)', 'Titer [g/L] (HPLC)', 'Notes'],
      ['BR1-D1', new Date(T0 + 24 * HOUR).toISOString(), '4.2', '5.1', '< 0.5', '> 50', 'after feed, "bolus"'],
      ['BR1-D2', new Date(T0 + 48 * HOUR + 15 * 60_000).toISOString(), '8.9', '3.9', '1.25', '', ''],
    ]);
  });

  it("names each row's unit operation in a run's wide file, which the grid's paste ignores", async () => {
    const response = await sampleExport(admin.token, { run_id: runId, format: 'csv-wide' });
    expect(response.statusCode, response.body).toBe(200);
    const [header, ...rows] = csv(response.body);
    expect(header![0]).toBe('Unit operation');
    expect(rows.map((row) => row.slice(0, 2))).toEqual([[String(unitOperationId), 'BR1-D1'], [String(unitOperationId), 'BR1-D2']]);
    expect(parsePaste(asClipboard([header!])).header![0]).toBeNull();
  });

  it('gives the same results when the wide file is pasted into the grid and saved, flags included', async () => {
    const exported = csv((await sampleExport(plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide' })).body);
    const paste = parsePaste(asClipboard(exported));

    // Pasted back over the grid it came from: nothing differs, so nothing is saved.
    const original = await listSamples(unitOperationId);
    expect(isGridChanged(applyPaste(gridFromSamples(original.map(toView)), paste, { row: 0, column: 0 }))).toBe(false);

    // Pasted into another unit operation's empty grid and saved through the api.
    const grid = applyPaste(gridFromSamples([]), paste, { row: 0, column: 0 });
    expect(gridProblems(grid).size).toBe(0);
    const { body } = buildSaveRequest(grid);
    const saved = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${secondUnitOperationId}/samples`, token: plant.editor.token, payload: body });
    expect(saved.statusCode, saved.body).toBe(200);
    const copy = await listSamples(secondUnitOperationId);
    // The wide file has no measured times (the long file has them); everything else is the same.
    const comparable = (samples: Sample[]) => samples.map((sample) => ({
      sample_id: sample.sample_id, drawn_at: sample.drawn_at, notes: sample.notes,
      results: sample.results.map(({ measured_at: _measured, ...result }) => result),
    }));
    expect(comparable(copy)).toEqual(comparable(original));
    expect(copy[0]!.results.filter((result) => result.flag !== null)).toEqual([
      { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio', measured_at: null },
      { analyte: 'Titer', value: 50, flag: 'above_limit', unit: 'g/L', method: 'HPLC', measured_at: null },
    ]);
    const again = csv((await sampleExport(plant.editor.token, { unit_operation_id: secondUnitOperationId, format: 'csv-wide' })).body);
    expect(again).toEqual(exported);
    await ctx.deps.pg.query('DELETE FROM samples WHERE unit_operation_id = $1', [secondUnitOperationId]);
  });

  it('puts the samples in sheets of their own in the XLSX export: wide to paste, long with every field', async () => {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/exports/time-series?unit_operation_id=${unitOperationId}&format=xlsx`, token: plant.editor.token });
    expect(response.statusCode, response.body).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(response.rawPayload as unknown as ArrayBuffer);
    const values = (name: string) => workbook.getWorksheet(name)!.getSheetValues().slice(1).map((row) => (row as unknown[]).slice(1));
    const wide = values('Samples');
    expect(wide[0]).toEqual(['Sample ID', 'Drawn', 'VCD [10*6/mL] (Vi-CELL BLU)', 'Glucose [g/L] (Cedex Bio)', 'Lactate [g/L] (Cedex Bio)', 'Titer [g/L] (HPLC)', 'Notes']);
    expect(wide[1]).toEqual(['BR1-D1', new Date(T0 + 24 * HOUR).toISOString(), 4.2, 5.1, '< 0.5', '> 50', 'after feed, "bolus"']);
    const long = values('Sample results');
    expect(long[0]).toEqual([...SAMPLE_LONG_COLUMNS]);
    expect(long).toHaveLength(8);
    expect(long[3]!.slice(4, 8)).toEqual(['Lactate', undefined, 'below_limit', 0.5]);
  });

  it("puts every sample of the organisation, and none of another's, in the archive with its manifest entry", async () => {
    const foreignSave = await ctx.request({
      method: 'PUT', url: `/api/v1/unit-operations/${foreign.unitOperationId}/samples`, token: foreign.editor.token,
      payload: { samples: [{ sample_id: 'FOREIGN-1', drawn_at: new Date(T0).toISOString(), results: [{ analyte: 'Glucose', value: 9, unit: 'g/L' }] }] },
    });
    expect(foreignSave.statusCode, foreignSave.body).toBe(200);
    const exporter = startExportWorkerFor(ctx);
    try {
      const accepted = await ctx.request({ method: 'POST', url: '/api/v1/exports/organization-archive', token: admin.token });
      expect(accepted.statusCode, accepted.body).toBe(202);
      const last = (await followExportJob(ctx, admin.token, accepted.json().id)).at(-1)!;
      expect(last.state).toBe('completed');
      const zip = await JSZip.loadAsync((await ctx.request({ method: 'GET', url: last.download_url!, token: admin.token })).rawPayload);
      const manifest = JSON.parse(await zip.file('manifest.json')!.async('string')) as ArchiveManifest;
      const entry = manifest.files.find((file) => file.path === 'samples/samples.csv')!;
      expect(entry).toMatchObject({ rows: 7, schema: { format: 'csv' } });
      expect(entry.schema.columns).toContainEqual({ name: 'limit', type: 'number' });
      expect(entry.schema.columns).toContainEqual({ name: 'drawn_at', type: 'timestamp' });
      const bytes = await zip.file(entry.path)!.async('nodebuffer');
      expect(bytes.length).toBe(entry.bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(entry.sha256);
      const [header, ...rows] = csv(bytes.toString('utf8'));
      expect(header).toEqual(entry.schema.columns.map((column) => column.name));
      expect(rows.map((row) => row[1])).toEqual(['BR1-D1', 'BR1-D1', 'BR1-D1', 'BR1-D1', 'BR1-D2', 'BR1-D2', 'BR1-D2']);
      expect(rows.filter((row) => row[6] !== '').map((row) => row.slice(4, 8))).toEqual([['Lactate', '', 'below_limit', '0.5'], ['Titer', '', 'above_limit', '50']]);
    } finally {
      await exporter.close();
    }
  });

  it('is for editors and admins, answers 404 for another organisation and 400 naming a bad scope', async () => {
    expect((await sampleExport(plant.viewer.token, { unit_operation_id: unitOperationId, format: 'csv-long' })).statusCode).toBe(403);
    for (const query of [{ unit_operation_id: unitOperationId }, { run_id: runId }] as Array<Record<string, number>>) {
      const response = await sampleExport(foreign.editor.token, { ...query, format: 'csv-long' });
      expect(response.statusCode, response.body).toBe(404);
    }
    const own = await sampleExport(foreign.editor.token, { unit_operation_id: foreign.unitOperationId, format: 'csv-long' });
    expect(own.statusCode).toBe(200);
    expect(csv(own.body).slice(1).map((row) => row[1])).not.toContain('BR1-D1');
    const both = await sampleExport(plant.editor.token, { unit_operation_id: unitOperationId, run_id: runId, format: 'csv-long' });
    expect(both.statusCode).toBe(400);
    expect(both.json().error).toMatch(/unit_operation_id or a run_id/);
    const format = await sampleExport(plant.editor.token, { unit_operation_id: unitOperationId, format: 'xlsx' });
    expect(format.statusCode).toBe(400);
    expect(format.json().error).toMatch(/format/);
  });
});
