/**
 * The two m2p-labs BioLector raw logs of the corpus through POST /api/v1/csv-previews and uploads that
 * accept the preview's suggestions (reading choices, time column, elapsed unit, the start its preamble
 * states, long format by its suggested key columns, the suggested instrument types), read by a running
 * worker. Both are long format: one row per well read (the BioLector Pro's per well and filter set),
 * with references, process values and events in the same table and no well on those rows. Every
 * stored value and instant of three wells is compared with the file as the test reads it itself
 * (Latin-1 or ASCII split on `;`, times counted from the preamble's start), and the counts of all
 * wells with the job's.
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

  it('BioLector I: accepting every suggestion imports all 48 wells keyed by WELLNUM, three wells\' readings exactly at DATE START plus their hours', async () => {
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
    expect(layout.notices).toContain("Each row is one well's read at its own time, told apart by WELLNUM (48 in the rows read); read as long format.");
    expect(layout.columns.find((column) => column.column === 'ACT TEMP [°C]')?.suggestion).toEqual({ type: 'temperature', unit: 'celsius' });

    expect(layout.long_format).toEqual({
      key_columns: ['WELLNUM'], value_columns: ['AMPLITUDE', 'PHASE', 'ACT TEMP [°C]', 'ACT HUMIDITY [rH]', 'ACT O2 [%]', 'ACT CO2 [%]'], keys: 48,
    });
    const { key_columns: keyColumns, value_columns: valueColumns } = layout.long_format!;

    const index = (column: string) => table.headers.indexOf(column);
    // Every well of the plate, in the file's own order; the reference (R) and event (K) rows have none.
    const wellKeys = [...new Set(table.rows.map((row) => row[index('WELLNUM')]!).filter((well) => well !== ''))];
    expect(wellKeys).toHaveLength(48);
    const instruments = await instrumentsFor(plant, layout, wellKeys.flatMap((key) => valueColumns.map((column) => ({ column, key }))));
    const start = Date.parse(`${layout.start!.wallClock}Z`);
    const job = await upload(plant, BIOLECTOR_I, {
      timestamp_column: layout.time_column, timestamp_mode: layout.time!.mode, elapsed_unit: layout.time!.elapsed_unit,
      elapsed_start: new Date(start).toISOString(),
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      key_columns: keyColumns, columns: instruments,
    });

    const wellRows = (well: string) => table.rows.filter((row) => row[index('WELLNUM')] === well);
    // 112 cycles of every well; every written cell of a well read is one point.
    for (const well of wellKeys) expect(wellRows(well), well).toHaveLength(112);
    const wellReads = table.rows.filter((row) => row[index('WELLNUM')] !== '');
    const written = wellReads.reduce((sum, row) => sum + valueColumns.filter((column) => row[index(column)]!.trim() !== '').length, 0);
    expect(job.result).toMatchObject({ rows_read: 5_501, rows_skipped_unselected_key: 5_501 - 48 * 112, points_written: written });
    expect(written).toBe(48 * 112 * valueColumns.length);

    for (const { column, key, instrument_id } of instruments.filter((entry) => ['A01', 'C05', 'F08'].includes(entry.key))) {
      const expected = wellRows(key).map((row) => ({
        ts: new Date(start + Math.round(Number(row[index('TIME [h]')]) * 3_600_000)).toISOString(),
        value: Number(row[index(column)]!.trim()),
      }));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), `${key} ${column}`).toEqual(expected);
    }
    // The temperature columns became temperature instruments in °C, as suggested.
    const temperature = instruments.find((entry) => entry.key === 'F08' && entry.column === 'ACT TEMP [°C]')!;
    const { rows: [made] } = await ctx.deps.pg.query('SELECT type, unit FROM instruments WHERE id = $1', [temperature.instrument_id]);
    expect(made).toEqual({ type: 'temperature', unit: 'celsius' });
    // The last read of F08 is 5.66 h after the start, before the file's DATE END (12:42:01).
    const lastF08 = await readSeries(ctx, plant.viewer.token, { instrument_id: temperature.instrument_id, limit: 100_000 });
    expect(lastF08.at(-1)!.ts < '2017-03-02T12:42:01.000Z').toBe(true);
  });

  it('BioLector Pro: the suggested Well x Filterset key imports every series\' amplitude and phase, three wells\' exactly at start_date_time plus their seconds; -9999 named missing stores no reading', async () => {
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
    expect(layout.notices).toContain('Times repeat: each row is one series, told apart by Well x Filterset (144 in the rows read); read as long format.');

    expect(layout.long_format).toMatchObject({ key_columns: ['Well', 'Filterset'], keys: 144 });
    const { key_columns: keyColumns, value_columns: valueColumns } = layout.long_format!;
    const index = (column: string) => table.headers.indexOf(column);
    const keyOf = (row: string[]) => `${row[index('Well')]} · ${row[index('Filterset')]}`;
    const measurements = table.rows.filter((row) => row[index('Type')] === 'M');
    const allKeys = [...new Set(measurements.map(keyOf))];
    expect(allKeys).toHaveLength(144);
    // 144 series x 35 value columns is more than one upload maps: the biomass amplitude and the optode phase of every series.
    const mapped = ['Amp_1', 'Phase'];
    expect(valueColumns).toEqual(expect.arrayContaining(mapped));
    const instruments = await instrumentsFor(plant, layout, [
      ...allKeys.flatMap((key) => mapped.map((column) => ({ column, key }))),
      // The CO2 channel is not fitted: every cell is -9999.00, which the upload names missing.
      { column: 'CO2', key: '001 · 01' },
    ]);
    const start = Date.parse(`${layout.start!.wallClock}Z`);
    const job = await upload(plant, BIOLECTOR_PRO, {
      timestamp_column: layout.time_column, timestamp_mode: layout.time!.mode, elapsed_unit: layout.time!.elapsed_unit,
      elapsed_start: new Date(start).toISOString(),
      reading: { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line, table_end: layout.table_end !== null },
      key_columns: keyColumns, columns: instruments,
    }, { missing_values: JSON.stringify(['-9999']) });

    const keyRows = (key: string) => table.rows.filter((row) => keyOf(row) === key);
    // Four cycles of each well and filter set; process, reference and event rows are no series'.
    for (const key of allKeys) expect(keyRows(key), key).toHaveLength(4);
    expect(job.result).toMatchObject({ rows_read: 645, rows_skipped_unselected_key: 645 - 576, points_written: 576 * mapped.length });

    const keys = ['001', '024', '048'].flatMap((well) => ['01', '02', '03'].map((filterset) => `${well} · ${filterset}`));
    for (const { column, key, instrument_id } of instruments.filter((entry) => entry.column !== 'CO2' && keys.includes(entry.key))) {
      const expected = keyRows(key).map((row) => ({
        ts: new Date(start + Number(row[index('Time')]) * 1_000).toISOString(),
        value: Number(row[index(column)]!.trim()),
      }));
      const stored = await readSeries(ctx, plant.viewer.token, { instrument_id, limit: 100_000 });
      expect(stored.map(({ ts, value }) => ({ ts, value })), `${key} ${column}`).toEqual(expected);
    }
    const co2 = await readSeries(ctx, plant.viewer.token, { instrument_id: instruments.at(-1)!.instrument_id, limit: 100_000 });
    expect(co2.filter((point) => point.value !== null)).toEqual([]);
    expect(keyRows('001 · 01').map((row) => row[index('CO2')])).toEqual(['-9999.00', '-9999.00', '-9999.00', '-9999.00']);
  });
});
