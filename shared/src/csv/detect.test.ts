/**
 * The layout detection against the real exports of shared/test-data (SOURCES.md describes each): what
 * the preview answers for each file that needs a preamble skipped, another encoding, a table end, a
 * clock or US-dated time column or a start from the preamble, and the shapes it says it cannot read yet.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectCsvLayout, LAYOUT_PREVIEW_BYTES, unitFromHeader, type CsvLayout } from './detect.ts';
import { CSV_MESSAGES } from './messages.ts';
import { realExportPath, type RealExportName } from '../../test-data/real-exports.ts';

function layoutOf(name: RealExportName, choices: Parameters<typeof detectCsvLayout>[1] = {}): CsvLayout {
  const bytes = new Uint8Array(readFileSync(realExportPath(name)));
  const head = bytes.subarray(0, LAYOUT_PREVIEW_BYTES);
  const outcome = detectCsvLayout(head, { partial: head.length < bytes.length, ...choices });
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.layout;
}

function refusal(bytes: Uint8Array | string): string {
  const outcome = detectCsvLayout(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes);
  if (outcome.ok) throw new Error('expected a refusal');
  return outcome.message;
}

describe('layout detection on the real exports', () => {
  it('BioLector I: Latin-1, a 21-line preamble with a table of its own, relative hours from DATE START', () => {
    const layout = layoutOf('JH_ShakerSteps_20170302_070206.csv');
    expect(layout).toMatchObject({
      encoding: 'latin1', delimiter: ';', header_line: 22, preamble_lines: 21, vendor: 'm2p-labs BioLector I',
      time_column: 'TIME [h]', time: { mode: 'elapsed', elapsed_unit: 'hours', clock: false },
      start: { wallClock: '2017-03-02T07:02:03', line: 4 },
    });
    expect(layout.headers.slice(0, 2)).toEqual(['READING', 'WELLNUM']);
    expect(layout.columns.find((column) => column.column === 'ACT TEMP [°C]')?.unit_text).toBe('°C');
    expect(layout.rows_parsed).toBe(5501);
  });

  it('BioLector Pro: a 2,101-line preamble, the table between =====data===== and the next marker, seconds from start_date_time', () => {
    const layout = layoutOf('224-MO_Coryne--2019-07-12-16-54-30.csv');
    expect(layout).toMatchObject({
      encoding: 'utf-8', delimiter: ';', header_line: 2102, vendor: 'm2p-labs BioLector Pro',
      table_end: { line: 2748, text: '=====end_process=====' },
      time_column: 'Time', time: { mode: 'elapsed', elapsed_unit: 'seconds' },
      start: { wallClock: '2019-07-12T16:54:30', line: 3 },
    });
    expect(layout.rows_parsed).toBe(645);
  });

  it('BioTek Gen5 .txt: tab, a 33-line preamble, elapsed H:MM:SS, the table ends at the padding rows, start from Date and Time', () => {
    const layout = layoutOf('kinetic_helper_gene_growth_curve.txt');
    expect(layout).toMatchObject({
      encoding: 'utf-8', delimiter: '\t', header_line: 34, vendor: 'BioTek Gen5',
      table_end: { line: 55, text: '0:00:00' },
      time_column: 'Time', time: { mode: 'elapsed', clock: true },
      start: { wallClock: '2023-09-15T12:30:01' },
    });
    expect(layout.rows_parsed).toBe(20);
    expect(layout.rows[0]!.slice(0, 3)).toEqual(['0:00:22', '30.0', '-0.066']);
  });

  it('SoftMax Pro .txt: UTF-16LE by its BOM, four blocks listed, the first plate read as one reading per well', () => {
    const layout = layoutOf('MD_SMP_absorbance_endpoint_example01.txt');
    expect(layout).toMatchObject({
      encoding: 'utf-16le', delimiter: '\t', vendor: 'Molecular Devices SoftMax Pro', header_line: 3, block: 1, table_end: null,
      grid: { rows: 8, columns: 12, row_labels: 'positions', empty_wells: 0 }, time_column: 'Read time',
      start: { wallClock: '2023-11-27T10:43:25', line: 265 },
    });
    expect(layout.blocks.map(({ title, header_line, shape }) => [title, header_line, shape])).toEqual([
      ['Plate: Plate01', 3, 'grid'], ['Plate: Plate02', 24, 'grid'], ['Group: Standards', 45, 'table'], ['Group: UnknownsNoDiln', 105, 'table'],
    ]);
    expect(layout.notices).toContain("This file has 4 read blocks; block 1 ('Plate: Plate01') is read: choose another under Block.");
    expect(layout.raw_headers.join('')).not.toContain('\u0000');
    const second = layoutOf('MD_SMP_absorbance_endpoint_example01.txt', { block: 2 });
    expect(second).toMatchObject({ header_line: 24, block: 2, grid: { rows: 8, columns: 12 } });
    expect(second.rows[0]!.slice(0, 2)).toEqual(['0:00:00', '3.43082333333333']);
  });

  it('DASGIP Control 4: one data section per unit, each a block titled by its section and unit, the first read, another chosen', () => {
    const layout = layoutOf('v4_20180726.Control.csv');
    // The preview reads the first MiB: unit 4's section is cut there, its rows counted up to the cut.
    expect(layout.blocks.map(({ title, header_line, rows, shape, time_axis }) => [title, header_line, rows, shape, time_axis])).toEqual([
      ['TrackData1 (Unit 1)', 208, 1371, 'table', true], ['TrackData2 (Unit 2)', 1583, 1370, 'table', true],
      ['TrackData3 (Unit 3)', 2957, 1370, 'table', true], ['TrackData4 (Unit 4)', 4331, 846, 'table', true],
    ]);
    expect(layout).toMatchObject({ block: 1, section: 'TrackData1', header_line: 208, encoding: 'latin1', delimiter: ';', vendor: 'Eppendorf DASware' });
    expect(layout.notices).toContain("This file has 4 read blocks; block 1 ('TrackData1 (Unit 1)') is read: choose another under Block.");
    const third = layoutOf('v4_20180726.Control.csv', { block: 3 });
    expect(third).toMatchObject({ block: 3, section: 'TrackData3', header_line: 2957, rows_parsed: 1370, time_column: 'Timestamp', preamble_lines: 0 });
    expect(third.headers.filter((header) => header.includes('.')).every((header) => header.startsWith('Unit 3.'))).toBe(true);
    expect(third.columns.find((column) => column.column === 'Unit 3.XO2 3.Out [%]')?.suggestion).toEqual({ type: 'exhaust_o2', unit: '%' });
    // The last section, cut at the bytes read, is read up to its last whole line.
    expect(layoutOf('v4_20180726.Control.csv', { block: 4 })).toMatchObject({ section: 'TrackData4', rows_parsed: 846, partial: true });
  });

  it('Vi-CELL BLU: UTF-16BE by its BOM, the time column is the 27th, month-first minutes', () => {
    const layout = layoutOf('Beckman_Vi-Cell-BLU_example01_utf16.csv');
    expect(layout).toMatchObject({
      encoding: 'utf-16be', delimiter: ',', header_line: 1, vendor: 'Beckman Coulter Vi-CELL BLU',
      time_column: 'Analysis date/time', time: { mode: 'absolute', format: 'slash', order: 'mdy', confidence: 1 }, start: null,
    });
    expect(layout.headers[0]).toBe('Sample ID');
    expect(layout.columns.find((column) => column.column === 'Average diameter (μm)')?.unit_text).toBe('μm');
    expect(layout.rows_parsed).toBe(10);
  });

  it('Nova BioProfile FLEX2: US dates with two spaces before a 12-hour time', () => {
    const layout = layoutOf('SampleResultsDEVICE1232021-02-18_104838.csv');
    expect(layout).toMatchObject({
      encoding: 'utf-8', delimiter: ',', header_line: 1, vendor: 'Nova Biomedical BioProfile FLEX2',
      time_column: 'Date  Time', time: { mode: 'absolute', format: 'slash', order: 'mdy', confidence: 1 },
    });
    expect(layout.columns.find((column) => column.column === 'Vessel Temperature (°C)')?.unit_text).toBe('°C');
  });

  it('BMG MARS .CSV: an 8-line preamble, the date and time it states, the plate grid read as one reading per well', () => {
    const layout = layoutOf('BMG Labtech format.CSV');
    expect(layout).toMatchObject({
      delimiter: ',', header_line: 9, vendor: 'BMG LABTECH MARS', start: { wallClock: '2021-05-14T15:29:50' },
      time_column: 'Read time', time: { mode: 'elapsed', clock: true }, grid: { rows: 8, columns: 12, row_labels: 'letters' }, rows_parsed: 1,
    });
    expect(layout.headers).toHaveLength(97);
    expect(layout.headers.slice(0, 3)).toEqual(['Read time', 'A1', 'A2']);
    expect(layout.rows[0]!.slice(0, 3)).toEqual(['0:00:00', '0.073', '0.082']);
    expect(layout.notices).toContain('This table is a plate grid (rows A-H x columns 1-12): each well is read as one column (96 wells) at one read time.');
  });

  it('GENESYS 30 .tsv: a preamble with trailing tabs ends at a blank line; no time column is said', () => {
    const layout = layoutOf('thermo_fisher_genesys30_example_01.tsv');
    expect(layout).toMatchObject({ header_line: 7, headers: ['wavelength(nm)', 'ABS', '%T'], time_column: null });
    expect(layout.notices).toContain('No time column was found: choose one, or this file cannot be read as a time series.');
  });

  it('Cedex Bio HT: a file without a header row is said', () => {
    const layout = layoutOf('roche_cedex_bioht_example03.txt');
    expect(layout.notices.some((notice) => notice.includes('no header row'))).toBe(true);
  });

  it('the workbooks are refused with what they are', () => {
    const bytes = new Uint8Array(readFileSync(realExportPath('sample_ODs.xlsx')));
    expect(refusal(bytes)).toMatch(/^This looks like an Excel workbook/);
  });

  it('the user\'s choices replace detection: header line, delimiter, time column', () => {
    const layout = layoutOf('kinetic_helper_gene_growth_curve.txt', { header_line: 34, delimiter: '\t', time_column: 'A1' });
    expect(layout).toMatchObject({ header_line: 34, time_column: 'A1' });
    const forced = layoutOf('JH_ShakerSteps_20170302_070206.csv', { encoding: 'utf-8' });
    expect(forced.encoding).toBe('latin1'); // invalid UTF-8 still falls back: the choice names the start
  });
});

describe('layout detection on small files', () => {
  it('Excel\'s sep= line names the delimiter and is not the header', () => {
    const outcome = detectCsvLayout(new TextEncoder().encode('sep=;\ntime;temp [°C]\n2024-01-01 00:00;30,5\n2024-01-01 00:01;30,6\n'));
    expect(outcome).toMatchObject({ ok: true, layout: { separator_hint: true, delimiter: ';', header_line: 2, time_column: 'time' } });
  });

  it('a start stated as `Start Time:` in the preamble', () => {
    const text = 'Instrument: X\nStart Time: 2/18/2021 10:28:04 AM\n\nTime [h],Flow (mL/h)\n0,1.5\n0.5,1.6\n1,1.7\n';
    const outcome = detectCsvLayout(new TextEncoder().encode(text));
    expect(outcome).toMatchObject({
      ok: true,
      layout: { header_line: 4, start: { wallClock: '2021-02-18T10:28:04', line: 2 }, time: { mode: 'elapsed', elapsed_unit: 'hours' } },
    });
    if (outcome.ok) expect(outcome.layout.columns[1]).toMatchObject({ column: 'Flow (mL/h)', unit_text: 'mL/h' });
  });

  it('a header-only file says so instead of showing zero rows', () => {
    expect(refusal('time,temp\n')).toBe(CSV_MESSAGES.headerWithoutRows);
  });

  it('binary content is refused with what it looks like', () => {
    expect(refusal(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))).toMatch(/^This looks like an Excel workbook/);
    expect(refusal(new Uint8Array([0x74, 0x69, 0, 0x6d, 0x65, 0x2c]))).toMatch(/^This file is not text/);
  });

  it('a rejected header names its column', () => {
    expect(refusal('time,<script>alert(1)</script>,v\n2024-01-01T00:00:00Z,1,2\n')).toBe(
      "File contains potentially malicious content: the name of column 2 ('scriptalert(1)/script')",
    );
    expect(refusal('time,v\n2024-01-01T00:00:00Z,<script>\n')).toBe(CSV_MESSAGES.maliciousContent);
  });

  it('units come from the end of a header, as written', () => {
    expect(unitFromHeader('Temp [°C]')).toBe('°C');
    expect(unitFromHeader('Flow (mL/h)')).toBe('mL/h');
    expect(unitFromHeader('Unit 1.InoculationTime []')).toBeNull();
    expect(unitFromHeader('od (2)')).toBeNull();
    expect(unitFromHeader('Viability')).toBeNull();
  });
});
