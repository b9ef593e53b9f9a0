/**
 * The two m2p-labs BioLector raw logs of the corpus through POST /api/v1/csv-previews and uploads read
 * by a running worker. Both are long format (one row per well read, the BioLector Pro's per well and
 * filter set), with references, process values and events in the same table.
 *
 * The preview does not suggest long format for either file (its suggestion needs a time that repeats
 * and key columns written in every row: the BioLector I gives each well read its own time, and both
 * leave the well empty on reference, process and event rows); it says, in a notice, to map the well
 * column as the key column. These tests take that advice, and otherwise the preview's reading
 * choices, time column, elapsed unit and the start its preamble states, and compare every stored
 * value and instant of three wells with the file as the test reads it itself: Latin-1 or ASCII split
 * on `;`, times counted from the preamble's start.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import type { CsvLayout } from '@bioprocess/shared/csv/index';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus, type RealExportName } from '../support/ingest.ts';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const BIOLECTOR_I = 'JH_ShakerSteps_20170302_070206.csv';
const BIOLECTOR_PRO = '224-MO_Coryne--2019-07-12-16-54-30.csv';

type PreviewAnswer = CsvLayout & { bytes_read: number; file_name: string };

/** The data table as the test reads the file itself: the lines after the header up to the end marker (or the file's end), split on `;`. */
function dataTable(name: RealExportName, encoding: 'latin1' | 'utf-8', header: string, endMarker: string | null): { headers: string[]; rows: string[][] } {
  const lines = new TextDecoder(encoding).decode(readFileSync(realExportPath(name))).split('\n');
  const headerIndex = lines.findIndex((line) => line.startsWith(header));
  const end = endMarker === null ? lines.length : lines.indexOf(endMarker, headerIndex);
  const rows = lines.slice(headerIndex + 1, end).filter((line) => line !== '').map((line) => line.split(';'));
  return { headers: lines[headerIndex]!.split(';'), rows };
}

