/**
 * Time-series exports through the real HTTP server and the real services: each format, exactly what the
 * read endpoints read (latest version, deletions excluded), the round trips (CSV wide through the CSV
 * upload, CSV long through the bulk endpoint, bit for bit), roles, organisation isolation, formula
 * neutralisation, the size switch to export jobs and the audit trail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { sanitizeHeaders } from '@bioprocess/shared/csv/headers';
import { addInstruments, createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 2, 1, 8);
const HOUR = 3_600_000;
/** Values whose shortest text is long, tiny, huge or negative: a lossy writer changes their bits. */
const AWKWARD = [0.1 + 0.2, 1 / 3, -2.5e-7, 1.7976931348623157e308, 5e-324, -0, 123456789.12345679, 1e21, -1.5, 42];

interface Seeded {
  plant: Plant;
  unitOperationId: number;
  runId: number;
}

async function bulk(ctx: TestContext, token: string, data: unknown[]): Promise<void> {
  const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token, payload: { data } });
  expect(response.statusCode, response.body).toBe(200);
}

async function exportText(ctx: TestContext, token: string, query: Record<string, string | number>): Promise<{ status: number; body: string; raw: Buffer; headers: Record<string, unknown> }> {
  const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]));
  const response = await ctx.request({ method: 'GET', url: `/api/v1/exports/time-series?${search}`, token });
  return { status: response.statusCode, body: response.body, raw: response.rawPayload, headers: response.headers };
}

function csv(text: string): string[][] {
  return parse(text, { relax_column_count: false }) as string[][];
}

async function unitOperationOn(ctx: TestContext, organizationId: number, equipmentId: number, runId: number, start: number, end: number): Promise<number> {
  const { rows } = await ctx.deps.pg.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time) VALUES ($1, $2, 'fermentation', $3, $4, $5) RETURNING id`,
    [organizationId, runId, equipmentId, new Date(start), new Date(end)]);
  return rows[0].id as number;
}

async function newEquipment(ctx: TestContext, organizationId: number, instruments: number): Promise<{ equipmentId: number; instrumentIds: number[] }> {
  const { rows } = await ctx.deps.pg.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type)
     SELECT $1, f.id, 'Reactor ' || md5(random()::text), 'bioreactor' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`, [organizationId]);
  const equipmentId = rows[0].id as number;
  return { equipmentId, instrumentIds: await addInstruments(ctx, organizationId, equipmentId, instruments) };
}

async function allReadings(ctx: TestContext, token: string, instrumentId: number): Promise<Array<[string, number | null]>> {
  const readings = await readSeries(ctx, token, { instrument_id: instrumentId, start_time: new Date(T0 - 10 * HOUR).toISOString(), end_time: new Date(T0 + 10 * HOUR).toISOString(), limit: 100_000 });
  return readings.map((reading) => [reading.ts, reading.value]);
}

