/**
 * Excel workbooks through the real routes: a sheet converted to CSV text (the real Tecan i-control
 * export of shared/test-data, and a workbook shaped like a bioreactor controller's with an info sheet
 * before the data), previewed by the same detection as a text export, and uploaded as it is with a
 * running worker: each stored value is the sheet's cell at the sheet's wall-clock time.
 */
import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import { CSV_MESSAGES, detectCsvLayout, TRANSPOSED_NOTICE, turnTable } from '@bioprocess/shared/csv/index';
import { SPREADSHEET_MESSAGES } from '../../src/timeseries/spreadsheet-csv.ts';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const START_MS = Date.UTC(2024, 2, 1, 8, 0, 0);
const ROWS = 300;

/** A controller's export: an info sheet first, then the data under a two-line preamble, one reading every 10 s. */
async function controllerWorkbook(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet('Info').addRow(['Batch', 'B-17']);
  const data = workbook.addWorksheet('Data');
  data.addRow(['Exported by the controller']);
  data.addRow([]);
  data.addRow(['Time', 'pO2 [%]', 'Temp [°C]', 'Note']);
  for (let row = 0; row < ROWS; row += 1) {
    data.addRow([new Date(START_MS + row * 10_000), 40 + row / 8, { formula: `B${row + 4}/2`, result: (40 + row / 8) / 2 }, row % 50 === 0 ? 'sample, drawn' : null]);
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

describe('Excel workbooks', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let workbook: Buffer;

  async function post(url: string, file: { name: string; content: Buffer | string; type?: string }, fields: Record<string, string> = {}) {
    const { body, contentType } = multipartBody(fields, file);
    return ctx.request({ method: 'POST', url, token: plant.editor.token, headers: { 'content-type': contentType }, payload: body });
  }

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 0);
    workbook = await controllerWorkbook();
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('converts the real Tecan i-control workbook to CSV text, one line per row, naming its sheets', async () => {
    const response = await post('/api/v1/spreadsheet-conversions', { name: 'sample_ODs.xlsx', content: readFileSync(realExportPath('sample_ODs.xlsx')), type: XLSX_TYPE });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    expect(response.headers['content-type']).toContain('text/csv');
    const sheets = JSON.parse(decodeURIComponent(String(response.headers['spreadsheet-sheets']))) as string[];
    expect(sheets.length).toBeGreaterThanOrEqual(1);
    expect(decodeURIComponent(String(response.headers['spreadsheet-sheet']))).toBe(sheets[0]);
    const lines = response.body.split('\n');
    expect(lines.at(-1)).toBe('');
    // The kinetic table is transposed: a row per well and per cycle property, the cycles across the columns.
    expect(lines.some((line) => line.startsWith('A1,'))).toBe(true);
    expect(lines.some((line) => line.startsWith('H12,'))).toBe(true);
  });

  it('reads the sheet asked for, and refuses a missing sheet or a file that is not a workbook by name', async () => {
    const data = await post('/api/v1/spreadsheet-conversions', { name: 'controller.xlsx', content: workbook, type: XLSX_TYPE }, { sheet: 'Data' });
    expect(data.statusCode).toBe(200);
    const lines = data.body.split('\n');
    expect(lines.slice(0, 4)).toEqual(['Exported by the controller', '', 'Time,pO2 [%],Temp [°C],Note', '2024-03-01 08:00:00,40,20,"sample, drawn"']);
    expect(lines.length).toBe(ROWS + 4);

    const first = await post('/api/v1/spreadsheet-conversions', { name: 'controller.xlsx', content: workbook, type: XLSX_TYPE });
    expect(first.body).toBe('Batch,B-17\n');

    const missing = await post('/api/v1/spreadsheet-conversions', { name: 'controller.xlsx', content: workbook, type: XLSX_TYPE }, { sheet: 'Results' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: SPREADSHEET_MESSAGES.sheetNotFound('Results', ['Info', 'Data']) });

    const renamed = await post('/api/v1/spreadsheet-conversions', { name: 'readings.xlsx', content: 'time,value\n2024-01-01 00:00,1\n', type: XLSX_TYPE });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json()).toEqual({ error: SPREADSHEET_MESSAGES.notAWorkbook });

    const text = await post('/api/v1/spreadsheet-conversions', { name: 'readings.csv', content: 'time,value\n', type: 'text/csv' });
    expect(text.statusCode).toBe(400);
    const docx = await post('/api/v1/spreadsheet-conversions', { name: 'notes.docx', content: 'x' });
    expect(docx.json()).toEqual({ error: CSV_MESSAGES.invalidExtension });
  });

  it("previews a workbook's sheet with the text exports' detection: preamble, header, time column", async () => {
    const response = await post('/api/v1/csv-previews', { name: 'controller.xlsx', content: workbook, type: XLSX_TYPE }, { choices: JSON.stringify({ sheet: 'Data' }) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ sheets: ['Info', 'Data'], sheet: 'Data', header_line: 3, time_column: 'Time', delimiter: ',', partial: false });
  });

  it('uploads a workbook as it is: every cell of the sheet stored at its time, formulas by their results', async () => {
    const [po2, temperature] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant, { start: '2024-03-01T00:00:00Z', end: null });
    const mapping = {
      timestamp_column: 'Time', timestamp_mode: 'absolute', time_zone: 'UTC',
      reading: { encoding: 'utf-8', delimiter: ',', header_line: 3, table_end: false },
      columns: [{ column: 'pO2 [%]', instrument_id: po2 }, { column: 'Temp [°C]', instrument_id: temperature }],
    };
    const { body, contentType } = multipartBody({ sheet: 'Data', mapping: JSON.stringify(mapping) }, { name: 'controller.xlsx', content: workbook, type: XLSX_TYPE });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    const expected = (scale: number) => Array.from({ length: ROWS }, (_, row) => ({ ts: new Date(START_MS + row * 10_000).toISOString(), value: (40 + row / 8) / scale }));
    const stored = async (id: number) => (await readSeries(ctx, plant.viewer.token, { instrument_id: id, limit: 10_000 })).map(({ ts, value }) => ({ ts, value }));
    expect(await stored(po2!)).toEqual(expected(1));
    expect(await stored(temperature!)).toEqual(expected(2));
  });

  it("the real Tecan kinetic read: found transposed, turned, its 96 wells stored exactly from the block's own start", async () => {
    const converted = await post('/api/v1/spreadsheet-conversions', { name: 'sample_ODs.xlsx', content: readFileSync(realExportPath('sample_ODs.xlsx')), type: XLSX_TYPE });
    const text = converted.body;
    const found = detectCsvLayout(new TextEncoder().encode(text));
    if (!found.ok) throw new Error(found.message);
    expect(found.layout.orientation).toBe('columns');
    expect(found.layout.notices).toContain(TRANSPOSED_NOTICE);
    // The kinetic block's own start, not the first read's above it.
    expect(found.layout.start?.wallClock).toBe('2024-02-20T18:20:28');

    const turned = turnTable(text, found.layout);
    const layout = detectCsvLayout(new TextEncoder().encode(turned));
    if (!layout.ok) throw new Error(layout.message);
    expect(layout.layout).toMatchObject({ orientation: 'rows', time_column: 'Time [s]', time: { mode: 'elapsed', elapsed_unit: 'seconds' } });
    const wells = layout.layout.headers.filter((header) => /^[A-H]\d{1,2}$/.test(header));
    expect(wells).toHaveLength(96);

    const reader = await createPlant(ctx, 0);
    const ids = await addInstruments(ctx, reader.organizationId, reader.equipmentId, 96);
    const unitOperation = await createUnitOperation(ctx, reader, { start: '2024-02-20T00:00:00Z', end: null });
    const mapping = {
      timestamp_column: 'Time [s]', timestamp_mode: 'elapsed', elapsed_unit: 'seconds', elapsed_start: '2024-02-20T18:20:28Z',
      reading: { encoding: 'utf-8', delimiter: ',', header_line: layout.layout.header_line, table_end: false },
      columns: wells.map((well, index) => ({ column: well, instrument_id: ids[index] })),
    };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'sample_ODs (turned).csv', content: turned, type: 'text/csv' });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: reader.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    expect(response.statusCode, response.body).toBe(200);

    // Every well's row of the sheet, read straight from the converted text: its times from the 'Time [s]' row.
    const sheetRows = new Map(text.split('\n').map((line) => line.split(',')).map((cells) => [cells[0]!, cells.slice(1)]));
    const seconds = sheetRows.get('Time [s]')!.filter((cell) => cell !== '').map(Number);
    const start = Date.parse('2024-02-20T18:20:28Z');
    let compared = 0;
    for (const well of ['A1', 'D7', 'H12']) {
      const cells = sheetRows.get(well)!;
      const expected = seconds.map((second, index) => ({ ts: new Date(start + Math.round(second * 1000)).toISOString(), value: Number(cells[index]) }));
      const stored = await readSeries(ctx, reader.viewer.token, { instrument_id: ids[wells.indexOf(well)]!, limit: 10_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), well).toEqual(expected);
      compared += expected.length;
    }
    expect(compared).toBe(3 * 632);
  });
});
