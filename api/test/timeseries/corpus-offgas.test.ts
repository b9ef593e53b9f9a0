/**
 * The off-gas analyzer file of the corpus: a DASGIP Control 4 export (four parallel units, each with a
 * GA4 off-gas analyzer) through POST /api/v1/csv-previews and an upload that accepts every suggestion
 * of the preview, read by a running worker. The exhaust O2 and CO2 columns are suggested as the
 * exhaust types (the ones OUR and CER read) with the header's %, instruments made from those
 * suggestions are accepted by the api, and every value the file writes for unit 1 is stored exactly,
 * at the instant the file gives it; the sparse logging (a cell is written only when it changed) stores
 * nothing for an empty cell.
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

  /** The TrackData1 table as the test reads the file itself: Latin-1, `;`, quoted text, from its header to the blank line that ends it. */
  function unitOneTable(): { headers: string[]; rows: string[][] } {
    const lines = new TextDecoder('latin1').decode(readFileSync(realExportPath(DASGIP))).split('\n');
    const start = lines.indexOf('"[TrackData1]"') + 1;
    const end = lines.indexOf('', start);
    const split = (line: string) => line.split(';').map((cell) => cell.replace(/^"|"$/g, ''));
    return { headers: split(lines[start]!), rows: lines.slice(start + 1, end).map(split) };
  }

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 0);
    const { body, contentType } = multipartBody({}, { name: DASGIP, content: readFileSync(realExportPath(DASGIP)) });
    const response = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token: plant.editor.token, headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode, response.body).toBe(200);
    layout = response.json() as PreviewAnswer;
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

    const parse = createTimestampParser({ format: 'iso-space', order: null, dayFirst: false });
    const timeIndex = table.headers.indexOf('Timestamp');
    let compared = 0;
    for (const [column, instrumentId] of instruments) {
      const index = table.headers.indexOf(column);
      const expected = table.rows
        .filter((row) => (row[index] ?? '').trim() !== '')
        .map((row) => ({ ts: new Date(parse(row[timeIndex]!)!).toISOString(), value: Number(row[index]!.trim()) }));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id: instrumentId, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), column).toEqual(expected);
      compared += expected.length;
    }
    expect(compared).toBe(job.result!.points_written);
    // The analyzer's readings as the file writes them: O2 falling from air's 20.7 %, CO2 rising to 3.14 % as the culture grows.
    const exhaust = async (column: string) => (await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.get(column)!, limit: 100_000 })).flatMap((point) => (point.value === null ? [] : [point.value]));
    const o2 = await exhaust(EXHAUST_O2);
    const co2 = await exhaust(EXHAUST_CO2);
    expect([o2.length, Math.max(...o2)]).toEqual([41, 20.71]);
    expect([co2.length, Math.max(...co2)]).toEqual([105, 3.14]);
  });
});