describe('time-series exports', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let seeded: Seeded;
  /** Expected readings per instrument of the unit operation: [ms, value]. */
  const expected = new Map<number, Array<[number, number | null]>>();

  beforeAll(async () => {
    ctx = await createTestContext({ EXPORT_STREAM_MAX_POINTS: '2000', UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
    const plant = await createPlant(ctx, 3);
    const { rows: runRows } = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, '=cmd|''/c calc''!A1', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    const runId = runRows[0].id as number;
    const unitOperationId = await unitOperationOn(ctx, plant.organizationId, plant.equipmentId, runId, T0, T0 + 2 * HOUR);
    seeded = { plant, unitOperationId, runId };
    // A formula-like instrument name: exports must show it as text.
    await ctx.deps.pg.query(`UPDATE instruments SET name = '@SUM(A1:A9)', unit = 'mg/L' WHERE id = $1`, [plant.instrumentIds[2]]);

    const [a, b, c] = plant.instrumentIds as [number, number, number];
    const data: Array<{ ts: number; instrument_id: number; value: number | null }> = [];
    for (let index = 0; index < 300; index += 1) {
      const ms = T0 + index * 10_000 + (index % 7); // odd milliseconds too
      data.push({ ts: ms, instrument_id: a, value: AWKWARD[index % AWKWARD.length]! * (index + 1) });
      if (index % 3 === 0) data.push({ ts: ms, instrument_id: b, value: index % 2 === 0 ? -index / 7 : index * 1e-9 });
      if (index % 5 === 0) data.push({ ts: ms + 3, instrument_id: c, value: Math.PI * index });
    }
    // Outside the unit operation's window: never exported with it.
    data.push({ ts: T0 - 1, instrument_id: a, value: 999 }, { ts: T0 + 2 * HOUR + 1, instrument_id: a, value: 999 });
    await bulk(ctx, plant.editor.token, data);
    // A later write wins, a null value is kept, a deleted range is gone.
    await bulk(ctx, plant.editor.token, [{ ts: T0, instrument_id: a, value: 7.25 }, { ts: T0 + 5, instrument_id: a, value: null }]);
    const deletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data?wait=true', token: plant.editor.token,
      payload: { instrument_ids: [b], start_time: new Date(T0 + 60_000).toISOString(), end_time: new Date(T0 + 120_000).toISOString() } });
    expect(deletion.statusCode).toBe(200);

    for (const id of plant.instrumentIds) {
      const readings = await allReadings(ctx, plant.viewer.token, id);
      expected.set(id, readings.filter(([ts]) => Date.parse(ts) >= T0 && Date.parse(ts) <= T0 + 2 * HOUR).map(([ts, value]) => [Date.parse(ts), value]));
    }
    expect(expected.get(a)!.find(([ms]) => ms === T0)![1]).toBe(7.25);
    expect(expected.get(a)!.find(([ms]) => ms === T0 + 5)![1]).toBeNull();
    expect(expected.get(b)!.some(([ms]) => ms >= T0 + 60_000 && ms <= T0 + 120_000)).toBe(false);
  }, 120_000);

  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('writes CSV long: one row per reading as the read endpoints read them, elapsed seconds, shortest round-trip values', async () => {
    const { plant, unitOperationId } = seeded;
    const response = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-long' });
    expect(response.status, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="unit-operation-\d+-\d{8}T\d{6}-long\.csv"$/);
    const [header, ...rows] = csv(response.body);
    expect(header).toEqual(['timestamp', 'elapsed_s', 'instrument', 'instrument_id', 'unit', 'value', 'quality', 'historical']);
    const total = [...expected.values()].reduce((sum, list) => sum + list.length, 0);
    expect(rows).toHaveLength(total);
    expect(response.headers['x-export-points']).toBe(String(total));
    // Time order, then instrument.
    const keys = rows.map((row) => [Date.parse(row[0]!), Number(row[3])] as const);
    expect(keys).toEqual([...keys].sort((x, y) => x[0] - y[0] || x[1] - y[1]));
    for (const row of rows) {
      const ms = Date.parse(row[0]!);
      expect(row[0]).toBe(new Date(ms).toISOString());
      expect(row[1]).toBe(String((ms - T0) / 1000));
      const value = expected.get(Number(row[3]))!.find(([at]) => at === ms)![1];
      expect(row[5]).toBe(value === null ? '' : String(value));
    }
    const awkward = rows.find((row) => row[5] === '5e-324' || row[5] === String(5e-324 * 5));
    expect(awkward).toBeDefined();
    // Formula-like text is neutralised; negative numbers stay numbers.
    expect(response.body).toContain(`,'@SUM(A1:A9),${plant.instrumentIds[2]},mg/L,`);
    expect(rows.some((row) => row[5]!.startsWith('-'))).toBe(true);
  });

  it('writes CSV wide: a column per instrument titled name [unit], empty cells where an instrument has no reading', async () => {
    const { plant, unitOperationId } = seeded;
    const response = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide' });
    expect(response.status).toBe(200);
    const [header, ...rows] = csv(response.body);
    const { rows: names } = await ctx.deps.pg.query('SELECT id, name, unit FROM instruments WHERE id = ANY($1::bigint[]) ORDER BY id', [plant.instrumentIds]);
    expect(header).toEqual(['timestamp', 'elapsed_s', ...names.map((row) => {
      const title = `${row.name} [${row.unit}]`;
      return title.startsWith('@') ? `'${title}` : title;
    })]);
    const times = new Set([...expected.values()].flatMap((list) => list.map(([ms]) => ms)));
    expect(rows).toHaveLength(times.size);
    for (const row of rows.slice(0, 50)) {
      const ms = Date.parse(row[0]!);
      plant.instrumentIds.forEach((id, index) => {
        const reading = expected.get(id)!.find(([at]) => at === ms);
        expect(row[2 + index]).toBe(reading && reading[1] !== null ? String(reading[1]) : '');
      });
    }
    const withoutElapsed = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide', elapsed: 'false' });
    expect(csv(withoutElapsed.body)[0]![1]).not.toBe('elapsed_s');
  });

  it('round trip: CSV wide uploaded into a fresh unit operation gives the same points, bit for bit', async () => {
    const { plant, unitOperationId, runId } = seeded;
    const wide = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide' });
    const header = csv(wide.body)[0]!;
    const fresh = await newEquipment(ctx, plant.organizationId, 3);
    const target = await unitOperationOn(ctx, plant.organizationId, fresh.equipmentId, runId, T0, T0 + 2 * HOUR);
    // The mapping names columns as the upload reads headers (it drops quotes, the neutralising one too).
    const mapping = { timestamp_column: 'timestamp', columns: sanitizeHeaders(header).slice(2).map((column, index) => ({ column, instrument_id: fresh.instrumentIds[index] })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'export.csv', content: wide.raw });
    const upload = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${target}/csv-uploads?wait=true`, token: plant.editor.token, headers: { 'content-type': contentType }, payload: body });
    expect(upload.statusCode, upload.body).toBe(200);
    for (const [index, id] of plant.instrumentIds.entries()) {
      const original = expected.get(id)!.filter(([, value]) => value !== null); // an empty cell is no reading
      const copied = (await allReadings(ctx, plant.viewer.token, fresh.instrumentIds[index]!)).map(([ts, value]) => [Date.parse(ts), value] as const);
      expect(copied.map(([ms]) => ms)).toEqual(original.map(([ms]) => ms));
      copied.forEach(([, value], position) => expect(Object.is(value, original[position]![1]), `${value} vs ${original[position]![1]}`).toBe(true));
    }
  });

  it('round trip: CSV long posted through the bulk endpoint gives the same points, bit for bit, nulls included', async () => {
    const { plant, unitOperationId } = seeded;
    const long = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-long' });
    const fresh = await newEquipment(ctx, plant.organizationId, 3);
    const idMap = new Map(plant.instrumentIds.map((id, index) => [String(id), fresh.instrumentIds[index]!]));
    const data = csv(long.body).slice(1).map((row) => ({ ts: row[0], instrument_id: idMap.get(row[3]!), value: row[5] === '' ? null : Number(row[5]) }));
    await bulk(ctx, plant.editor.token, data);
    for (const [index, id] of plant.instrumentIds.entries()) {
      const original = expected.get(id)!;
      const copied = (await allReadings(ctx, plant.viewer.token, fresh.instrumentIds[index]!)).map(([ts, value]) => [Date.parse(ts), value] as const);
      expect(copied.map(([ms]) => ms)).toEqual(original.map(([ms]) => ms));
      copied.forEach(([, value], position) => expect(Object.is(value, original[position]![1])).toBe(true));
    }
  });

  it('gives back the microseconds, quality codes and historical flags a post carried: CSV long and wide, and CSV long posted again stores them again', async () => {
    const { plant } = seeded;
    const source = await newEquipment(ctx, plant.organizationId, 2);
    const [a, b] = source.instrumentIds as [number, number];
    const at = T0 + 6 * HOUR;
    await bulk(ctx, plant.editor.token, [
      { ts: new Date(at).toISOString().replace('.000Z', '.000123Z'), instrument_id: a, value: 1.5, quality: 3_221_225_472 },
      { ts: new Date(at).toISOString().replace('.000Z', '.000456Z'), instrument_id: b, value: 2.5, historical: true },
      { ts: new Date(at + 1).toISOString(), instrument_id: a, value: null, quality: 0, historical: true },
    ]);
    const range = { instrument_ids: `${a},${b}`, start_time: new Date(at).toISOString(), end_time: new Date(at + 1000).toISOString() };
    const long = await exportText(ctx, plant.editor.token, { ...range, format: 'csv-long' });
    expect(long.status, long.body).toBe(200);
    const rows = csv(long.body).slice(1);
    const stamp = (ms: number, micros: string) => new Date(ms).toISOString().replace('Z', `${micros}Z`);
    expect(rows.map((row) => [row[0], row[1], row[3], row[5], row[6], row[7]])).toEqual([
      [stamp(at, '123'), '0.000123', String(a), '1.5', '3221225472', ''],
      [stamp(at, '456'), '0.000456', String(b), '2.5', '', 'true'],
      [stamp(at + 1, ''), '0.001', String(a), '', '0', 'true'],
    ]);
    // Wide: a row per time to the microsecond (a and b share the millisecond, not the microsecond).
    const wide = await exportText(ctx, plant.editor.token, { ...range, format: 'csv-wide' });
    expect(csv(wide.body).slice(1).map((row) => row.slice(0, 2))).toEqual([[stamp(at, '123'), '0.000123'], [stamp(at, '456'), '0.000456'], [stamp(at + 1, ''), '0.001']]);
    // Posted again as it was exported, into fresh instruments: the same readings, details included.
    const copy = await newEquipment(ctx, plant.organizationId, 2);
    const idMap = new Map([[String(a), copy.instrumentIds[0]!], [String(b), copy.instrumentIds[1]!]]);
    await bulk(ctx, plant.editor.token, rows.map((row) => ({
      ts: row[0], instrument_id: idMap.get(row[3]!), value: row[5] === '' ? null : Number(row[5]),
      ...(row[6] === '' ? {} : { quality: Number(row[6]) }), ...(row[7] === 'true' ? { historical: true } : {}),
    })));
    const again = await exportText(ctx, plant.editor.token, { ...range, instrument_ids: copy.instrumentIds.join(','), format: 'csv-long' });
    expect(csv(again.body).slice(1).map((row) => [row[0], row[5], row[6], row[7]])).toEqual(rows.map((row) => [row[0], row[5], row[6], row[7]]));
  });

  it('writes XLSX with a metadata sheet and a sheet per unit operation, read back with the same library', async () => {
    const { plant, unitOperationId } = seeded;
    const response = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'xlsx' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(response.raw as unknown as ArrayBuffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Metadata', `${unitOperationId} fermentation`]);
    const metadata = workbook.getWorksheet('Metadata')!;
    expect(metadata.getCell('A2').value).toBe('Exported by');
    expect(metadata.getCell('B2').value).toBe(plant.editor.email);
    const sheet = workbook.getWorksheet(`${unitOperationId} fermentation`)!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    expect(header[0]).toBe('timestamp');
    expect(header[4]).toBe('@SUM(A1:A9) [mg/L]');
    const times = [...new Set([...expected.values()].flatMap((list) => list.map(([ms]) => ms)))].sort((x, y) => x - y);
    expect(sheet.rowCount).toBe(times.length + 1);
    for (let index = 0; index < times.length; index += 1) {
      const row = sheet.getRow(index + 2);
      expect(Math.round((row.getCell(1).value as Date).getTime())).toBe(times[index]);
      expect(row.getCell(2).value).toBe((times[index]! - T0) / 1000);
      plant.instrumentIds.forEach((id, position) => {
        const reading = expected.get(id)!.find(([at]) => at === times[index]);
        const cell = row.getCell(3 + position).value;
        expect(cell ?? null).toBe(reading ? reading[1] : null);
      });
    }
  });

  it('downsamples to the chosen bucket: avg, min and max as the read endpoint computes them', async () => {
    const { plant, unitOperationId } = seeded;
    const response = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-long', bucket: '10m' });
    expect(response.status).toBe(200);
    const [header, ...rows] = csv(response.body);
    expect(header).toEqual(['timestamp', 'elapsed_s', 'instrument', 'instrument_id', 'unit', 'avg', 'min', 'max']);
    const a = plant.instrumentIds[0]!;
    const read = await readSeries(ctx, plant.viewer.token, { instrument_id: a, start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 2 * HOUR).toISOString(), bucket: '10m' });
    const ours = rows.filter((row) => row[3] === String(a));
    expect(ours.map((row) => row[0])).toEqual(read.map((reading) => reading.ts));
    ours.forEach((row, index) => {
      // The read endpoint sums rollups, the export averages points: the same figure up to rounding.
      expect(Math.abs(Number(row[5]) - read[index]!.value!)).toBeLessThanOrEqual(Math.abs(read[index]!.value!) * 1e-12);
      expect(Number(row[6])).toBe(read[index]!.min);
      expect(Number(row[7])).toBe(read[index]!.max);
    });
    const wide = await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide', bucket: '1h' });
    const [wideHeader, ...wideRows] = csv(wide.body);
    expect(wideHeader!.slice(2, 5)).toEqual(['avg', 'min', 'max'].map((figure) => `${wideHeader![2]!.replace(/ avg$/, '')} ${figure}`));
    expect(wideRows).toHaveLength(1); // every reading lies in the first hour
  });

  it('exports a run (a sheet per unit operation) and an instrument selection over a range', async () => {
    const { plant, runId } = seeded;
    const run = await exportText(ctx, plant.editor.token, { run_id: runId, format: 'xlsx' });
    expect(run.status).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(run.raw as unknown as ArrayBuffer);
    expect(workbook.worksheets.length).toBeGreaterThanOrEqual(2);

    const [a] = plant.instrumentIds as [number];
    const range = await exportText(ctx, plant.editor.token, {
      instrument_ids: String(a), start_time: new Date(T0 - 10).toISOString(), end_time: new Date(T0 + 60_000).toISOString(), format: 'csv-long',
    });
    const rows = csv(range.body).slice(1);
    // The point before the unit operation's window is in the instrument's range.
    expect(rows[0]![1]).toBe('0.009');
    expect(rows[0]![5]).toBe('999');
    expect(rows.every((row) => row[3] === String(a))).toBe(true);
  });

  it('refuses bad input with 400, viewers with 403, foreign ids with 404, and answers too large an export with an export job (202)', async () => {
    const { plant, unitOperationId, runId } = seeded;
    const bad: Array<Record<string, string | number>> = [
      { unit_operation_id: unitOperationId },
      { unit_operation_id: unitOperationId, format: 'parquet' },
      { format: 'csv-long' },
      { unit_operation_id: unitOperationId, run_id: runId, format: 'csv-long' },
      { unit_operation_id: unitOperationId, format: 'csv-long', bucket: 'ten' },
      { instrument_ids: '1,x', format: 'csv-long' },
      { unit_operation_id: unitOperationId, format: 'csv-long', start_time: '2024-02-01T00:00:00Z', end_time: '2024-01-01T00:00:00Z' },
    ];
    for (const query of bad) {
      const response = await exportText(ctx, plant.editor.token, query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ error: expect.any(String) });
    }
    const viewer = await exportText(ctx, plant.viewer.token, { unit_operation_id: unitOperationId, format: 'csv-long' });
    expect(viewer.status).toBe(403);

    const other = await createPlant(ctx, 1);
    const foreign: Array<Record<string, string | number>> = [{ unit_operation_id: unitOperationId }, { run_id: runId }, { instrument_ids: String(plant.instrumentIds[0]) }];
    for (const query of foreign) {
      const response = await exportText(ctx, other.editor.token, { ...query, format: 'csv-long' });
      expect(response.status, JSON.stringify(query)).toBe(404);
      expect(JSON.parse(response.body)).toEqual({ error: expect.any(String) });
    }

    const bigger = await newEquipment(ctx, plant.organizationId, 1);
    await bulk(ctx, plant.editor.token, Array.from({ length: 2001 }, (_, index) => ({ ts: T0 + index, instrument_id: bigger.instrumentIds[0], value: index })));
    const tooLarge = await exportText(ctx, plant.editor.token, { instrument_ids: String(bigger.instrumentIds[0]), format: 'csv-long' });
    expect(tooLarge.status).toBe(202);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ kind: 'time_series', state: 'queued', progress: { points_total: 2001, points_done: 0 }, download_url: null });
    expect(tooLarge.headers.location).toBe(`/api/v1/export-jobs/${JSON.parse(tooLarge.body).id}`);
    const narrower = await exportText(ctx, plant.editor.token, { instrument_ids: String(bigger.instrumentIds[0]), format: 'csv-long', start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 999).toISOString() });
    expect(narrower.status).toBe(200);
  });

  it('audits every export: who, what and how many rows', async () => {
    const { plant, unitOperationId } = seeded;
    await exportText(ctx, plant.editor.token, { unit_operation_id: unitOperationId, format: 'csv-wide', bucket: '1h' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const events = (await pendingAuditEvents(ctx)) as Array<Record<string, unknown>>;
    const last = events.filter((event) => event.event_type === 'time_series.exported').at(-1)!;
    expect(last).toMatchObject({
      action: 'export', resource_type: 'unit_operation', resource_id: String(unitOperationId), user_id: plant.editor.id, success: true,
      changes: { after: { format: 'csv-wide', bucket: '1h', rows: 1, complete: true, instrument_ids: plant.instrumentIds, unit_operation_ids: [unitOperationId] } },
    });
  });
});
