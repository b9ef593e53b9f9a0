/**
 * Analyzer reports into a unit operation's samples, against real reports: the Nova BioProfile FLEX2
 * export (wide, a percent in a density column), the Roche Cedex Bio HT archive (long, no header, its
 * file record and re-measured tests) and the offline OD/HPLC workbook of the DASware demo run (.xlsx).
 * Every imported value is checked against the file as the test reads it itself; unmatched ids,
 * excluded rows and unreadable rows are reported; the dry run writes nothing and the import is audited;
 * a flagged result survives the wide export and an import of it; roles, other organisations and bad
 * input are refused.
 */
import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sample, SampleInput } from '@bioprocess/shared/samples';
import type { SampleImportPreview, SampleReportMappingInput } from '@bioprocess/shared/samples-import';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';
import { createProcessChain, pendingAuditEvents } from '../metadata/fixtures.ts';
import { multipartBody, realExportPath } from '../support/ingest.ts';

const NOVA = 'SampleResultsDEVICE1232021-02-18_104838.csv';
const CEDEX = 'roche_cedex_bioht_example03.txt';
const BIOMASS = 'BiomassHPLC_20200714.xlsx';

const novaMapping: SampleReportMappingInput = {
  sample_id_column: 'Sample ID',
  measured_at_column: 'Date  Time',
  method: 'BioProfile FLEX2',
  layout: {
    kind: 'wide',
    analytes: [
      { column: 'Gln', analyte: 'Glutamine', unit: 'mmol/L' },
      { column: 'Gluc', analyte: 'Glucose', unit: 'g/L' },
      { column: 'Lac', analyte: 'Lactate', unit: 'g/L' },
      { column: 'Viable Density', analyte: 'VCD', unit: '10*6/mL' },
    ],
  },
};

const cedexMapping: SampleReportMappingInput = {
  header_line: 0,
  sample_id_column: 'Column 3',
  measured_at_column: 'Column 2',
  method: 'Cedex Bio HT',
  layout: { kind: 'long', analyte_column: 'Column 7', value_column: 'Column 11', unit_column: 'Column 9' },
  exclude: { column: 'Column 5', keep: ['SAM'] },
};

function sample(sampleId: string, hours: number, results: SampleInput['results'] = []): SampleInput {
  return { sample_id: sampleId, drawn_at: new Date(Date.UTC(2021, 1, 17) + hours * 3_600_000).toISOString(), results };
}

/** The Nova file as the test reads it: plain comma-separated lines without quotes. */
function novaRows(): Array<Record<string, string>> {
  const [header, ...lines] = readFileSync(realExportPath(NOVA), 'utf8').trim().split('\n');
  const names = header!.split(',').map((name) => name.replace(/"/g, ''));
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, index) => [names[index], cell])));
}

function expectedResult(text: string): { value: number; flag: string | null } {
  const trimmed = text.trim();
  if (trimmed.startsWith('<')) return { value: Number(trimmed.slice(1)), flag: 'below_limit' };
  return { value: Number(trimmed), flag: null };
}

