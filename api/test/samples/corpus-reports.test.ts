/**
 * The cell counters of the real-export corpus through the samples report import, each imported by
 * accepting the import's suggestion (samples-import-suggestion.ts, what the Report import dialog
 * proposes first) through the real HTTP server: the Beckman Vi-CELL XR single-sample report and the
 * ChemoMetec NucleoView count (key/value reports), the ChemoMetec NC-View table (thousands grouped with
 * a no-break space) and the Roche Cedex HiRes table (no units in its header; the vendor's). Every stored
 * result (viable, dead and total cells, viability, diameters, aggregates, with units and measured
 * times) is compared with the file as this test reads it itself. The Thermo GENESYS 30 scan over
 * wavelength is refused with why, by the suggestion and by the api, writing nothing.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCsvBytes, type CsvLayout } from '@bioprocess/shared/csv/index';
import type { Sample, SampleInput } from '@bioprocess/shared/samples';
import type { SampleImportPreview, SampleReportMappingInput } from '@bioprocess/shared/samples-import';
import { suggestReportImport, type ReportSuggestion } from '@bioprocess/shared/samples-import-suggestion';
import { keyValueTable, readKeyValueReport } from '@bioprocess/shared/samples-key-value';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';
import { createProcessChain } from '../metadata/fixtures.ts';
import { multipartBody, realExportPath, type RealExportName } from '../support/ingest.ts';

const VI_CELL_XR = 'Beckman_Vi-Cell-XR_example07_instrumentOutput.txt';
const NUCLEOVIEW = 'chemometec_nucleoview_example01.csv';
const NC_VIEW = 'chememotec_nc_view_example.csv';
const CEDEX_HIRES = 'roche_cedex_hires_example_1.csv';
const GENESYS = 'thermo_fisher_genesys30_example_01.tsv';

type Expected = { analyte: string; value: number; unit: string; measured_at: string | null };

/** The mapping the dialog sends when every suggestion is accepted (console report-import-model's buildMapping). */
function acceptedMapping(suggestion: ReportSuggestion, reading: Pick<SampleReportMappingInput, 'encoding' | 'delimiter' | 'header_line' | 'key_value'>): SampleReportMappingInput {
  return {
    ...reading,
    sample_id_column: suggestion.sampleIdColumn,
    drawn_at_column: null,
    measured_at_column: suggestion.measuredAtColumn || null,
    limit_column: null,
    time_zone: 'UTC',
    layout: {
      kind: 'wide',
      analytes: suggestion.wide.filter((entry) => entry.include).map((entry) => ({ column: entry.column, analyte: entry.analyte, unit: entry.unit })),
    },
  };
}

/** A key/value report as the dialog reads it: decoded in the browser, its pairs found, then suggested. */
function keyValueSuggestion(name: RealExportName) {
  const { text, encoding } = decodeCsvBytes(new Uint8Array(readFileSync(realExportPath(name))));
  const report = readKeyValueReport(text);
  expect(report, name).not.toBeNull();
  const table = keyValueTable(report!);
  const suggestion = suggestReportImport({ headers: table.headers, rows: [table.values], timeColumn: null, keyValue: true, settingColumns: table.settingKeys });
  return { suggestion, mapping: acceptedMapping(suggestion, { key_value: true, encoding }) };
}

/** The pairs of a key/value report as this test reads the file: `key<separator>value` per line. */
function pairsOf(name: RealExportName, separator: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const line of readFileSync(realExportPath(name), 'latin1').split(/\r?\n/)) {
    const at = line.indexOf(separator);
    if (at > 0) pairs.set(line.slice(0, at).trim(), line.slice(at + separator.length).replace(/;+$/, '').trim());
  }
  return pairs;
}

/** A comma-separated table without quotes, as this test reads it. */
function csvRecords(name: RealExportName): Array<Record<string, string>> {
  const [header, ...lines] = readFileSync(realExportPath(name), 'utf8').split(/\r?\n/).filter((line) => line.trim() !== '');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, index) => [names[index], cell])));
}

const byAnalyte = (results: readonly Expected[]) => [...results].sort((a, b) => a.analyte.localeCompare(b.analyte));

