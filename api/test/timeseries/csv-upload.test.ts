import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus, type RealExportName } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

interface Upload { statusCode: number; job: JobStatus & { error?: string } }

async function upload(
  ctx: TestContext, token: string, unitOperationId: number, mapping: unknown, file: { name: string; content: Buffer | string; type?: string }, wait = true,
  fields: Record<string, string> = {},
): Promise<Upload> {
  const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping), ...fields }, file);
  const response = await ctx.request({
    method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads${wait ? '?wait=true' : ''}`, token,
    headers: { 'content-type': contentType }, payload: body,
  });
  return { statusCode: response.statusCode, job: response.json() };
}

const dataset = (name: RealExportName) => ({ name, content: readFileSync(realExportPath(name)) });

describe('CSV uploads', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
  });
  // Equipment of its own per test: one piece of equipment runs one unit operation at a time, and an
  // upload gives a unit operation without a window the file's range.
  beforeEach(async () => {
    plant = await createPlant(ctx, 0);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('ingests the Pioreactor OD export (ISO timestamps with microseconds) and sets the alias', async () => {
    const [od] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation,
      { timestamp_column: 'timestamp', columns: [{ column: 'od_reading', instrument_id: od }] },
      dataset('od_readings_with_too_frequently_outlier_detections.csv'));
    expect(statusCode).toBe(200);
    expect(job).toMatchObject({ kind: 'csv', state: 'completed' });
    expect(job.result).toMatchObject({ points_written: 10_944, rows_read: 10_944, rows_valid: 10_944, timestamp_format: 'iso', notice: null });
    expect(job.progress).toMatchObject({ rows_read: 10_944, rows_skipped: 0, points_written: 10_944 });
    expect(job.progress.bytes_read).toBe(job.progress.bytes_total);
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: od!, limit: 100_000 });
    expect(readings).toHaveLength(10_944);
    expect(readings[0]).toEqual({ ts: '2025-02-26T10:27:40.854742Z', instrument_id: od, value: 0.2606244208585877 });
    // Every reading gives back the microseconds of its line (six fraction digits; none when they are 000).
    const fileTimes = dataset('od_readings_with_too_frequently_outlier_detections.csv').content.toString('utf8').split('\n').slice(1)
      .filter((line) => line.trim() !== '').map((line) => line.split(',')[0]!.replace(/(\.\d{3})000Z$/, '$1Z'));
    expect(readings.map((reading) => reading.ts).sort()).toEqual(fileTimes.sort());
    const { rows } = await ctx.deps.pg.query('SELECT alias FROM instruments WHERE id = $1', [od]);
    expect(rows[0].alias).toBe('od_reading');
  });

  it('ingests the Chi.Bio log (CRLF, elapsed seconds from the unit operation start)', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 3);
    const start = '2021-05-02T07:12:51.000Z';
    const unitOperation = await createUnitOperation(ctx, plant, { start });
    const columns = ['od_measured', 'media_temp', 'FP1_emit1'].map((column, index) => ({ column, instrument_id: ids[index] }));
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation,
      { timestamp_column: 'exp_time', timestamp_mode: 'elapsed', elapsed_unit: 'seconds', columns },
      dataset('2021-05-02 07_12_51_M0_data.csv'));
    expect(statusCode).toBe(200);
    expect(job.result).toMatchObject({ points_written: 15_473 * 3, rows_read: 15_473, rows_valid: 15_473, timestamp_format: 'elapsed seconds' });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[0]!, limit: 100_000 });
    expect(readings).toHaveLength(15_473);
    expect(readings[0]).toEqual({ ts: '2021-05-02T07:12:51.140Z', instrument_id: ids[0], value: 1.5459637964774955 });
  });

  it('ingests the Chronograf export read as wide (every field quoted, no final newline; its rows share times: the last row per time kept when asked, and counted)', async () => {
    const [o2] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'Presens_data.O2_value', instrument_id: o2 }] };
    const refused = await upload(ctx, plant.editor.token, unitOperation, mapping, dataset('O2_2021-10-01-10-59 Chronograf Data.csv'));
    expect(refused.statusCode).toBe(422);
    expect(refused.job.error).toContain('1,496 time(s) appear more than once for one instrument, so nothing was written');
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, mapping, dataset('O2_2021-10-01-10-59 Chronograf Data.csv'), true, { duplicates: 'keep-last' });
    expect(statusCode).toBe(200);
    // points_written counts what is stored: one reading per time, not one per row.
    expect(job.result).toMatchObject({ points_written: 1_496, rows_read: 71_664, duplicates: { policy: 'keep-last', keys: 1_496, rows_dropped: 71_664 - 1_496 } });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: o2!, limit: 100_000 });
    expect(readings).toHaveLength(1_496); // one reading per timestamp: the file's last row for it
    const text = readFileSync(realExportPath('O2_2021-10-01-10-59 Chronograf Data.csv'), 'utf8');
    const firstTimestampRows = text.split('\n').filter((line) => line.startsWith('"2021-09-30T15:24:29.000Z"'));
    const lastValue = Number(firstTimestampRows.at(-1)!.split(',')[1]!.replace(/"/g, ''));
    expect(readings[0]).toEqual({ ts: '2021-09-30T15:24:29.000Z', instrument_id: o2, value: lastValue });
  });

  it('ingests the DASware export (Latin-1, semicolons, [TrackData1] section, UTC timestamps beside its TimezoneBias, empty cells)', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'Timestamp',
      columns: [{ column: 'Unit 1.T1.PV [°C]', instrument_id: ids[0] }, { column: 'Unit 1.pH1.PV [pH]', instrument_id: ids[1] }],
    }, dataset('CTPC06603.20200714 - 5GB1 - KDB.Control.csv'));
    expect(statusCode).toBe(200);
    expect(job.result).toMatchObject({ points_written: 728 + 775, rows_read: 6_394, timestamp_format: 'iso-space' });
    const temperature = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[0]!, limit: 100_000 });
    expect(temperature).toHaveLength(728);
    expect(temperature[0]!.ts).toBe('2020-07-14T09:55:33.000Z'); // DASware writes UTC; TimezoneBias 120 is the station's offset
    const { rows } = await ctx.deps.pg.query('SELECT alias FROM instruments WHERE id = ANY($1::bigint[]) ORDER BY id', [ids]);
    expect(rows.map((row) => row.alias)).toEqual(['Unit 1.T1.PV [°C]', 'Unit 1.pH1.PV [pH]']);
  });

  it('skips and counts rows with bad timestamps or outside the unit operation window', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant, { start: '2024-01-01T00:00:00Z', end: '2024-01-01T01:00:00Z' });
    const csv = 'time;value\n2024-01-01 00:10:00;1,5\nnot a date;2\n2023-12-31 23:00:00;3\n2024-01-01 00:20:00;4\n2024-01-01 02:00:00;5\n'
      + Array.from({ length: 20 }, (_, index) => `2024-01-01 00:3${Math.floor(index / 10)}:${String(index % 10).padStart(2, '0')};6`).join('\n');
    const { job } = await upload(ctx, plant.editor.token, unitOperation, { timestamp_column: 'time', columns: [{ column: 'value', instrument_id: sensor }] },
      { name: 'window.csv', content: csv });
    expect(job.state).toBe('completed');
    expect(job.result).toMatchObject({ rows_read: 25, rows_valid: 22, rows_skipped_bad_timestamp: 1, rows_skipped_out_of_range: 2, points_written: 22 });
    expect(job.progress.rows_skipped).toBe(3);
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
    expect(readings[0]).toEqual({ ts: '2024-01-01T00:10:00.000Z', instrument_id: sensor, value: 1.5 }); // decimal comma
  });

  it('stores every numeric form as its number: plain decimals as written, the rest parsed; empty cells are missing', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const cells = ['12', '-0.25', '.5', '5.', '007', '1.5e3', '-2E-2', '+4', ' 7 ', '"8.5"', '', '123456789.123456789'];
    // The row whose only cell is empty gives no point: it is skipped as empty.
    const expected = [12, -0.25, 0.5, 5, 7, 1500, -0.02, 4, 7, 8.5, null, Number('123456789.123456789')];
    const csv = ['time,v', ...cells.map((cell, index) => `2024-03-01T00:00:${String(index).padStart(2, '0')}Z,${cell}`)].join('\n');
    const { job } = await upload(ctx, plant.editor.token, unitOperation, { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] },
      { name: 'numbers.csv', content: csv });
    expect(job.state).toBe('completed');
    expect(job.result).toMatchObject({ rows_valid: cells.length - 1, rows_skipped_empty: 1, points_written: cells.length - 1 });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
    expect(readings.map((reading) => reading.value)).toEqual(expected.filter((value) => value !== null));
  });

  it("replaces the mapped instruments' readings in the unit operation's window: exactly the new points remain there", async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const rowsOf = (from: number, to: number, value: number) =>
      ['ts,v', ...Array.from({ length: to - from + 1 }, (_, index) => `${new Date(Date.UTC(2024, 5, 1, 0, 0, from + index)).toISOString()},${value}`)].join('\n');
    const mapping = { timestamp_column: 'ts', columns: [{ column: 'v', instrument_id: sensor }] };
    // The first upload gives the unit operation its window: seconds 0..29.
    expect((await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'a.csv', content: rowsOf(0, 29, 1) })).job.state).toBe('completed');
    // The replacement has every other second of 10..38: all 30 old readings of the window go, the rows after it are skipped.
    const sparse = ['ts,v', ...Array.from({ length: 15 }, (_, index) => `${new Date(Date.UTC(2024, 5, 1, 0, 0, 10 + index * 2)).toISOString()},2`)].join('\n');
    const replaced = await upload(ctx, plant.editor.token, unitOperation, { ...mapping, replace_existing: true }, { name: 'b.csv', content: sparse });
    expect(replaced.job.result).toMatchObject({ replaced: true, points_written: 10, points_removed: 30, rows_skipped_out_of_range: 5 });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
    expect(readings.filter((reading) => reading.value === 1)).toHaveLength(0);
    expect(readings.filter((reading) => reading.value === 2)).toHaveLength(10);
    expect(readings).toHaveLength(10);
  });

  it('fails a column with non-numeric values, listing its bad values, writing nothing', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const bad = ['a', 'b', 'c', 'd', 'e', 'f', 'a'];
    const csv = ['time,good,bad', ...bad.map((value, index) => `2024-01-01T00:00:0${index}Z,${index},${value}`)].join('\n');
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'time', columns: [{ column: 'good', instrument_id: ids[0] }, { column: 'bad', instrument_id: ids[1] }],
    }, { name: 'bad.csv', content: csv });
    expect(statusCode).toBe(422);
    expect(job.error).toBe("Column 'bad' has non-numeric values: a, b, c, d, e and 1 more");
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: ids[0]! })).toEqual([]);
  });

  it('a bad value at the end of a large file fails it after rows were staged: nothing is written, no staging table is left', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const rows = 300_000; // 600,000 points: more than one staged batch before the bad value is read
    const start = Date.UTC(2024, 0, 1);
    const lines = ['time,a,b'];
    for (let row = 0; row < rows; row += 1) lines.push(`${new Date(start + row * 1000).toISOString()},${row},${row === rows - 1 ? 'pump off' : row / 2}`);
    const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'time', columns: [{ column: 'a', instrument_id: ids[0] }, { column: 'b', instrument_id: ids[1] }],
    }, { name: 'late-error.csv', content: lines.join('\n') });
    expect(statusCode).toBe(422);
    expect(job.error).toBe("Column 'b' has non-numeric values: pump off");
    for (const id of ids) expect(await readSeries(ctx, plant.viewer.token, { instrument_id: id })).toEqual([]);
    const tables = await ctx.deps.clickhouse.query({ query: "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name LIKE 'points_staging_%'", format: 'JSONCompact' });
    expect(Number((await tables.json<[string]>()).data[0]![0])).toBe(0);
  });

  it('fails with the fixed messages for no valid data, malicious content and unknown columns', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant, { start: '2030-01-01T00:00:00Z' });
    const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] };
    const noData = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'old.csv', content: 'time,v\n2024-01-01T00:00:00Z,1\n' });
    expect(noData.job.error).toBe('No valid data found in CSV within the specified time range. Please check your data format and time range.');
    const malicious = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'x.csv', content: 'time,v\n2031-01-01T00:00:00Z,<script>alert(1)</script>\n' });
    expect(malicious.job.error).toBe('File contains potentially malicious content');
    const unknown = await upload(ctx, plant.editor.token, unitOperation, { ...mapping, columns: [{ column: 'nope', instrument_id: sensor }] },
      { name: 'x.csv', content: 'time,v\n2031-01-01T00:00:00Z,1\n' });
    expect(unknown.job.error).toBe('Columns not found in the CSV header: nope');
  });

  it('validates the request before storing the file', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] };
    const file: { name: string; content: Buffer | string } = { name: 'ok.csv', content: 'time,v\n2024-01-01T00:00:00Z,1\n' };
    const cases: Array<[unknown, typeof file, number, string]> = [
      [mapping, { ...file, name: 'data.docx' }, 400, 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)'],
      [mapping, { ...file, name: 'data.xlsx' }, 400, 'The file is not an Excel workbook (.xlsx): it could not be read as one. Save it as .xlsx or export it as CSV.'],
      [mapping, { ...file, content: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]) }, 400, 'This looks like an Excel workbook or another zip archive named as a text file; upload a workbook under its .xlsx name, or save the sheet as CSV or text.'],
      [mapping, { ...file, content: '' }, 400, 'File is empty'],
      [{ ...mapping, timestamp_column: '' }, file, 400, 'Please select a timestamp column from your CSV data. This is required to create the unit operation.'],
      [{ ...mapping, columns: [] }, file, 400, 'No instrument columns selected. Please select at least one instrument column.'],
      [{ ...mapping, columns: [{ column: 'v', instrument_id: 99999999 }] }, file, 400, 'Cannot upload CSV: Please create instruments for these columns first: v'],
    ];
    for (const [body, upload_, status, message] of cases) {
      const result = await upload(ctx, plant.editor.token, unitOperation, body, upload_, false);
      expect(result.statusCode, message).toBe(status);
      expect(result.job.error).toBe(message);
    }
    const other = await createPlant(ctx, 1);
    const elsewhere = await upload(ctx, plant.editor.token, unitOperation, { ...mapping, columns: [{ column: 'v', instrument_id: other.instrumentIds[0] }] }, file, false);
    expect(elsewhere.job.error).toBe('Cannot upload CSV: Please create instruments for these columns first: v');
    const [offEquipment] = await addInstruments(ctx, plant.organizationId, (await createPlant(ctx, 0)).equipmentId, 0).then(async () => {
      const foreignPlant = await ctx.deps.pg.query(
        `INSERT INTO equipment (organization_id, facility_id, name, type) SELECT $1, facility_id, 'Other reactor', 'bioreactor' FROM equipment WHERE id = $2 RETURNING id`,
        [plant.organizationId, plant.equipmentId]);
      return addInstruments(ctx, plant.organizationId, foreignPlant.rows[0].id, 1);
    });
    const wrongEquipment = await upload(ctx, plant.editor.token, unitOperation, { ...mapping, columns: [{ column: 'v', instrument_id: offEquipment }] }, file, false);
    expect(wrongEquipment.job.error).toBe(`Instrument ${offEquipment} (column 'v') is not on this unit operation's equipment`);
    // The parts may come in any order: the file before the mapping is read as well.
    const boundary = '----bpOrder';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ok.csv"\r\nContent-Type: text/csv\r\n\r\n${file.content}\r\n`
      + `--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\n${JSON.stringify(mapping)}\r\n--${boundary}--\r\n`;
    const reversed = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    expect(reversed.statusCode).toBe(202);
    const viewer = await upload(ctx, plant.viewer.token, unitOperation, mapping, file, false);
    expect(viewer.statusCode).toBe(403);
    const missing = await upload(ctx, plant.editor.token, 987654321, mapping, file, false);
    expect(missing.statusCode).toBe(404);
  });
});

describe('CSV upload limits', () => {
  let ctx: TestContext;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext({ CSV_MAX_BYTES: '1024', UPLOAD_RATE_LIMIT_PER_MINUTE: '5', UPLOADS_IN_FLIGHT_PER_ORGANIZATION: '100' });
    plant = await createPlant(ctx, 1);
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('refuses a file over CSV_MAX_BYTES while streaming, then rate-limits the sixth upload in a minute', async () => {
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: plant.instrumentIds[0] }] };
    const big = `time,v\n${'2024-01-01T00:00:00Z,1\n'.repeat(100)}`;
    const tooLarge = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'big.csv', content: big }, false);
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.job.error).toBe('File size must be less than 1KB');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      statuses.push((await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'ok.csv', content: 'time,v\n2024-01-01T00:00:00Z,1\n' }, false)).statusCode);
    }
    expect(statuses).toEqual([202, 202, 202, 202, 429]);
    const limited = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'ok.csv', content: 'time,v\n' }, false);
    expect(limited.statusCode).toBe(429);
    expect(limited.job.error).toBe('Too many upload attempts. Please wait before trying again. (Max 5 uploads per minute)');
  });
});
