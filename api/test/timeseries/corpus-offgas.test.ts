/**
 * The off-gas analyzer file of the corpus: a DASGIP Control 4 export (four parallel units, each with a
 * GA4 off-gas analyzer) through POST /api/v1/csv-previews and an upload that accepts every suggestion
 * of the preview, read by a running worker. The exhaust O2 and CO2 columns are suggested as the
 * exhaust types (the ones OUR and CER read) with the header's %, instruments made from those
 * suggestions are accepted by the api, and every value the file writes for unit 1 is stored exactly,
 * at the instant the file gives it; the sparse logging (a cell is written only when it changed) stores
 * nothing for an empty cell. Each unit's data section is a read block: choosing the third imports unit 3
 * exactly and nothing of the other units.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createTimestampParser, CsvRowParser, decodeCsvBytes, TableCutter, type CsvLayout } from '@bioprocess/shared/csv/index';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus } from '../support/ingest.ts';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const DASGIP = 'v4_20180726.Control.csv';
const EXHAUST_O2 = 'Unit 1.XO2 1.Out [%]';
const EXHAUST_CO2 = 'Unit 1.XCO2 1.Out [%]';

type PreviewAnswer = CsvLayout & { bytes_read: number; file_name: string };

describe('off-gas analyzer export (DASGIP Control 4 with GA4)', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let layout: PreviewAnswer;

  /** A unit's TrackData table as the test reads the file itself: Latin-1, `;`, quoted text, from its header to the blank line that ends it. */
  function unitTable(unit: number): { headers: string[]; rows: string[][] } {
    const lines = new TextDecoder('latin1').decode(readFileSync(realExportPath(DASGIP))).split('\n');
    const start = lines.indexOf(`"[TrackData${unit}]"`) + 1;
    const end = lines.indexOf('', start);
    const split = (line: string) => line.split(';').map((cell) => cell.replace(/^"|"$/g, ''));
    return { headers: split(lines[start]!), rows: lines.slice(start + 1, end).map(split) };
  }
  const unitOneTable = () => unitTable(1);

  /** A column's readings as the file writes them: its non-empty cells at their rows' times (UTC, as the export's bias says). */
  const parseTimestamp = createTimestampParser({ format: 'iso-space', order: null, dayFirst: false });
  function fileReadings(table: { headers: string[]; rows: string[][] }, column: string): Array<{ ts: string; value: number }> {
    const index = table.headers.indexOf(column);
    const timeIndex = table.headers.indexOf('Timestamp');
    return table.rows
      .filter((row) => (row[index] ?? '').trim() !== '')
      .map((row) => ({ ts: new Date(parseTimestamp(row[timeIndex]!)!).toISOString(), value: Number(row[index]!.trim()) }));
  }

  /** Compares every mapped column's stored readings with the file's; answers how many readings were compared. */
  async function expectStoredAsInFile(token: string, table: { headers: string[]; rows: string[][] }, instruments: Map<string, number>): Promise<number> {
    let compared = 0;
    for (const [column, instrumentId] of instruments) {
      const expected = fileReadings(table, column);
      expect(expected.length, column).toBeGreaterThan(0);
      const stored = await readSeries(ctx, token, { instrument_id: instrumentId, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), column).toEqual(expected);
      compared += expected.length;
    }
    return compared;
  }

  async function preview(token: string, choices?: object): Promise<PreviewAnswer> {
    const { body, contentType } = multipartBody(choices ? { choices: JSON.stringify(choices) } : {}, { name: DASGIP, content: readFileSync(realExportPath(DASGIP)) });
    const response = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token, headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as PreviewAnswer;
  }

  async function upload(token: string, unitOperation: number, mapping: object) {
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: DASGIP, content: readFileSync(realExportPath(DASGIP)) });
    return ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token,
      headers: { 'content-type': contentType }, payload: body,
    });
  }

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 0);
    layout = await preview(plant.editor.token);
  });
  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  it('is previewed as a DASware export: the first unit\'s data section, Latin-1, its timestamps, and the exhaust gas columns as exhaust types in %', () => {
    const table = unitOneTable();
    expect(layout).toMatchObject({
      vendor: 'Eppendorf DASware', section: 'TrackData1', encoding: 'latin1', delimiter: ';', header_line: 208,
      time_column: 'Timestamp', time: { mode: 'absolute', format: 'iso-space' }, rows_parsed: table.rows.length,
      // The file is 1.2 MB: the preview reads its first MiB, which holds the whole of unit 1's section.
      partial: true,
    });
    expect(layout.headers).toEqual(table.headers);
    const suggestionOf = (column: string) => layout.columns.find((entry) => entry.column === column)?.suggestion;
    expect(suggestionOf(EXHAUST_O2)).toEqual({ type: 'exhaust_o2', unit: '%' });
    expect(suggestionOf(EXHAUST_CO2)).toEqual({ type: 'exhaust_co2', unit: '%' });
    // Nothing else of the file is an exhaust or inlet gas: the OTR, CTR and RQ the analyzer computes are not its readings.
    const gasColumns = layout.columns.filter((entry) => /^(exhaust|inlet)_/.test(entry.suggestion?.type ?? '')).map((entry) => entry.column);
    expect(gasColumns).toEqual([EXHAUST_O2, EXHAUST_CO2]);
  });

  it('accepting every suggestion imports every value of unit 1 exactly, the exhaust O2 and CO2 into instruments of the suggested types', async () => {
    const valueColumns = layout.columns.filter((column) => column.column !== layout.time_column && column.numeric_share === 1);
    expect(valueColumns.map((column) => column.column)).toEqual(expect.arrayContaining([EXHAUST_O2, EXHAUST_CO2]));
    const instruments = new Map<string, number>();
    // The two gas columns become instruments made from the preview's suggestion, through the api.
    for (const column of [EXHAUST_O2, EXHAUST_CO2]) {
      const suggestion = layout.columns.find((entry) => entry.column === column)!.suggestion!;
      const response = await ctx.request({
        method: 'POST', url: '/api/v1/instruments', token: plant.editor.token,
        payload: { name: column, type: suggestion.type, unit: suggestion.unit, equipment_id: plant.equipmentId },
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ type: suggestion.type, unit: '%' });
      instruments.set(column, response.json().id as number);
    }
    const others = valueColumns.filter((column) => !instruments.has(column.column));
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, others.length);
    others.forEach((column, index) => instruments.set(column.column, ids[index]!));

    const mapping = {
      timestamp_column: layout.time_column,
      timestamp_mode: layout.time!.mode,
      time_zone: 'UTC',
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      columns: [...instruments].map(([column, instrument_id]) => ({ column, instrument_id })),
    };
    const unitOperation = await createUnitOperation(ctx, plant);
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: DASGIP, content: readFileSync(realExportPath(DASGIP)) });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    const table = unitOneTable();
    // The worker reads the data section the preview shows, cut the way the upload cuts it, and nothing after it.
    const { text } = decodeCsvBytes(new Uint8Array(readFileSync(realExportPath(DASGIP))), { encoding: 'latin1' });
    const cutter = new TableCutter({ headerLine: layout.header_line, tableEnd: layout.table_end !== null, delimiter: layout.delimiter });
    const parser = new CsvRowParser({ delimiter: layout.delimiter });
    const cut = [...parser.push(cutter.push(text) + cutter.end()), ...parser.end()].filter((row) => !(row.length === 1 && row[0]!.trim() === ''));
    expect(cut[0]).toEqual(table.headers);
    expect(job.result).toMatchObject({ rows_read: table.rows.length });

    expect(await expectStoredAsInFile(plant.viewer.token, table, instruments)).toBe(job.result!.points_written);
    // The analyzer's readings as the file writes them: O2 falling from air's 20.7 %, CO2 rising to 3.14 % as the culture grows.
    const exhaust = async (column: string) => (await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.get(column)!, limit: 100_000 })).flatMap((point) => (point.value === null ? [] : [point.value]));
    const o2 = await exhaust(EXHAUST_O2);
    const co2 = await exhaust(EXHAUST_CO2);
    expect([o2.length, Math.max(...o2)]).toEqual([41, 20.71]);
    expect([co2.length, Math.max(...co2)]).toEqual([105, 3.14]);
  });
  it('lists each unit\'s data section as a block; choosing the third imports unit 3\'s exhaust O2, CO2 and pH exactly, and nothing of the other units', async () => {
    expect(layout.blocks.map(({ index, title, header_line }) => [index, title, header_line])).toEqual([
      [1, 'TrackData1 (Unit 1)', 208], [2, 'TrackData2 (Unit 2)', 1583], [3, 'TrackData3 (Unit 3)', 2957], [4, 'TrackData4 (Unit 4)', 4331],
    ]);
    expect(layout.block).toBe(1);
    const table = unitTable(3);
    const third = await preview(plant.editor.token, { block: 3 });
    expect(third).toMatchObject({ block: 3, section: 'TrackData3', header_line: 2957, rows_parsed: table.rows.length, time_column: 'Timestamp' });
    expect(third.headers).toEqual(table.headers);

    // Its own plant: the units ran side by side, and unit 1's upload already holds the same hours.
    const unitPlant = await createPlant(ctx, 0);
    const columns = { 'Unit 3.XO2 3.Out [%]': 'exhaust_o2', 'Unit 3.XCO2 3.Out [%]': 'exhaust_co2', 'Unit 3.pH3.PV [pH]': null } as const;
    const instruments = new Map<string, number>();
    for (const [column, type] of Object.entries(columns)) {
      const suggestion = third.columns.find((entry) => entry.column === column)!.suggestion;
      if (type !== null) expect(suggestion).toEqual({ type, unit: '%' });
      if (suggestion === null) {
        instruments.set(column, (await addInstruments(ctx, unitPlant.organizationId, unitPlant.equipmentId, 1))[0]!);
        continue;
      }
      const response = await ctx.request({
        method: 'POST', url: '/api/v1/instruments', token: unitPlant.editor.token,
        payload: { name: column, type: suggestion.type, unit: suggestion.unit, equipment_id: unitPlant.equipmentId },
      });
      expect(response.statusCode, response.body).toBe(201);
      instruments.set(column, response.json().id as number);
    }
    const mapping = {
      timestamp_column: third.time_column, timestamp_mode: third.time!.mode, time_zone: 'UTC',
      reading: { encoding: third.encoding, delimiter: third.delimiter, header_line: third.header_line, table_end: third.table_end !== null },
      columns: [...instruments].map(([column, instrument_id]) => ({ column, instrument_id })),
    };
    const unitOperation = await createUnitOperation(ctx, unitPlant);

    // A header line that is no section's header is refused before anything is queued.
    const wrongLine = await upload(unitPlant.editor.token, unitOperation, { ...mapping, reading: { ...mapping.reading, header_line: 2958 } });
    expect(wrongLine.statusCode, wrongLine.body).toBe(400);
    expect(wrongLine.json()).toEqual({ error: 'Line 2958 is not the header of a data section ([TrackData1], [TrackData2], ...) of this file: choose one of its blocks.' });

    const response = await upload(unitPlant.editor.token, unitOperation, mapping);
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    // Every row the worker read is one of unit 3's: none of units 1, 2 and 4, nothing of the sections after.
    expect(job.result).toMatchObject({ rows_read: table.rows.length });

    expect(await expectStoredAsInFile(unitPlant.viewer.token, table, instruments)).toBe(job.result!.points_written);
    // Unit 3 is not unit 1 under another name: its pH series differs from unit 1's.
    const unitOne = unitTable(1);
    const phOf = (source: { headers: string[]; rows: string[][] }, column: string) => source.rows.map((row) => row[source.headers.indexOf(column)]).join(';');
    expect(phOf(table, 'Unit 3.pH3.PV [pH]')).not.toBe(phOf(unitOne, 'Unit 1.pH1.PV [pH]'));
  });
  it('a UTF-16 copy of the export is cut to the chosen unit the same way: unit 3\'s pH exactly, its time base kept', async () => {
    const table = unitTable(3);
    const text = new TextDecoder('latin1').decode(readFileSync(realExportPath(DASGIP)));
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const unitPlant = await createPlant(ctx, 0);
    const [ph] = await addInstruments(ctx, unitPlant.organizationId, unitPlant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, unitPlant);
    const mapping = {
      // The file's TimezoneBias (in [CoreInfo], kept by the cut) says its times are UTC, whatever zone the upload names.
      timestamp_column: 'Timestamp', timestamp_mode: 'absolute', time_zone: 'Europe/Berlin',
      reading: { encoding: 'utf-16le', delimiter: ';', header_line: 2957, table_end: false },
      columns: [{ column: 'Unit 3.pH3.PV [pH]', instrument_id: ph }],
    };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: DASGIP, content: utf16 });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: unitPlant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    expect(job.result).toMatchObject({ rows_read: table.rows.length });
    await expectStoredAsInFile(unitPlant.viewer.token, table, new Map([['Unit 3.pH3.PV [pH]', ph!]]));
  });
});