describe('sample report import', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;

  async function unitOperation(token = org.admin.token): Promise<number> {
    return (await createProcessChain(ctx, token)).unitOperation.id;
  }

  async function saveGrid(id: number, samples: SampleInput[]) {
    const response = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${id}/samples`, token: org.editor.token, payload: { samples } });
    expect(response.statusCode, response.body).toBe(200);
  }

  async function listSamples(id: number): Promise<Sample[]> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${id}/samples`, token: org.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  function post(id: number, mapping: unknown, file: { name: string; content: Buffer | string; type?: string } | undefined, options: { dryRun?: boolean; token?: string } = {}) {
    const fields: Record<string, string> = mapping === undefined ? {} : { mapping: typeof mapping === 'string' ? mapping : JSON.stringify(mapping) };
    const { body, contentType } = multipartBody(fields, file);
    return ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${id}/sample-imports${options.dryRun ? '?dry_run=true' : ''}`,
      token: options.token ?? org.editor.token, headers: { 'content-type': contentType }, payload: body,
    });
  }

  async function importReport(id: number, mapping: unknown, name: string, dryRun: boolean): Promise<SampleImportPreview> {
    const response = await post(id, mapping, { name, content: readFileSync(realExportPath(name as typeof NOVA)) }, { dryRun });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  }

  async function storedCounts() {
    const { rows } = await ctx.deps.pg.query('SELECT (SELECT count(*)::int FROM samples) AS samples, (SELECT count(*)::int FROM sample_results) AS results');
    return rows[0] as { samples: number; results: number };
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
  });
  afterAll(async () => { await ctx?.close(); });

  it('imports the Nova FLEX2 report into the samples the grid holds: every value as the file writes it, the unreadable cell and the unmatched ids reported', async () => {
    const id = await unitOperation();
    await saveGrid(id, [
      sample('sample 0001', 1, [{ analyte: 'glucose', value: 9.9, unit: 'g/L' }, { analyte: 'Osmolality', value: 300, unit: 'mosm/kg' }]),
      sample(' SAMPLE 0002', 2),
      sample('SAMPLE 0003', 3),
    ]);
    const before = await storedCounts();
    const eventsBefore = (await pendingAuditEvents(ctx)).length;

    const preview = await importReport(id, novaMapping, NOVA, true);
    expect(await storedCounts()).toEqual(before);
    expect((await pendingAuditEvents(ctx)).length).toBe(eventsBefore);
    expect(preview).toMatchObject({ dry_run: true, rows_read: 6, rows_excluded: 0, samples_created: 0, samples_updated: 0 });
    expect(preview.samples_matched.map((entry) => entry.sample_id)).toEqual(['sample 0001', 'SAMPLE 0002', 'SAMPLE 0003']);
    expect(preview.samples_to_create).toEqual([]);
    expect(preview.unmatched_sample_ids).toEqual([
      { sample_id: 'SAMPLE 0004', rows: 1 }, { sample_id: 'SAMPLE 0005', rows: 1 }, { sample_id: 'SAMPLE 0006', rows: 1 },
    ]);
    // SAMPLE 0002's viable density is written '10.00%': not a density, so reported and not stored.
    expect(preview.unreadable).toEqual([{ line: 3, sample_id: 'SAMPLE 0002', reason: "Viable Density: '10.00%' is not a number or a flagged limit (< 0.5, > 50)." }]);
    expect(preview.rows_unreadable).toBe(1);
    // The stored glucose of sample 0001 (9.9) is replaced; everything else of the three samples is added.
    expect(preview.results_replaced).toBe(1);
    expect(preview.results_added).toBe(3 + 3 + 3);

    const imported = await importReport(id, novaMapping, NOVA, false);
    expect(imported).toMatchObject({ dry_run: false, samples_created: 0, samples_updated: 3, results_replaced: 1 });
    const samples = await listSamples(id);
    const rows = novaRows();
    for (const stored of samples) {
      const row = rows.find((entry) => entry['Sample ID']!.toLowerCase() === stored.sample_id.trim().toLowerCase())!;
      const measured = new Date(`${row['Date & Time']!.replace(/\s+/g, ' ')} UTC`).toISOString();
      const expected = [['Glutamine', 'Gln'], ['Glucose', 'Gluc'], ['Lactate', 'Lac'], ['VCD', 'Viable Density']]
        .filter(([, column]) => row[column!] !== '' && !row[column!]!.endsWith('%'))
        .map(([analyte, column]) => ({ analyte: analyte === 'Glucose' && stored.sample_id === 'sample 0001' ? 'glucose' : analyte, value: Number(row[column!]) }));
      for (const { analyte, value } of expected) {
        expect(stored.results.find((result) => result.analyte === analyte), `${stored.sample_id} ${analyte}`).toMatchObject({
          value, flag: null, method: 'BioProfile FLEX2', measured_at: measured,
        });
      }
    }
    // What the report does not hold is kept: sample 0001's osmolality.
    expect(samples[0]!.results.find((result) => result.analyte === 'Osmolality')).toMatchObject({ value: 300, unit: 'mosm/kg' });
    expect(samples[1]!.results.map((result) => result.analyte)).toEqual(['Glutamine', 'Glucose', 'Lactate']);

    // Audited like the grid's save: one update per sample, before and after.
    const events = (await pendingAuditEvents(ctx)).slice(eventsBefore);
    expect(events.map((event) => [event.resource_type, event.action])).toEqual([['sample', 'update'], ['sample', 'update'], ['sample', 'update']]);

    // The same report again changes nothing and records nothing.
    const again = await importReport(id, novaMapping, NOVA, false);
    expect(again).toMatchObject({ samples_updated: 0, results_added: 0, results_replaced: 0, results_unchanged: 10 });
    expect((await pendingAuditEvents(ctx)).length).toBe(eventsBefore + 3);
  });

  it('creates the samples the grid lacks when a drawn-time column is mapped', async () => {
    const id = await unitOperation();
    await saveGrid(id, [sample('SAMPLE 0001', 1)]);
    const mapping = { ...novaMapping, drawn_at_column: 'Sample Time', time_zone: 'America/New_York' };
    const preview = await importReport(id, mapping, NOVA, true);
    expect(preview.unmatched_sample_ids).toEqual([]);
    expect(preview.samples_to_create.map((entry) => entry.sample_id)).toEqual(['SAMPLE 0002', 'SAMPLE 0003', 'SAMPLE 0004', 'SAMPLE 0005', 'SAMPLE 0006']);
    const imported = await importReport(id, mapping, NOVA, false);
    expect(imported).toMatchObject({ samples_created: 5, samples_updated: 1 });
    const samples = await listSamples(id);
    expect(samples.map((entry) => entry.sample_id)).toEqual(['SAMPLE 0001', 'SAMPLE 0002', 'SAMPLE 0003', 'SAMPLE 0004', 'SAMPLE 0005', 'SAMPLE 0006']);
    const rows = novaRows();
    for (const stored of samples.slice(1)) {
      const row = rows.find((entry) => entry['Sample ID'] === stored.sample_id)!;
      // 10:28 AM in New York in February is 15:28 UTC.
      const local = new Date(`${row['Sample Time']!.replace(/\s+/g, ' ')} UTC`).getTime();
      expect(Date.parse(stored.drawn_at)).toBe(local + 5 * 3_600_000);
    }
  });

  it('imports the Cedex Bio HT archive (long, no header): the file record left out, < TEST RNG results kept as flagged limits, a re-measured test taken at its latest', async () => {
    const id = await unitOperation();
    const lines = readFileSync(realExportPath(CEDEX), 'utf8').trim().split('\n').map((line) => line.split('\t'));
    const results = lines.filter((cells) => cells[0] === '40');
    const wanted = ['Plate1_87', 'ID395A0', 'ID395F6', 'ID395C3'];
    expect(wanted.every((sampleId) => results.some((cells) => cells[2] === sampleId))).toBe(true);
    await saveGrid(id, wanted.map((sampleId, index) => sample(index === 0 ? sampleId.toLowerCase() : sampleId, index)));

    // Without units for OD (not a UCUM code), those rows are unreadable and say why.
    const first = await importReport(id, cedexMapping, CEDEX, true);
    expect(first.rows_read).toBe(931);
    expect(first.rows_excluded).toBe(1);
    expect(first.excluded[0]).toMatchObject({ line: 1, sample_id: '#ARC-FILE#' });
    const odRows = results.filter((cells) => cells[6] === 'ODB').length;
    expect(first.rows_unreadable).toBe(odRows);
    expect(first.unreadable[0]!.reason).toBe("The unit 'OD' of ODB is not a UCUM code: choose the unit it means.");
    const codes = [...new Set(results.map((cells) => cells[6]!))];
    expect(first.analytes.map((entry) => entry.source).sort()).toEqual([...codes].sort());

    const mapping = { ...cedexMapping, layout: { ...cedexMapping.layout, analytes: codes.map((code) => (code === 'ODB' ? { source: code, analyte: 'OD', unit: '1' } : { source: code })) } };
    const preview = await importReport(id, mapping, CEDEX, true);
    expect(preview.rows_unreadable).toBe(0);
    const unmatched = new Set(results.map((cells) => cells[2]!).filter((sampleId) => !wanted.includes(sampleId)));
    expect(preview.unmatched_sample_ids.map((entry) => entry.sample_id).sort()).toEqual([...unmatched].sort());
    const imported = await importReport(id, mapping, CEDEX, false);
    expect(imported.samples_updated).toBe(4);

    // The file as the test reads it: per sample and test, the latest measurement.
    const latest = new Map<string, string[]>();
    for (const cells of results) {
      if (!wanted.includes(cells[2]!)) continue;
      const key = `${cells[2]}|${cells[6]}`;
      const earlier = latest.get(key);
      if (!earlier || earlier[1]! <= cells[1]!) latest.set(key, cells);
    }
    expect(imported.results_superseded).toBe(results.filter((cells) => wanted.includes(cells[2]!)).length - latest.size);
    const samples = await listSamples(id);
    let flagged = 0;
    for (const cells of latest.values()) {
      const stored = samples.find((entry) => entry.sample_id.toLowerCase() === cells[2]!.toLowerCase())!;
      const analyte = cells[6] === 'ODB' ? 'OD' : cells[6]!;
      const expected = expectedResult(cells[10]!);
      if (expected.flag) flagged += 1;
      expect(stored.results.find((result) => result.analyte === analyte), `${cells[2]} ${analyte}`).toEqual({
        analyte, ...expected, unit: cells[6] === 'ODB' ? '1' : cells[8], method: 'Cedex Bio HT', measured_at: `${cells[1]!.replace(' ', 'T')}.000Z`,
      });
    }
    expect(samples.reduce((count, entry) => count + entry.results.length, 0)).toBe(latest.size);
    expect(flagged).toBeGreaterThan(0);
    expect(imported.flags_kept).toBe(flagged);
  });

  it('imports the offline OD and HPLC workbook of the DASware run (.xlsx): units from the headers or chosen, comments in value cells reported', async () => {
    const id = await unitOperation();
    const ids = ['T0', 'T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'T8', 'T9', 'T10', 'T11'];
    await saveGrid(id, ids.map((sampleId, index) => sample(sampleId, index * 2)));
    const mapping: SampleReportMappingInput = {
      sample_id_column: 'Tx', method: 'Offline',
      layout: {
        kind: 'wide',
        analytes: [
          { column: 'OD', unit: '1' }, { column: 'CDW (g/L)', unit: 'g/L' },
          { column: 'formic mg/L', analyte: 'Formate', unit: 'mg/L' }, { column: 'acetic mg/L', analyte: 'Acetate', unit: 'mg/L' },
        ],
      },
    };
    const response = await post(id, mapping, { name: BIOMASS, content: readFileSync(realExportPath(BIOMASS)), type: 'application/octet-stream' });
    expect(response.statusCode, response.body).toBe(200);
    const imported = response.json() as SampleImportPreview;
    expect(imported.unmatched_sample_ids).toEqual([{ sample_id: 'PRE', rows: 1 }]);
    expect(imported.unreadable.map((entry) => [entry.sample_id, entry.reason]), JSON.stringify(imported.unreadable)).toEqual([
      ['T10', "OD: 'Air flow significantly decreased, experi' is not a number or a flagged limit (< 0.5, > 50)."],
      ['PRE', "acetic mg/L: 'gDW' is not a number or a flagged limit (< 0.5, > 50)."],
    ]);

    // The workbook as ExcelJS reads it: the cached results of the formula cells.
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(realExportPath(BIOMASS));
    const sheet = workbook.worksheets[0]!;
    const samples = await listSamples(id);
    let checked = 0;
    sheet.eachRow((row, number) => {
      if (number < 3) return;
      const sampleId = String(row.getCell(1).value ?? '');
      const stored = samples.find((entry) => entry.sample_id === sampleId);
      if (!stored) return;
      for (const [column, analyte] of [[4, 'OD'], [5, 'CDW'], [9, 'Formate'], [10, 'Acetate']] as const) {
        const raw = row.getCell(column).value;
        const value = typeof raw === 'object' && raw !== null && 'result' in raw ? raw.result : raw;
        const result = stored.results.find((entry) => entry.analyte === analyte);
        if (typeof value !== 'number') {
          expect(result, `${sampleId} ${analyte}`).toBeUndefined();
          continue;
        }
        expect(result, `${sampleId} ${analyte}`).toMatchObject({ value, flag: null });
        checked += 1;
      }
    });
    expect(checked).toBe(40);
    expect(samples.find((entry) => entry.sample_id === 'T3')!.results.map((result) => [result.analyte, result.unit]))
      .toEqual([['OD', '1'], ['CDW', 'g/L'], ['Formate', 'mg/L'], ['Acetate', 'mg/L']]);
  });

  it('leaves out calibrators, controls and blanks by default and keeps flags with a limit column; a flag survives the wide export and an import of it', async () => {
    const id = await unitOperation();
    await saveGrid(id, [sample('BR1-D1', 24), sample('BR1-D2', 48)]);
    const report = [
      'Sample,Type,Glucose,Lactate,LLOQ',
      'Calibrator 1,Cal,5.00,2.00,',
      'QC-High,QC,8.1,3.2,',
      'Blank,Blank,0,0,',
      'BR1-D1,Sample,<LOQ,>50,0.2',
      'BR1-D2,Sample,3.25,Below range,0.1',
      'Control2,Sample,1,1,',
    ].join('\n');
    const mapping = {
      sample_id_column: 'Sample', limit_column: 'LLOQ',
      layout: { kind: 'wide', analytes: [{ column: 'Glucose', unit: 'g/L' }, { column: 'Lactate', unit: 'g/L' }] },
    };
    const response = await post(id, mapping, { name: 'report.csv', content: report });
    expect(response.statusCode, response.body).toBe(200);
    const imported = response.json() as SampleImportPreview;
    expect(imported.rows_excluded).toBe(4);
    expect(imported.excluded.map((entry) => entry.line)).toEqual([2, 3, 4, 7]);
    expect(imported.flags_kept).toBe(3);
    const [day1, day2] = await listSamples(id);
    expect(day1!.results.map((result) => [result.analyte, result.value, result.flag])).toEqual([['Glucose', 0.2, 'below_limit'], ['Lactate', 50, 'above_limit']]);
    expect(day2!.results.map((result) => [result.analyte, result.value, result.flag])).toEqual([['Glucose', 3.25, null], ['Lactate', 0.1, 'below_limit']]);

    // A sample-type column with the values to keep.
    const kept = await post(id, { ...mapping, exclude: { column: 'Type', keep: ['sample'] } }, { name: 'report.csv', content: report }, { dryRun: true });
    expect((kept.json() as SampleImportPreview).rows_excluded).toBe(3);

    // The wide export writes '< 0.2' and '> 50'; importing it into a fresh unit operation gives the same results.
    const exported = await ctx.request({ method: 'GET', url: `/api/v1/exports/samples?unit_operation_id=${id}&format=csv-wide`, token: org.editor.token });
    expect(exported.statusCode, exported.body).toBe(200);
    const header = exported.body.split(/\r?\n/)[0]!.split(',');
    const target = await unitOperation();
    await saveGrid(target, [sample('BR1-D1', 24), sample('BR1-D2', 48)]);
    const analytes = header.filter((name) => name.includes('[')).map((name) => ({ column: name, analyte: name.replace(/\s*\[.*$/, ''), unit: /\[(.*)\]/.exec(name)![1]! }));
    const again = await post(target, { sample_id_column: 'Sample ID', layout: { kind: 'wide', analytes } }, { name: 'samples.csv', content: exported.body });
    expect(again.statusCode, again.body).toBe(200);
    const copied = await listSamples(target);
    expect(copied.map((entry) => entry.results.map(({ analyte, value, flag, unit }) => ({ analyte, value, flag, unit }))))
      .toEqual([day1!, day2!].map((entry) => entry.results.map(({ analyte, value, flag, unit }) => ({ analyte, value, flag, unit }))));
  });

  it('lets editors and admins import, refuses viewers, answers 404 for another organisation and 400 for bad input, writing nothing', async () => {
    const id = await unitOperation();
    await saveGrid(id, [sample('SAMPLE 0001', 1)]);
    const file: { name: string; content: Buffer | string } = { name: NOVA, content: readFileSync(realExportPath(NOVA)) };
    const before = await storedCounts();
    expect((await post(id, novaMapping, file, { token: org.viewer.token })).statusCode).toBe(403);
    expect((await post(await unitOperation(other.admin.token), novaMapping, file, { token: org.editor.token })).statusCode).toBe(404);
    expect((await post(id, novaMapping, file, { token: other.admin.token })).statusCode).toBe(404);
    const bad: Array<[unknown, typeof file | undefined, string]> = [
      [undefined, file, 'The mapping field (JSON) must come before the file.'],
      ['{not json', file, 'mapping: must be JSON'],
      [novaMapping, undefined, 'No file: send the report in a part named file.'],
      [{ ...novaMapping, sample_id_column: 'Tube' }, file, "Sample ID column 'Tube' is not in the report's header."],
      [{ ...novaMapping, layout: { kind: 'wide', analytes: [] } }, file, 'mapping.layout.analytes: Choose at least one analyte column.'],
      [{ ...novaMapping, layout: { kind: 'wide', analytes: [{ column: 'Gln', unit: 'mmol per litre' }] } }, file, 'Unit of Gln:'],
      [{ ...novaMapping, time_zone: 'Mars/Olympus' }, file, 'time_zone:'],
      [novaMapping, { name: 'report.pdf', content: '%PDF-1.4' }, ''],
      [novaMapping, { name: 'report.csv', content: Buffer.from([0, 1, 2, 3, 0, 0, 0, 9]) }, ''],
    ];
    for (const [mapping, upload, message] of bad) {
      const response = await post(id, mapping, upload);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toContain(message);
    }
    const huge = await post(id, novaMapping, { name: 'big.csv', content: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') });
    expect(huge.statusCode).toBe(413);
    expect(await storedCounts()).toEqual(before);
    const admin = await post(id, novaMapping, file, { token: org.admin.token });
    expect(admin.statusCode, admin.body).toBe(200);
  });
});
