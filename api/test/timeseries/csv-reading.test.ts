/**
 * How an upload reads a file: time zones (the file's own offset, DASware's time base, the mapping's
 * zone, the organisation's default, a daylight-saving change), forward fill of deadband exports, the
 * long-format split by a key column, and skipped rows counted by reason. Through the upload route and
 * the ingest-worker, with the real exports where they exist.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus, type RealExportName } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

interface Upload { statusCode: number; job: JobStatus & { error?: string } }

async function upload(ctx: TestContext, token: string, unitOperationId: number, mapping: unknown, file: { name: string; content: Buffer | string }): Promise<Upload> {
  const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, file);
  const response = await ctx.request({
    method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads?wait=true`, token,
    headers: { 'content-type': contentType }, payload: body,
  });
  return { statusCode: response.statusCode, job: response.json() };
}

const DASWARE = 'CTPC06603.20200714 - 5GB1 - KDB.Control.csv';
const CHRONOGRAF = 'O2_2021-10-01-10-59 Chronograf Data.csv';
const dataset = (name: RealExportName) => ({ name, content: readFileSync(realExportPath(name)) });

/** The [TrackData1] rows of the DASware file, split into cells (quotes removed), read independently of the product. */
function dasWareRows(): { header: string[]; rows: string[][] } {
  const lines = readFileSync(realExportPath(DASWARE), 'latin1').split('\r\n');
  const start = lines.indexOf('"[TrackData1]"') + 1;
  const end = lines.indexOf('', start);
  const cells = (line: string) => line.split(';').map((cell) => cell.replace(/^"|"$/g, ''));
  return { header: cells(lines[start]!), rows: lines.slice(start + 1, end).map(cells) };
}