describe('cell counter reports of the corpus, imported by accepting the suggestion', () => {
  let ctx: TestContext;
  let org: Organisation;

  async function unitOperationWith(sampleIds: string[]): Promise<number> {
    const id = (await createProcessChain(ctx, org.admin.token)).unitOperation.id;
    const samples: SampleInput[] = sampleIds.map((sampleId, index) => ({
      sample_id: sampleId, drawn_at: new Date(Date.UTC(2024, 0, 1) + index * 3_600_000).toISOString(), results: [],
    }));
    const response = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${id}/samples`, token: org.editor.token, payload: { samples } });
    expect(response.statusCode, response.body).toBe(200);
    return id;
  }

  async function importReport(id: number, mapping: SampleReportMappingInput, name: RealExportName, dryRun = false) {
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name, content: readFileSync(realExportPath(name)) });
    return ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${id}/sample-imports${dryRun ? '?dry_run=true' : ''}`, token: org.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
  }

  async function imported(id: number, mapping: SampleReportMappingInput, name: RealExportName): Promise<SampleImportPreview> {
    const response = await importReport(id, mapping, name);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as SampleImportPreview;
  }

  async function stored(id: number): Promise<Sample[]> {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${id}/samples`, token: org.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Sample[];
  }

  const resultsOf = (sample: Sample) => byAnalyte(sample.results.map(({ analyte, value, unit, measured_at, flag }) => {
    expect(flag).toBeNull();
    return { analyte, value, unit, measured_at };
  }));

  /** A table report as the dialog reads it: the api's preview of the file, then the suggestion. */
  async function tableSuggestion(name: RealExportName) {
    const { body, contentType } = multipartBody({}, { name, content: readFileSync(realExportPath(name)) });
    const response = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token: org.editor.token, headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode, response.body).toBe(200);
    const layout = response.json() as CsvLayout;
    const suggestion = suggestReportImport({
      headers: layout.headers, rows: layout.rows, timeColumn: layout.time?.mode === 'absolute' ? layout.time_column : null, keyValue: false,
    });
    return { layout, suggestion, mapping: acceptedMapping(suggestion, { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line }) };
  }

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
  });
  afterAll(async () => { await ctx?.close(); });

  it('Vi-CELL XR single-sample report (key : value): viability, total and viable cells per mL (x 10^6) and diameter, measured at its RunDate; settings and per-image lists left out', async () => {
    const { suggestion, mapping } = keyValueSuggestion(VI_CELL_XR);
    expect(suggestion).toMatchObject({ sampleIdColumn: 'Sample ID', measuredAtColumn: 'RunDate', refusal: null });
    // Settings of the count (a minimum diameter, the cell brightness) are offered, not chosen.
    expect(suggestion.wide.find((entry) => entry.column === 'Minimum diameter (microns)')).toMatchObject({ include: false, unit: 'um' });
    expect(suggestion.wide.find((entry) => entry.column === 'Cell brightness (%)')).toMatchObject({ include: false });
    const pairs = pairsOf(VI_CELL_XR, ' : ');
    const id = await unitOperationWith([pairs.get('Sample ID')!]);
    const answer = await imported(id, mapping, VI_CELL_XR);
    expect(answer).toMatchObject({ rows_read: 1, rows_unreadable: 0, samples_updated: 1, results_added: 4, unmatched_sample_ids: [] });
    const [sample] = await stored(id);
    expect(sample!.sample_id).toBe('CLB001');
    // `29 Sep 2023  5:21:32 AM`, read in UTC as the mapping says.
    const [day, month, year, time, half] = pairs.get('RunDate')!.split(/\s+/);
    const [hours, minutes, seconds] = time!.split(':').map(Number);
    expect([month, half]).toEqual(['Sep', 'AM']);
    const measured_at = new Date(Date.UTC(Number(year), 8, Number(day), hours! % 12, minutes!, seconds!)).toISOString();
    expect(measured_at).toBe('2023-09-29T05:21:32.000Z');
    expect(resultsOf(sample!)).toEqual(byAnalyte([
      { analyte: 'Viability', value: Number(pairs.get('Viability (%)')), unit: '%', measured_at },
      { analyte: 'Total cells', value: Number(pairs.get('Total cells / ml (x 10^6)')), unit: '10*6/mL', measured_at },
      { analyte: 'Total viable cells', value: Number(pairs.get('Total viable cells / ml (x 10^6)')), unit: '10*6/mL', measured_at },
      { analyte: 'Average diameter', value: Number(pairs.get('Average diameter (microns)')), unit: 'um', measured_at },
    ]));
    expect(sample!.results.find((result) => result.analyte === 'Viability')!.value).toBe(97);
  });

  it('NucleoView NC-200 count (key;value): live, dead and total cells per mL in E notation, viability, diameter and its SD, aggregates', async () => {
    const { suggestion, mapping } = keyValueSuggestion(NUCLEOVIEW);
    expect(suggestion).toMatchObject({ sampleIdColumn: 'Image', refusal: null });
    expect(suggestion.wide.filter((entry) => entry.column.startsWith('Sample Volume')).map((entry) => entry.include)).toEqual([false]);
    const pairs = pairsOf(NUCLEOVIEW, ';');
    const id = await unitOperationWith([pairs.get('Image')!]);
    const answer = await imported(id, mapping, NUCLEOVIEW);
    expect(answer).toMatchObject({ rows_read: 1, rows_unreadable: 0, samples_updated: 1, results_added: 7 });
    const [sample] = await stored(id);
    const cells = (key: string) => ({ value: Number(pairs.get(key)), unit: '{cells}/mL', measured_at: null });
    expect(resultsOf(sample!)).toEqual(byAnalyte([
      { analyte: 'Viability', value: Number(pairs.get('Viability (%)')), unit: '%', measured_at: null },
      { analyte: 'Live', ...cells('Live (cells/ml)') },
      { analyte: 'Dead', ...cells('Dead (cells/ml)') },
      { analyte: 'Total', ...cells('Total (cells/ml)') },
      { analyte: 'Estimated cell diameter', value: Number(pairs.get('Estimated cell diameter (um)')), unit: 'um', measured_at: null },
      { analyte: 'Cell diameter standard deviation', value: Number(pairs.get('Cell diameter standard deviation (um)')), unit: 'um', measured_at: null },
      { analyte: 'Cells in aggregates with five or more cells', value: Number(pairs.get('(%) of cells in aggregates with five or more cells')), unit: '%', measured_at: null },
    ]));
    expect(sample!.results.find((result) => result.analyte === 'Live')!.value).toBe(2_450_000);
  });

  it('NC-View table: 32 counts, concentrations grouped with a no-break space read as whole numbers', async () => {
    const { suggestion, mapping } = await tableSuggestion(NC_VIEW);
    expect(suggestion).toMatchObject({ sampleIdColumn: 'SAMPLE ID', measuredAtColumn: '', refusal: null });
    expect(suggestion.wide.filter((entry) => entry.include).map((entry) => entry.column))
      .toEqual(['TOTAL (cells/ml)', 'LIVE (cells/ml)', 'DEAD (cells/ml)', 'VIABILITY (%)', 'DIAMETER (µm)', 'AGGREGATES (%)']);
    const records = csvRecords(NC_VIEW);
    expect(records).toHaveLength(32);
    const id = await unitOperationWith(records.map((record) => record['SAMPLE ID']!));
    const answer = await imported(id, mapping, NC_VIEW);
    expect(answer).toMatchObject({ rows_read: 32, rows_unreadable: 0, samples_updated: 32, results_added: 32 * 6, unmatched_sample_ids: [] });
    const samples = await stored(id);
    const number = (text: string) => Number(text.replace(/\u00a0/g, ''));
    for (const record of records) {
      const sample = samples.find((entry) => entry.sample_id === record['SAMPLE ID'])!;
      expect(resultsOf(sample), record['SAMPLE ID']).toEqual(byAnalyte([
        { analyte: 'TOTAL', value: number(record['TOTAL (cells/ml)']!), unit: '{cells}/mL', measured_at: null },
        { analyte: 'LIVE', value: number(record['LIVE (cells/ml)']!), unit: '{cells}/mL', measured_at: null },
        { analyte: 'DEAD', value: number(record['DEAD (cells/ml)']!), unit: '{cells}/mL', measured_at: null },
        { analyte: 'VIABILITY', value: number(record['VIABILITY (%)']!), unit: '%', measured_at: null },
        { analyte: 'DIAMETER', value: number(record['DIAMETER (µm)']!), unit: 'um', measured_at: null },
        { analyte: 'AGGREGATES', value: number(record['AGGREGATES (%)']!), unit: '%', measured_at: null },
      ]));
    }
    expect(samples[0]!.results.find((result) => result.analyte === 'TOTAL')!.value).toBe(274_000);
  });

  it('Cedex HiRes table: 8 samples of one draw time, the units Roche documents, each measured when its count finished', async () => {
    const { suggestion, mapping } = await tableSuggestion(CEDEX_HIRES);
    expect(suggestion).toMatchObject({ sampleIdColumn: 'Sample identifer', measuredAtColumn: 'Date finished', refusal: null });
    const records = csvRecords(CEDEX_HIRES);
    expect(records).toHaveLength(8);
    const id = await unitOperationWith(records.map((record) => record['Sample identifer']!));
    const answer = await imported(id, mapping, CEDEX_HIRES);
    expect(answer).toMatchObject({ rows_read: 8, rows_unreadable: 0, samples_updated: 8, results_added: 8 * 6, unmatched_sample_ids: [] });
    const samples = await stored(id);
    // `6-18-2019 7:46:47 AM`, month first, read in UTC as the mapping says.
    const measured = (text: string) => {
      const [date, time, half] = text.split(' ');
      const [month, day, year] = date!.split('-').map(Number);
      const [hours, minutes, seconds] = time!.split(':').map(Number);
      return new Date(Date.UTC(year!, month! - 1, day!, (hours! % 12) + (half === 'PM' ? 12 : 0), minutes!, seconds!)).toISOString();
    };
    for (const record of records) {
      const sample = samples.find((entry) => entry.sample_id === record['Sample identifer'])!;
      const at = measured(record['Date finished']!);
      expect(resultsOf(sample), record['Sample identifer']).toEqual(byAnalyte([
        { analyte: 'Avg Diameter', value: Number(record['Avg Diameter']), unit: 'um', measured_at: at },
        { analyte: 'Viability', value: Number(record.Viability), unit: '%', measured_at: at },
        { analyte: 'Viable Cell Conc.', value: Number(record['Viable Cell Conc.']), unit: '{cells}/mL', measured_at: at },
        { analyte: 'Dead Cell Conc.', value: Number(record['Dead Cell Conc.']), unit: '{cells}/mL', measured_at: at },
        { analyte: 'Total Cell Conc.', value: Number(record['Total Cell Conc.']), unit: '{cells}/mL', measured_at: at },
        { analyte: 'Aggregate Rate', value: Number(record['Aggregate Rate']), unit: '%', measured_at: at },
      ]));
    }
  });

  it('GENESYS 30 absorbance scan: refused as one spectrum over wavelength, by the suggestion and by the import, writing nothing', async () => {
    const { layout, suggestion, mapping } = await tableSuggestion(GENESYS);
    // The time-series preview finds no time column in it either.
    expect(layout.notices.join(' ')).toContain('No time column was found');
    expect(suggestion.refusal).toBe("This report is a scan over wavelength ('wavelength(nm)', from 325 nm): one spectrum, not samples with results and not a time series. "
      + 'Export the readings at the wavelengths you need as a report with a sample ID and a column per wavelength.');
    const id = await unitOperationWith(['S1']);
    // Sent anyway, with the absorbance chosen by hand: the api refuses with the same reason.
    const chosen = { ...mapping, layout: { kind: 'wide' as const, analytes: [{ column: 'ABS', unit: '1' }] } };
    for (const dryRun of [true, false]) {
      const response = await importReport(id, chosen, GENESYS, dryRun);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toBe(suggestion.refusal);
    }
    expect((await stored(id))[0]!.results).toEqual([]);
  });

  it('answers a key/value mapping on a table, or a report of more keys than a table has columns, with a 400 that says why, writing nothing', async () => {
    const id = await unitOperationWith(['A1']);
    const { mapping } = keyValueSuggestion(VI_CELL_XR);
    const post = async (name: string, content: Buffer | string) => {
      const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name, content });
      return ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${id}/sample-imports`, token: org.editor.token, headers: { 'content-type': contentType }, payload: body });
    };
    const table = await post(NC_VIEW, readFileSync(realExportPath(NC_VIEW)));
    expect(table.statusCode, table.body).toBe(400);
    expect(table.json().error).toBe("The report is not a key/value report: no lines such as 'Sample ID : CLB001' or 'Viability (%);68.2' were found.");
    const many = ['Sample ID : A1', ...Array.from({ length: 10_001 }, (_, index) => `Reading ${index} (%) : ${index % 2 === 0 ? index : 'n/a'}`)].join('\n');
    const huge = await post('huge.txt', many);
    expect(huge.statusCode, huge.body).toBe(400);
    expect(huge.json().error).toBe('The key/value report has more than 10000 keys: a single sample\'s report is far smaller.');
    expect((await stored(id))[0]!.results).toEqual([]);
  });
});
