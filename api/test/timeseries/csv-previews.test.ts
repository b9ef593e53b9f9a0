/**
 * POST /api/v1/csv-previews against the real exports of shared/test-data, and uploads that accept
 * every suggestion of the preview (reading choices, time column and format, the preamble's start,
 * one instrument per numeric column) through the real upload and a running worker: each stored value
 * is the file's, at the instant the file gives it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus, type RealExportName } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import { CsvRowParser, TableCutter, createTimestampParser, decodeCsvBytes, elapsedCellToEpochMs, type CsvLayout } from '@bioprocess/shared/csv/index';

type PreviewAnswer = CsvLayout & { bytes_read: number; bytes_max: number; file_name: string };

const dataset = (name: RealExportName) => ({ name, content: readFileSync(realExportPath(name)) });

describe('CSV previews', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;

  async function preview(token: string, file?: { name: string; content: Buffer | string; type?: string }, fields: Record<string, string> = {}) {
    const { body, contentType } = multipartBody(fields, file);
    return ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token, headers: { 'content-type': contentType }, payload: body });
  }

  async function layoutOf(name: RealExportName): Promise<PreviewAnswer> {
    const response = await preview(plant.editor.token, dataset(name));
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as PreviewAnswer;
  }

  /** The table the preview describes, read independently of the worker: its header and rows as the file writes them. */
  function tableOf(name: RealExportName, layout: CsvLayout): string[][] {
    const { text } = decodeCsvBytes(new Uint8Array(readFileSync(realExportPath(name))));
    const cutter = new TableCutter({ headerLine: layout.header_line, tableEnd: layout.table_end !== null, delimiter: layout.delimiter });
    const parser = new CsvRowParser({ delimiter: layout.delimiter });
    const rows = [...parser.push(cutter.push(text) + cutter.end()), ...parser.end()];
    return rows.filter((row) => !(row.length === 1 && row[0]!.trim() === ''));
  }

  /** Uploads with every suggestion accepted: one new instrument per numeric column; answers the job and the instruments by column. */
  async function uploadAccepting(name: RealExportName, layout: CsvLayout, extra: Record<string, unknown>) {
    const valueColumns = layout.columns.filter((column) => column.column !== layout.time_column && column.numeric_share === 1);
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, valueColumns.length);
    const mapping = {
      timestamp_column: layout.time_column,
      timestamp_mode: layout.time!.mode,
      ...(layout.time!.mode === 'elapsed' ? { elapsed_unit: layout.time!.elapsed_unit } : {}),
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      columns: valueColumns.map((column, index) => ({ column: column.column, instrument_id: ids[index] })),
      ...extra,
    };
    const unitOperation = await createUnitOperation(ctx, plant);
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, dataset(name));
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    return { job, instruments: new Map(valueColumns.map((column, index) => [column.column, ids[index]!])) };
  }

  /** Every stored point equals the file's cell at the file's instant, and every written cell is stored. */
  async function expectStoredAsFile(layout: CsvLayout, table: string[][], instruments: Map<string, number>, instantOf: (cell: string) => number) {
    const headers = layout.headers;
    const timeIndex = headers.indexOf(layout.time_column!);
    let compared = 0;
    for (const [column, instrumentId] of instruments) {
      const index = headers.indexOf(column);
      const expected = table.slice(1)
        .filter((row) => (row[index] ?? '').trim() !== '')
        .map((row) => ({ ts: new Date(instantOf(row[timeIndex]!)).toISOString(), value: Number(row[index]!.trim()) }))
        .sort((a, b) => a.ts.localeCompare(b.ts));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id: instrumentId, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), column).toEqual(expected);
      compared += expected.length;
    }
    return compared;
  }

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
  });
  beforeEach(async () => {
    plant = await createPlant(ctx, 0);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('answers the layout of a Gen5 .txt export: preamble, table end, elapsed clock, the start it states', async () => {
    const layout = await layoutOf('kinetic_helper_gene_growth_curve.txt');
    expect(layout).toMatchObject({
      file_name: 'kinetic_helper_gene_growth_curve.txt', bytes_read: 7638, encoding: 'utf-8', delimiter: '\t', header_line: 34,
      table_end: { line: 55 }, time_column: 'Time', time: { mode: 'elapsed', clock: true }, start: { wallClock: '2023-09-15T12:30:01' },
      vendor: 'BioTek Gen5', rows_parsed: 20, partial: false,
    });
  });

  it('accepting every suggestion imports the Gen5 kinetic table exactly (24 wells and the temperature, 20 reads)', async () => {
    const name = 'kinetic_helper_gene_growth_curve.txt';
    const layout = await layoutOf(name);
    const start = `${layout.start!.wallClock}Z`;
    const { job, instruments } = await uploadAccepting(name, layout, { elapsed_start: start });
    expect(instruments.size).toBe(25);
    expect(job.result).toMatchObject({ rows_read: 20, points_written: 500 });
    const table = tableOf(name, layout);
    expect(table).toHaveLength(21);
    const compared = await expectStoredAsFile(layout, table, instruments, (cell) => elapsedCellToEpochMs(cell, 'seconds', Date.parse(start))!);
    expect(compared).toBe(500);
  });

  it('accepting every suggestion imports the Vi-CELL BLU export (UTF-16BE) exactly', async () => {
    const name = 'Beckman_Vi-Cell-BLU_example01_utf16.csv';
    const layout = await layoutOf(name);
    expect(layout).toMatchObject({ encoding: 'utf-16be', time_column: 'Analysis date/time', time: { mode: 'absolute', format: 'slash', order: 'mdy' } });
    const { job, instruments } = await uploadAccepting(name, layout, { time_zone: 'UTC' });
    expect(job.state).toBe('completed');
    const table = tableOf(name, layout);
    expect(table).toHaveLength(11);
    const parse = createTimestampParser({ format: 'slash', order: 'mdy', dayFirst: false });
    const compared = await expectStoredAsFile(layout, table, instruments, (cell) => parse(cell)!);
    expect(compared).toBe(job.result!.points_written);
    expect(compared).toBeGreaterThan(100);
  });

  it('accepting every suggestion imports the Nova BioProfile FLEX2 results (US dates, two spaces before a 12-hour time) exactly', async () => {
    const name = 'SampleResultsDEVICE1232021-02-18_104838.csv';
    const layout = await layoutOf(name);
    expect(layout).toMatchObject({ time_column: 'Date  Time', time: { mode: 'absolute', format: 'slash', order: 'mdy', confidence: 1 } });
    const { job, instruments } = await uploadAccepting(name, layout, { time_zone: 'UTC' });
    expect(job.result).toMatchObject({ rows_read: 6 });
    const parse = createTimestampParser({ format: 'slash', order: 'mdy', dayFirst: false });
    const compared = await expectStoredAsFile(layout, tableOf(name, layout), instruments, (cell) => parse(cell)!);
    expect(compared).toBe(job.result!.points_written);
    expect(instruments.has('Gluc')).toBe(true);
  });

  it('accepting every suggestion for a multi-section DASware export reads its data section only, not the sections after it', async () => {
    const name = 'CTPC06603.20200714 - 5GB1 - KDB.Control.csv';
    const layout = await layoutOf(name);
    expect(layout).toMatchObject({ section: 'TrackData1', header_line: 228, vendor: 'Eppendorf DASware', time_column: 'Timestamp' });
    const { job } = await uploadAccepting(name, layout, { time_zone: 'UTC' });
    // The TrackData1 table's rows; the event rows after it are not data.
    expect(job.result).toMatchObject({ rows_read: 6_394 });
  });

  it('an upload of a UTF-16 file without reading choices is stored as UTF-8 from its first line', async () => {
    const [viability] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'Analysis date/time', time_zone: 'UTC', columns: [{ column: 'Viability (%)', instrument_id: viability }] };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, dataset('Beckman_Vi-Cell-BLU_example01_utf16.csv'));
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    expect(job.result).toMatchObject({ rows_read: 10, points_written: 10 });
    // The spool was rewritten: UTF-8 is shorter than the UTF-16 original.
    expect(job.progress.bytes_total).toBeLessThan(dataset('Beckman_Vi-Cell-BLU_example01_utf16.csv').content.length);
  });

  it('reads at most the first MiB of a file and says so', async () => {
    const line = '2024-01-01T00:00:00Z,1.5\n';
    const content = `time,value\n${line.repeat(Math.ceil((3 * 1024 * 1024) / line.length))}`;
    const response = await preview(plant.editor.token, { name: 'big.csv', content });
    expect(response.statusCode).toBe(200);
    const answer = response.json() as PreviewAnswer;
    expect(answer).toMatchObject({ bytes_read: 1024 * 1024, bytes_max: 1024 * 1024, partial: true, header_line: 1, time_column: 'time' });
    expect(answer.rows_parsed).toBe(Math.floor((1024 * 1024 - 'time,value\n'.length) / line.length));
  });

  it('takes the user\'s choices instead of detecting', async () => {
    const response = await preview(plant.editor.token, dataset('kinetic_helper_gene_growth_curve.txt'), { choices: JSON.stringify({ header_line: 34, time_column: 'A1' }) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ header_line: 34, time_column: 'A1' });
  });

  it('refuses bad input with a 400 that says what is wrong, and viewers with a 403', async () => {
    const cases: [{ name: string; content: Buffer | string } | undefined, Record<string, string>, string][] = [
      [undefined, {}, 'A CSV file is required (multipart field "file")'],
      [{ name: 'book.xlsx', content: 'a,b\n1,2\n' }, {}, 'The file is not an Excel workbook (.xlsx): it could not be read as one. Save it as .xlsx or export it as CSV.'],
      [{ name: 'notes.docx', content: 'a,b\n1,2\n' }, {}, 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)'],
      [{ name: 'renamed.csv', content: readFileSync(realExportPath('sample_ODs.xlsx')) }, {}, 'This looks like an Excel workbook or another zip archive named as a text file; upload a workbook under its .xlsx name, or save the sheet as CSV or text.'],
      [{ name: 'nul.txt', content: Buffer.from([0x61, 0x00, 0x2c, 0x62, 0x0a]) }, {}, 'This file is not text; upload a CSV or text export (comma, semicolon or tab separated).'],
      [{ name: 'empty.csv', content: '' }, {}, 'File is empty'],
      [{ name: 'header.csv', content: 'time,temp\n' }, {}, 'The file has a header but no data rows'],
      [{ name: 'a.csv', content: 'time,temp\n1,2\n' }, { choices: '{' }, 'choices: must be JSON'],
      [{ name: 'a.csv', content: 'time,temp\n1,2\n' }, { choices: '{"header_line":0}' }, 'choices.header_line: Too small: expected number to be >=1'],
      [{ name: 'a.csv', content: 'time,temp\n1,2\n' }, { choices: '{"time_column":"nope"}' }, "Time column 'nope' is not in the header."],
    ];
    for (const [file, fields, message] of cases) {
      const response = await preview(plant.editor.token, file, fields);
      expect(response.statusCode, message).toBe(400);
      expect(response.json()).toEqual({ error: message });
    }
    const notMultipart = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token: plant.editor.token, payload: { file: 'x' } });
    expect(notMultipart.statusCode).toBe(400);
    const viewer = await preview(plant.viewer.token, { name: 'a.csv', content: 'time,temp\n1,2\n' });
    expect(viewer.statusCode).toBe(403);
    const anonymous = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', payload: {} });
    expect(anonymous.statusCode).toBe(401);
  });

  /** An endpoint grid read independently of the reader: wells by row order (A, B, ...) and the column numbers of the header. */
  function gridOf(content: Buffer, headerLine: number, delimiter: string): Map<string, string> {
    const lines = decodeCsvBytes(new Uint8Array(content)).text.replace(/^\uFEFF/, '').split(/\r?\n/);
    const header = lines[headerLine - 1]!.split(delimiter);
    const first = header.indexOf('1');
    const wells = new Map<string, string>();
    for (let row = 0; lines[headerLine + row]!.trim() !== ''; row += 1) {
      const cells = lines[headerLine + row]!.split(delimiter);
      for (let column = 1; header[first + column - 1] === String(column); column += 1) {
        const cell = cells[first + column - 1]!.trim();
        if (cell !== '') wells.set(`${String.fromCharCode(65 + row)}${column}`, cell);
      }
    }
    return wells;
  }

  /** Every well's one stored point is the grid's cell, at the read time. */
  async function expectWellsStored(instruments: Map<string, number>, wells: Map<string, string>, readAt: string) {
    let compared = 0;
    for (const [well, text] of wells) {
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.get(well)!, limit: 10 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), well).toEqual([{ ts: new Date(readAt).toISOString(), value: Number(text) }]);
      compared += 1;
    }
    return compared;
  }

  const plateReading = (layout: CsvLayout) => ({
    reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: false, plate_grid: layout.grid !== null },
  });

  it('accepting every suggestion imports the BMG MARS plate grid exactly: one reading per well at the date and time of its preamble', async () => {
    const name = 'BMG Labtech format.CSV';
    const layout = await layoutOf(name);
    expect(layout).toMatchObject({
      header_line: 9, grid: { rows: 8, columns: 12, empty_wells: 0 }, time_column: 'Read time', time: { mode: 'elapsed', clock: true },
      start: { wallClock: '2021-05-14T15:29:50' }, vendor: 'BMG LABTECH MARS', blocks: [{ title: 'Raw Data (450 1)', shape: 'grid' }],
    });
    const readAt = `${layout.start!.wallClock}Z`;
    const { job, instruments } = await uploadAccepting(name, layout, { elapsed_start: readAt, ...plateReading(layout) });
    expect(instruments.size).toBe(96);
    expect(job.result).toMatchObject({ rows_read: 1, points_written: 96 });
    const wells = gridOf(dataset(name).content, layout.header_line, ',');
    expect(wells.size).toBe(96);
    expect(wells.get('H12')).toBe('0.207');
    expect(await expectWellsStored(instruments, wells, readAt)).toBe(96);
  });

  it('accepting every suggestion imports each SoftMax Pro plate exactly: the block picked, its 96 wells at the time the footer states', async () => {
    const name = 'MD_SMP_absorbance_endpoint_example01.txt';
    const first = await layoutOf(name);
    expect(first).toMatchObject({ encoding: 'utf-16le', block: 1, header_line: 3, grid: { rows: 8, columns: 12, row_labels: 'positions' }, start: { wallClock: '2023-11-27T10:43:25' } });
    expect(first.blocks.map((block) => block.title)).toEqual(['Plate: Plate01', 'Plate: Plate02', 'Group: Standards', 'Group: UnknownsNoDiln']);
    const chosen = await preview(plant.editor.token, dataset(name), { choices: JSON.stringify({ block: 2 }) });
    expect(chosen.statusCode, chosen.body).toBe(200);
    const second = chosen.json() as PreviewAnswer;
    expect(second).toMatchObject({ block: 2, header_line: 24, grid: { rows: 8, columns: 12 } });
    for (const layout of [first, second]) {
      // One piece of equipment runs one unit operation at a time: each plate goes to equipment of its own.
      if (layout === second) plant = await createPlant(ctx, 0);
      const readAt = `${layout.start!.wallClock}Z`;
      const { job, instruments } = await uploadAccepting(name, layout, { elapsed_start: readAt, ...plateReading(layout) });
      expect(job.result).toMatchObject({ rows_read: 1, points_written: 96 });
      const wells = gridOf(dataset(name).content, layout.header_line, '\t');
      expect(wells.size).toBe(96);
      expect(await expectWellsStored(instruments, wells, readAt)).toBe(96);
    }
    // The other plate's values are not the first's: each upload read its own block.
    expect(gridOf(dataset(name).content, 24, '\t').get('A1')).toBe('3.43082333333333');
  });

  it('a plate grid that states no read time asks for it; empty wells are left out and a flagged well is counted, not stored', async () => {
    const original = dataset('BMG Labtech format.CSV').content.toString('latin1');
    const text = original.replace(/^Test name:.*\r\n/m, 'Test name: xxxxxxxxxxxxx\r\n')
      .replace('A,0.073,0.082,', 'A,OVRFLW,,');
    const file = { name: 'plate.CSV', content: Buffer.from(text, 'latin1') };
    const answer = await preview(plant.editor.token, file);
    expect(answer.statusCode, answer.body).toBe(200);
    const layout = answer.json() as PreviewAnswer;
    expect(layout).toMatchObject({ start: null, grid: { empty_wells: 1 }, time_column: 'Read time' });
    expect(layout.notices).toContain('This plate grid states no read time: give the date and time the plate was read as the start.');
    expect(layout.headers).toHaveLength(96);
    const wells = layout.headers.slice(1);
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, wells.length);
    const instruments = new Map(wells.map((well, index) => [well, ids[index]!]));
    // The one choice the user makes: when the plate was read.
    const readAt = '2021-05-14T13:29:50Z';
    const mapping = {
      timestamp_column: 'Read time', timestamp_mode: 'elapsed', elapsed_unit: 'seconds', elapsed_start: readAt, ...plateReading(layout),
      columns: wells.map((well) => ({ column: well, instrument_id: instruments.get(well) })),
    };
    const unitOperation = await createUnitOperation(ctx, plant);
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, file);
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    expect(job.result).toMatchObject({ rows_read: 1, points_written: 94, flagged_cells: [{ column: 'A1', count: 1, examples: ['OVRFLW'] }] });
    const expected = gridOf(file.content, layout.header_line, ',');
    expect(expected.has('A2')).toBe(false);
    expected.delete('A1');
    expect(await expectWellsStored(instruments, expected, readAt)).toBe(94);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.get('A1')!, limit: 10 })).toEqual([]);
  });

  it('refuses a block that is not there and a plate grid where the file has none, with a 400 that says so', async () => {
    const missing = await preview(plant.editor.token, dataset('MD_SMP_absorbance_endpoint_example01.txt'), { choices: JSON.stringify({ block: 9 }) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: 'Block 9 is not one of the 4 read block(s) found in the part of the file that was read.' });
    const [instrument] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = {
      timestamp_column: 'time', time_zone: 'UTC', reading: { header_line: 1, plate_grid: true }, columns: [{ column: 'temp', instrument_id: instrument }],
    };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'a.csv', content: 'time,temp\n2024-01-01 00:00:00,2\n2024-01-01 00:01:00,3\n' });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'Line 1 does not start a plate grid (a row of column numbers 1, 2, 3... over rows A, B, C...): read it as a table instead.' });
  });
});