describe('BioLector raw logs (m2p-labs)', () => {
  let ctx: TestContext;
  let worker: IngestWorker;

  async function preview(plant: Plant, name: RealExportName): Promise<PreviewAnswer> {
    const { body, contentType } = multipartBody({}, { name, content: readFileSync(realExportPath(name)) });
    const response = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token: plant.editor.token, headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as PreviewAnswer;
  }

  /** One instrument per (column, key): made from the preview's suggestion through the api when it names a type, else added directly. */
  async function instrumentsFor(plant: Plant, layout: PreviewAnswer, entries: { column: string; key: string }[]) {
    const made: { column: string; key: string; instrument_id: number }[] = [];
    for (const entry of entries) {
      const suggestion = layout.columns.find((column) => column.column === entry.column)!.suggestion;
      if (suggestion && suggestion.type !== '') {
        const response = await ctx.request({
          method: 'POST', url: '/api/v1/instruments', token: plant.editor.token,
          payload: { name: `${entry.key} ${entry.column}`, type: suggestion.type, unit: suggestion.unit, equipment_id: plant.equipmentId },
        });
        expect(response.statusCode, response.body).toBe(201);
        made.push({ ...entry, instrument_id: response.json().id as number });
      } else {
        const [id] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
        made.push({ ...entry, instrument_id: id! });
      }
    }
    return made;
  }

  async function upload(plant: Plant, name: RealExportName, mapping: object, fields: Record<string, string> = {}): Promise<JobStatus> {
    const unitOperation = await createUnitOperation(ctx, plant);
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping), ...fields }, { name, content: readFileSync(realExportPath(name)) });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    const job = response.json() as JobStatus;
    expect(response.statusCode, JSON.stringify(job)).toBe(200);
    return job;
  }

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
  });
  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  it('BioLector I: keyed by WELLNUM as the preview advises, three wells\' amplitude, phase and temperature are stored exactly, at DATE START plus their hours', async () => {
    const plant = await createPlant(ctx, 0);
    const layout = await preview(plant, BIOLECTOR_I);
    const table = dataTable(BIOLECTOR_I, 'latin1', 'READING;WELLNUM;', null);
    expect(layout).toMatchObject({
      vendor: 'm2p-labs BioLector I', encoding: 'latin1', delimiter: ';', header_line: 22, table_end: null,
      time_column: 'TIME [h]', time: { mode: 'elapsed', elapsed_unit: 'hours' },
      start: { wallClock: '2017-03-02T07:02:03', line: 4 }, rows_parsed: table.rows.length,
    });
    expect(layout.headers).toEqual(table.headers);
    expect(table.rows).toHaveLength(5_501);
    expect(layout.notices).toContain("Rows carry one well or position each (column 'WELLNUM'): map it as the key column (long format), with a second key column when one alone repeats times.");
    expect(layout.columns.find((column) => column.column === 'ACT TEMP [°C]')?.suggestion).toEqual({ type: 'temperature', unit: 'celsius' });

    const wells = ['A01', 'C05', 'F08'];
    const columns = ['AMPLITUDE', 'PHASE', 'ACT TEMP [°C]'];
    const instruments = await instrumentsFor(plant, layout, wells.flatMap((key) => columns.map((column) => ({ column, key }))));
    const start = Date.parse(`${layout.start!.wallClock}Z`);
    const job = await upload(plant, BIOLECTOR_I, {
      timestamp_column: layout.time_column, timestamp_mode: layout.time!.mode, elapsed_unit: layout.time!.elapsed_unit,
      elapsed_start: new Date(start).toISOString(),
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      key_column: 'WELLNUM', columns: instruments,
    });

    const headerIndex = (column: string) => table.headers.indexOf(column);
    const wellRows = (well: string) => table.rows.filter((row) => row[headerIndex('WELLNUM')] === well);
    // 112 cycles of every well; the reference (R) and event (K) rows have no well and are no well's readings.
    for (const well of wells) expect(wellRows(well)).toHaveLength(112);
    const kept = wells.length * 112;
    expect(job.result).toMatchObject({ rows_read: 5_501, rows_skipped_unselected_key: 5_501 - kept, points_written: kept * columns.length });

    let compared = 0;
    for (const { column, key, instrument_id } of instruments) {
      const expected = wellRows(key).map((row) => ({
        ts: new Date(start + Math.round(Number(row[headerIndex('TIME [h]')]) * 3_600_000)).toISOString(),
        value: Number(row[headerIndex(column)]!.trim()),
      }));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), `${key} ${column}`).toEqual(expected);
      compared += expected.length;
    }
    expect(compared).toBe(job.result!.points_written);
    // The last read of F08 is 5.66 h after the start, as the file's DATE END (12:42:01) allows.
    const lastF08 = await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.find((entry) => entry.key === 'F08' && entry.column === 'AMPLITUDE')!.instrument_id, limit: 100_000 });
    expect(lastF08.at(-1)!.ts < '2017-03-02T12:42:01.000Z').toBe(true);
  });

  it('BioLector Pro: keyed by Well x Filterset, three wells\' amplitude and phase of every filter set are stored exactly, at start_date_time plus their seconds; -9999 named missing stores no reading', async () => {
    const plant = await createPlant(ctx, 0);
    const layout = await preview(plant, BIOLECTOR_PRO);
    const table = dataTable(BIOLECTOR_PRO, 'utf-8', 'Type;Cycle;Well;', '=====end_process=====');
    expect(layout).toMatchObject({
      vendor: 'm2p-labs BioLector Pro', encoding: 'utf-8', delimiter: ';', header_line: 2102,
      table_end: { line: 2748, text: '=====end_process=====' }, time_column: 'Time', time: { mode: 'elapsed', elapsed_unit: 'seconds' },
      start: { wallClock: '2019-07-12T16:54:30', line: 3 }, rows_parsed: table.rows.length,
    });
    expect(layout.headers).toEqual(table.headers);
    expect(table.rows).toHaveLength(645);
    expect(layout.notices).toContain("Rows carry one well or position each (column 'Well'): map it as the key column (long format), with a second key column when one alone repeats times.");

    const keys = ['001', '024', '048'].flatMap((well) => ['01', '02', '03'].map((filterset) => `${well} · ${filterset}`));
    const instruments = await instrumentsFor(plant, layout, [
      ...keys.flatMap((key) => ['Amp_1', 'Phase'].map((column) => ({ column, key }))),
      // The CO2 channel is not fitted: every cell is -9999.00, which the upload names missing.
      { column: 'CO2', key: '001 · 01' },
    ]);
    const start = Date.parse(`${layout.start!.wallClock}Z`);
    const job = await upload(plant, BIOLECTOR_PRO, {
      timestamp_column: layout.time_column, timestamp_mode: layout.time!.mode, elapsed_unit: layout.time!.elapsed_unit,
      elapsed_start: new Date(start).toISOString(),
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      key_columns: ['Well', 'Filterset'], columns: instruments,
    }, { missing_values: JSON.stringify(['-9999']) });

    const index = (column: string) => table.headers.indexOf(column);
    const keyRows = (key: string) => table.rows.filter((row) => `${row[index('Well')]} · ${row[index('Filterset')]}` === key);
    // Four cycles of each well and filter set; process, reference and event rows have no well.
    for (const key of keys) expect(keyRows(key), key).toHaveLength(4);
    expect(job.result).toMatchObject({ rows_read: 645, rows_skipped_unselected_key: 645 - keys.length * 4, points_written: keys.length * 4 * 2 });

    let compared = 0;
    for (const { column, key, instrument_id } of instruments.filter((entry) => entry.column !== 'CO2')) {
      const expected = keyRows(key).map((row) => ({
        ts: new Date(start + Number(row[index('Time')]) * 1_000).toISOString(),
        value: Number(row[index(column)]!.trim()),
      }));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), `${key} ${column}`).toEqual(expected);
      compared += expected.length;
    }
    expect(compared).toBe(job.result!.points_written);
    const co2 = await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.at(-1)!.instrument_id, limit: 100_000 });
    expect(co2.filter((point) => point.value !== null)).toEqual([]);
    expect(keyRows('001 · 01').map((row) => row[index('CO2')])).toEqual(['-9999.00', '-9999.00', '-9999.00', '-9999.00']);
  });
});