describe('CSV reading', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
  });
  // Equipment of its own per test: one piece of equipment runs one unit operation at a time.
  beforeEach(async () => {
    plant = await createPlant(ctx, 0);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  describe('time zones', () => {
    it('reads DASware timestamps as the UTC they are, whatever zone the upload names, and reports the station offset', async () => {
      const [temperature] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Timestamp', time_zone: 'America/New_York', columns: [{ column: 'Unit 1.T1.PV [°C]', instrument_id: temperature }],
      }, dataset(DASWARE));
      expect(statusCode).toBe(200);
      expect(job.result).toMatchObject({ time_zone: 'UTC', time_zone_source: 'file', station_utc_offset_minutes: 120, points_written: 728 });
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: temperature!, limit: 100_000 });
      expect(readings[0]!.ts).toBe('2020-07-14T09:55:33.000Z');
      expect(readings.at(-1)!.ts).toBe('2020-07-16T15:10:13.000Z'); // the last row with a temperature
    });

    it("lets a timestamp's own offset win over the upload's zone", async () => {
      const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const csv = ['time,v', '2024-05-01T10:00:00+02:00,1', '2024-05-01T10:00:00Z,2', '2024-05-01 10:30:00-05:00,3'].join('\n');
      const { job } = await upload(ctx, plant.editor.token, unitOperation,
        { timestamp_column: 'time', time_zone: 'Asia/Tokyo', columns: [{ column: 'v', instrument_id: sensor }] }, { name: 'offsets.csv', content: csv });
      expect(job.result).toMatchObject({ time_zone_source: 'file' });
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
      expect(readings.map((reading) => [reading.ts, reading.value])).toEqual([
        ['2024-05-01T08:00:00.000Z', 1], ['2024-05-01T10:00:00.000Z', 2], ['2024-05-01T15:30:00.000Z', 3],
      ]);
    });

    it("reads zone-less timestamps in the upload's zone, through a daylight-saving change in both directions", async () => {
      const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      // Amsterdam: 2021-03-28 02:00 -> 03:00 (02:30 does not exist), 2021-10-31 03:00 -> 02:00 (02:xx twice).
      const rows = [
        ['2021-03-28 01:30:00', 1], ['2021-03-28 03:00:00', 2],
        ['2021-10-31 01:30:00', 3], ['2021-10-31 02:00:00', 4], ['2021-10-31 02:30:00', 5], ['2021-10-31 02:00:00', 6], ['2021-10-31 02:30:00', 7], ['2021-10-31 03:00:00', 8],
      ];
      const { job } = await upload(ctx, plant.editor.token, unitOperation,
        { timestamp_column: 'time', time_zone: 'Europe/Amsterdam', columns: [{ column: 'v', instrument_id: sensor }] },
        { name: 'dst.csv', content: ['time;v', ...rows.map((row) => row.join(';'))].join('\n') });
      expect(job.result).toMatchObject({ time_zone: 'Europe/Amsterdam', time_zone_source: 'mapping', points_written: 8 });
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
      expect(readings.map((reading) => [reading.ts, reading.value])).toEqual([
        ['2021-03-28T00:30:00.000Z', 1], ['2021-03-28T01:00:00.000Z', 2],
        ['2021-10-30T23:30:00.000Z', 3], ['2021-10-31T00:00:00.000Z', 4], ['2021-10-31T00:30:00.000Z', 5],
        ['2021-10-31T01:00:00.000Z', 6], ['2021-10-31T01:30:00.000Z', 7], ['2021-10-31T02:00:00.000Z', 8],
      ]);
    });

    it("falls back to the organisation's zone, a setting every member reads and admins change", async () => {
      const organization = await createPlant(ctx, 1);
      const admin = await ctx.createUser({ organizationId: organization.organizationId, role: 'admin' });
      const read = await ctx.request({ method: 'GET', url: '/api/v1/organization-settings', token: organization.viewer.token });
      expect(read.json()).toEqual({ organization_id: organization.organizationId, time_zone: 'UTC' });
      const byEditor = await ctx.request({ method: 'PUT', url: '/api/v1/organization-settings', token: organization.editor.token, payload: { time_zone: 'Europe/Paris' } });
      expect(byEditor.statusCode).toBe(403);
      const bad = await ctx.request({ method: 'PUT', url: '/api/v1/organization-settings', token: admin.token, payload: { time_zone: 'Europe/Atlantis' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toContain("Unknown time zone 'Europe/Atlantis'");
      const changed = await ctx.request({ method: 'PUT', url: '/api/v1/organization-settings', token: admin.token, payload: { time_zone: 'america/new_york' } });
      expect(changed.json()).toEqual({ organization_id: organization.organizationId, time_zone: 'America/New_York' });
      // Another organisation keeps its own.
      expect((await ctx.request({ method: 'GET', url: '/api/v1/organization-settings', token: plant.viewer.token })).json().time_zone).toBe('UTC');

      const unitOperation = await createUnitOperation(ctx, organization);
      const csv = 'time,v\n2024-01-15 08:00:00,1\n2024-07-15 08:00:00,2\n';
      const { job } = await upload(ctx, organization.editor.token, unitOperation,
        { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: organization.instrumentIds[0] }] }, { name: 'local.csv', content: csv });
      expect(job.result).toMatchObject({ time_zone: 'America/New_York', time_zone_source: 'organization' });
      const readings = await readSeries(ctx, organization.viewer.token, { instrument_id: organization.instrumentIds[0]! });
      expect(readings.map((reading) => reading.ts)).toEqual(['2024-01-15T13:00:00.000Z', '2024-07-15T12:00:00.000Z']);
    });

    it('refuses an unknown zone name with 400 before storing the file', async () => {
      const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation,
        { timestamp_column: 'time', time_zone: 'Mars/Olympus_Mons', columns: [{ column: 'v', instrument_id: sensor }] },
        { name: 'x.csv', content: 'time,v\n2024-01-01 00:00:00,1\n' });
      expect(statusCode).toBe(400);
      expect(job.error).toBe("mapping.time_zone: Unknown time zone 'Mars/Olympus_Mons': use an IANA zone name such as Europe/Amsterdam, UTC, or a fixed offset such as +02:00");
      const long = await upload(ctx, plant.editor.token, unitOperation,
        { timestamp_column: 'time', key_column: 'time', columns: [{ column: 'v', instrument_id: sensor, key: 'a' }] },
        { name: 'x.csv', content: 'time,v\n2024-01-01 00:00:00,1\n' });
      expect(long.statusCode).toBe(400);
      expect(long.job.error).toBe('mapping.key_column: the key column cannot be the timestamp column');
    });
  });

  it('carries the last value forward over the empty cells of a deadband export, only where asked', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const { header, rows } = dasWareRows();
    const temperatureIndex = header.indexOf('Unit 1.T1.PV [°C]');
    const pHIndex = header.indexOf('Unit 1.pH1.PV [pH]');
    const firstTemperature = rows.findIndex((row) => row[temperatureIndex] !== '');
    const written = rows.filter((row) => row[pHIndex] !== '').length;
    expect(written).toBe(775);

    const { job } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'Timestamp',
      columns: [
        { column: 'Unit 1.T1.PV [°C]', instrument_id: ids[0], fill_forward: true },
        { column: 'Unit 1.pH1.PV [pH]', instrument_id: ids[1] },
      ],
    }, dataset(DASWARE));
    expect(job.state).toBe('completed');
    const filled = rows.length - firstTemperature;
    const emptyBeforeFirst = rows.slice(0, firstTemperature).filter((row) => row[pHIndex] === '').length;
    expect(job.result).toMatchObject({ points_written: filled + 775, points_filled: filled - 728, rows_skipped_empty: emptyBeforeFirst });

    const temperature = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[0]!, limit: 100_000 });
    expect(temperature).toHaveLength(filled);
    // Every row from the first written value on has a temperature: the one last written in the file.
    let last = '';
    const expected = rows.slice(firstTemperature).map((row) => {
      if (row[temperatureIndex] !== '') last = row[temperatureIndex]!;
      return Number(last);
    });
    expect(temperature.map((reading) => reading.value)).toEqual(expected);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: ids[1]!, limit: 100_000 })).toHaveLength(775);
  });

  describe('long format', () => {
    const text = () => readFileSync(realExportPath(CHRONOGRAF), 'utf8');
    const rowsOf = (position: string) => text().split('\n').slice(1).filter((line) => line.endsWith(`,"${position}"`));

    it('splits the Chronograf export by position into 48 instruments', async () => {
      const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 48);
      const unitOperation = await createUnitOperation(ctx, plant);
      const columns = ids.map((id, position) => ({ column: 'Presens_data.O2_value', instrument_id: id, key: String(position) }));
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation,
        { timestamp_column: 'time', key_column: 'position', columns }, dataset(CHRONOGRAF));
      expect(statusCode).toBe(200);
      expect(job.result).toMatchObject({ instruments: 48, rows_read: 71_664, points_written: 71_664, rows_skipped: 0, time_zone_source: 'file' });
      for (const position of ['0', '7', '47']) {
        const expected = rowsOf(position).map((line) => {
          const [time, value] = line.split(',').map((cell) => cell.replace(/"/g, ''));
          return { ts: time, value: Number(value) };
        });
        const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[Number(position)]!, limit: 100_000 });
        expect(readings.map((reading) => ({ ts: reading.ts, value: reading.value })), `position ${position}`).toEqual(expected);
      }
      const { rows } = await ctx.deps.pg.query('SELECT alias FROM instruments WHERE id = $1', [ids[7]]);
      expect(rows[0].alias).toBe('Presens_data.O2_value (position 7)');
    });

    it('takes as many keys as the user picks and counts the rest as skipped', async () => {
      const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 3);
      const unitOperation = await createUnitOperation(ctx, plant);
      const picked = ['3', '10', '22'];
      const columns = picked.map((key, index) => ({ column: 'Presens_data.O2_value', instrument_id: ids[index], key }));
      const { job } = await upload(ctx, plant.editor.token, unitOperation, { timestamp_column: 'time', key_column: 'position', columns }, dataset(CHRONOGRAF));
      const kept = picked.reduce((sum, key) => sum + rowsOf(key).length, 0);
      expect(job.result).toMatchObject({ instruments: 3, points_written: kept, rows_skipped_unselected_key: 71_664 - kept });
      expect(job.result!.skipped_message).toBe(`${(71_664 - kept).toLocaleString('en-US')} rows skipped: ${(71_664 - kept).toLocaleString('en-US')} of keys not mapped to an instrument.`);
      expect(await readSeries(ctx, plant.viewer.token, { instrument_id: ids[1]!, limit: 100_000 })).toHaveLength(rowsOf('10').length);
    });
  });

  it('counts skipped rows by reason and says why', async () => {
    const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant, { start: '2024-01-01T00:00:00Z', end: '2024-01-01T01:00:00Z' });
    const lines = [
      'time,a,b',
      '2024-01-01 00:10:00,1,2', // kept
      'yesterday,3,4', // bad timestamp
      ',5,6', // bad timestamp: values without a time
      ',,', // empty
      '2023-12-31 23:00:00,7,8', // outside the window
      '2024-01-01 02:00:00,,9', // outside the window
      '2024-01-01 00:20:00,,', // empty: no value in any mapped column
      '2024-01-01 00:30:00,,10', // kept (one point)
      ...Array.from({ length: 20 }, (_, index) => `2024-01-01 00:4${Math.floor(index / 10)}:${String(index % 10).padStart(2, '0')},${index},`),
    ];
    const { job } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'time', columns: [{ column: 'a', instrument_id: ids[0] }, { column: 'b', instrument_id: ids[1] }],
    }, { name: 'reasons.csv', content: lines.join('\n') });
    expect(job.state).toBe('completed');
    expect(job.result).toMatchObject({
      rows_read: 28, rows_valid: 22, rows_skipped: 6,
      rows_skipped_bad_timestamp: 2, rows_skipped_out_of_range: 2, rows_skipped_empty: 2, rows_skipped_unselected_key: 0,
      points_written: 2 + 1 + 20,
      skipped_message: "6 rows skipped: 2 without a value in the mapped columns, 2 outside the unit operation's time window, 2 with an empty or unreadable timestamp.",
    });
    expect(job.progress.rows_skipped).toBe(6);
  });

  it('keeps the seconds of a unit operation start (elapsed-time files count from it)', async () => {
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, 'Chi.Bio run', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/unit-operations', token: plant.editor.token,
      payload: { run_id: run.rows[0].id, type: 'fermentation', equipment_id: plant.equipmentId, start_time: '2021-05-02T07:12:51.000Z', end_time: '2021-05-13T01:20:31Z' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ start_time: '2021-05-02T07:12:51.000Z', end_time: '2021-05-13T01:20:31.000Z' });
    const read = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${created.json().id}`, token: plant.viewer.token });
    expect(read.json().start_time).toBe('2021-05-02T07:12:51.000Z');
  });

  describe('composite keys, row filters, header-less files and unit conversion', () => {
    /** Instruments in a unit of the test's choosing (the fixture's are in celsius). */
    async function instrumentsIn(unit: string, count: number): Promise<number[]> {
      const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, count);
      await ctx.deps.pg.query('UPDATE instruments SET unit = $1 WHERE id = ANY($2::bigint[])', [unit, ids]);
      return ids;
    }

    it('splits a long file by well x channel, one instrument per combination, and counts the combinations not picked', async () => {
      const wells = ['A1', 'A2', 'B1'];
      const channels = ['OD600', 'GFP'];
      const lines = ['Time,Well,Channel,Value'];
      const expected = new Map<string, Array<[string, number]>>();
      for (let minute = 0; minute < 5; minute += 1) {
        for (const well of wells) {
          for (const channel of channels) {
            const value = minute * 100 + wells.indexOf(well) * 10 + channels.indexOf(channel) + 0.5;
            const time = `2024-03-01 10:0${minute}:00`;
            lines.push(`${time},${well},${channel},${value}`);
            const key = `${well} · ${channel}`;
            expected.set(key, [...(expected.get(key) ?? []), [`2024-03-01T10:0${minute}:00.000Z`, value]]);
          }
        }
      }
      const picked = ['A1 · OD600', 'A1 · GFP', 'B1 · GFP'];
      const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, picked.length);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Time', time_zone: 'UTC', key_columns: ['Well', 'Channel'],
        columns: picked.map((key, index) => ({ column: 'Value', key, instrument_id: ids[index] })),
      }, { name: 'wells.csv', content: lines.join('\n') });
      expect(statusCode).toBe(200);
      // Every time repeats six times in the file; per combination it is unique, so nothing is a duplicate.
      expect(job.result).toMatchObject({ instruments: 3, rows_read: 30, points_written: 15, rows_skipped_unselected_key: 15, duplicates: { keys: 0 } });
      for (const [index, key] of picked.entries()) {
        const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[index]! });
        expect(readings.map((reading) => [reading.ts, reading.value]), key).toEqual(expected.get(key));
      }
      const { rows } = await ctx.deps.pg.query('SELECT alias FROM instruments WHERE id = $1', [ids[2]]);
      expect(rows[0].alias).toBe('Value (B1 · GFP)');

      const mixed = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Time', key_column: 'Well', key_columns: ['Well', 'Channel'], columns: [{ column: 'Value', key: 'A1', instrument_id: ids[0] }],
      }, { name: 'wells.csv', content: lines.join('\n') });
      expect(mixed.statusCode).toBe(400);
      expect(mixed.job.error).toBe('mapping.key_columns: give key_column or key_columns, not both');
    });

    it('leaves out the rows the filters name, counted by filter and value, never silently', async () => {
      const lines = ['Time,Sample Type,Sample,Glucose [g/L]'];
      const kinds = ['Calibrator', 'Sample', 'Control', 'Sample', 'Blank 1', 'Sample', 'Calibrator', 'Blank 2', 'Sample'];
      kinds.forEach((kind, index) => lines.push(`2024-02-01 08:${String(index).padStart(2, '0')}:00,${kind},S${index},${index + 0.25}`));
      const [glucose] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Time', time_zone: 'UTC', columns: [{ column: 'Glucose [g/L]', instrument_id: glucose }],
        row_filters: [
          { column: 'Sample Type', operator: 'equals', values: ['Calibrator', 'control'] },
          { column: 'sample type', operator: 'matches', values: ['Blank*'] },
        ],
      }, { name: 'samples.csv', content: lines.join('\n') });
      expect(statusCode).toBe(200);
      expect(job.result).toMatchObject({
        rows_read: 9, rows_valid: 4, points_written: 4, rows_skipped: 5, rows_skipped_filtered: 5,
        rows_filtered: [
          { column: 'Sample Type', operator: 'equals', values: ['Calibrator', 'control'], rows: 3, by_value: [{ value: 'Calibrator', rows: 2 }, { value: 'Control', rows: 1 }], other_rows: 0 },
          { column: 'sample type', operator: 'matches', values: ['Blank*'], rows: 2, by_value: [{ value: 'Blank 1', rows: 1 }, { value: 'Blank 2', rows: 1 }], other_rows: 0 },
        ],
        skipped_message: '5 rows skipped: 5 left out by the row filters.',
        filtered_message: 'Left out by row filters: 3 rows where Sample Type is Calibrator or control (2 Calibrator, 1 Control); 2 rows where sample type matches Blank* (1 Blank 1, 1 Blank 2).',
      });
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: glucose! });
      expect(readings.map((reading) => reading.value)).toEqual([1.25, 3.25, 5.25, 8.25]);

      const unknown = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Time', columns: [{ column: 'Glucose [g/L]', instrument_id: glucose }], row_filters: [{ column: 'Kind', operator: 'equals', values: ['x'] }],
      }, { name: 'samples.csv', content: lines.join('\n') });
      expect(unknown.statusCode).toBe(422);
      expect(unknown.job.error).toBe("Row filter column 'Kind' is not in the CSV header.");
    });

    it('reads the header-less Cedex Bio HT archive with the column names the upload gives, keyed by test', async () => {
      const names = Array.from({ length: 26 }, (_, index) => `Column ${index + 1}`);
      Object.assign(names, { 0: 'Record', 1: 'Measured', 2: 'Sample', 4: 'Sample Type', 6: 'Test', 8: 'Unit', 10: 'Result' });
      const records = readFileSync(realExportPath('roche_cedex_bioht_example03.txt'), 'latin1').split('\n').filter((line) => line.trim() !== '').map((line) => line.split('\t'));
      const expectedOf = (test: string) => records.filter((cells) => cells[0] === '40' && cells[6] === test && !cells[10]!.trim().startsWith('<'))
        .map((cells) => [`${cells[1]!.replace(' ', 'T')}.000Z`, Number(cells[10])]);
      const ids = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Measured', time_zone: 'UTC', key_column: 'Test', reading: { delimiter: '\t', header_line: 1, column_names: names },
        row_filters: [{ column: 'Record', operator: 'not_equals', values: ['40'] }],
        columns: [{ column: 'Result', key: 'GLC3B', instrument_id: ids[0] }, { column: 'Result', key: 'ODB', instrument_id: ids[1] }],
      }, { name: 'roche_cedex_bioht_example03.txt', content: readFileSync(realExportPath('roche_cedex_bioht_example03.txt')) });
      expect(statusCode).toBe(200);
      // The archive's first line (its file record) is data now, and the row filter leaves it out.
      expect(job.result).toMatchObject({
        rows_read: 931, rows_skipped_filtered: 1, rows_filtered: [{ column: 'Record', rows: 1, by_value: [{ value: '0', rows: 1 }] }],
        rows_skipped_unselected_key: 930 - 96 - 192,
      });
      for (const [index, test] of ['GLC3B', 'ODB'].entries()) {
        const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: ids[index]! });
        expect(readings.map((reading) => [reading.ts, reading.value]), test).toEqual(expectedOf(test).sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
      }
      const { rows } = await ctx.deps.pg.query('SELECT alias FROM instruments WHERE id = $1', [ids[0]]);
      expect(rows[0].alias).toBe('Result (Test GLC3B)');

      // The preview answers the same table for the same choices.
      const preview = multipartBody({ choices: JSON.stringify({ header_line: 1, no_header: true, column_names: names.slice(0, 11) }) },
        { name: 'roche_cedex_bioht_example03.txt', content: readFileSync(realExportPath('roche_cedex_bioht_example03.txt')) });
      const previewed = await ctx.request({ method: 'POST', url: '/api/v1/csv-previews', token: plant.editor.token, headers: { 'content-type': preview.contentType }, payload: preview.body });
      expect(previewed.statusCode).toBe(200);
      expect(previewed.json()).toMatchObject({ header_row: false, time_column: 'Measured', rows_parsed: 931 });
      expect(previewed.json().headers.slice(9, 12)).toEqual(['Column 10', 'Result', 'Column 12']);
      expect(previewed.json().rows[0].slice(0, 3)).toEqual(['0', '2022-10-20 16:34:37', '#ARC-FILE#']);

      const twice = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'Measured', reading: { header_line: 1, column_names: ['Measured', 'measured'] }, columns: [{ column: 'Measured', instrument_id: ids[0] }],
      }, { name: 'x.txt', content: 'a\tb\n' });
      expect(twice.statusCode).toBe(400);
      expect(twice.job.error).toBe("mapping.reading.column_names.1: column name 'measured' is given twice");
    });

    it('converts a column to the unit asked for, exactly, and refuses units that do not convert', async () => {
      const csv = ['time,Feed (mL/h),Temp [°F]', '2024-04-01 00:00:00,150,212', '2024-04-01 00:01:00,0.7,98.6', '2024-04-01 00:02:00,1234.5,-40'].join('\n');
      const [feed] = await instrumentsIn('L/h', 1);
      const [temperature] = await instrumentsIn('Cel', 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, job } = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'time', time_zone: 'UTC', columns: [
          { column: 'Feed (mL/h)', instrument_id: feed, convert_unit: { from: 'mL/h', to: 'L/h' } },
          { column: 'Temp [°F]', instrument_id: temperature, convert_unit: { from: '[degF]', to: 'Cel' } },
        ],
      }, { name: 'units.csv', content: csv });
      expect(statusCode).toBe(200);
      expect(job.result).toMatchObject({ points_written: 6 });
      expect((await readSeries(ctx, plant.viewer.token, { instrument_id: feed! })).map((reading) => reading.value)).toEqual([0.15, 0.0007, 1.2345]);
      expect((await readSeries(ctx, plant.viewer.token, { instrument_id: temperature! })).map((reading) => reading.value)).toEqual([100, 37, -40]);

      const incompatible = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'time', columns: [{ column: 'Feed (mL/h)', instrument_id: feed, convert_unit: { from: 'mL/h', to: 'g/L' } }],
      }, { name: 'units.csv', content: csv });
      expect(incompatible.statusCode).toBe(400);
      expect(incompatible.job.error).toBe("mapping.columns.0.convert_unit: 'mL/h' cannot be converted to 'g/L': the two units do not measure the same quantity.");
      const wrongInstrument = await upload(ctx, plant.editor.token, unitOperation, {
        timestamp_column: 'time', columns: [{ column: 'Feed (mL/h)', instrument_id: temperature, convert_unit: { from: 'mL/h', to: 'L/min' } }],
      }, { name: 'units.csv', content: csv });
      expect(wrongInstrument.statusCode).toBe(400);
      expect(wrongInstrument.job.error).toBe(`Column 'Feed (mL/h)' is converted to 'L/min', but instrument ${temperature} is kept in 'Cel': convert to the instrument's unit or map an instrument in 'L/min'.`);
    });
  });
});
