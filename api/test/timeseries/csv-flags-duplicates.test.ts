/**
 * Flagged cells and duplicate keys, through the upload route and a running
 * ingest-worker, with the real exports: the Nova BioProfile FLEX2 file (`10.00%` in a density
 * column), an excerpt of the Cedex Bio HT report (`< 0.4000` below-range results; the report has no
 * header row, so the test gives the excerpt one, keeping the records' own cells), and the Cedex HiRes
 * file (eight counts at one draw time). What is stored is read back from ClickHouse, never assumed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, realExportPath, startWorker, type JobStatus } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

interface Upload { statusCode: number; body: JobStatus & { error?: string } }

async function upload(ctx: TestContext, token: string, unitOperationId: number, mapping: unknown, file: { name: string; content: Buffer | string }, fields: Record<string, string> = {}): Promise<Upload> {
  const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping), ...fields }, file);
  const response = await ctx.request({
    method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads?wait=true`, token,
    headers: { 'content-type': contentType }, payload: body,
  });
  return { statusCode: response.statusCode, body: response.json() };
}

async function latestJob(ctx: TestContext, token: string): Promise<JobStatus & { error: string | null }> {
  const { rows } = await ctx.deps.pg.query(`SELECT id FROM ingest_jobs WHERE kind = 'csv' ORDER BY created_at DESC LIMIT 1`);
  const response = await ctx.request({ method: 'GET', url: `/api/v1/ingest-jobs/${rows[0].id}`, token });
  return response.json();
}

/** Live readings of an organisation in ClickHouse: one per key (the highest version), tombstones left out. */
async function storedPoints(ctx: TestContext, organizationId: number): Promise<number> {
  const result = await ctx.deps.clickhouse.query({
    query: `SELECT count() AS n FROM (
      SELECT instrument_id, ts, argMax(is_deleted, version) AS deleted FROM points WHERE organization_id = ${Number(organizationId)} GROUP BY instrument_id, ts
    ) WHERE deleted = 0`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string }>();
  return Number(row!.n);
}

const NOVA = 'SampleResultsDEVICE1232021-02-18_104838.csv';
const CEDEX_HIRES = 'roche_cedex_hires_example_1.csv';
const CEDEX_BIOHT = 'roche_cedex_bioht_example03.txt';

/**
 * The Cedex Bio HT records of two tests (acetate AC2B, glutamine GLN2B), each cell as the file wrote it
 * (right-aligned values, `< 0.4000` flags), under a header the report itself does not have.
 */
function cedexBioHtExcerpt(): { csv: string; glucose: string[]; ammonia: string[] } {
  const records = readFileSync(realExportPath(CEDEX_BIOHT), 'latin1').split('\n').slice(1).filter((line) => line.startsWith('40\t'));
  const picked = records.map((line) => line.split('\t')).filter((cells) => cells[6] === 'AC2B' || cells[6] === 'GLN2B');
  const lines = picked.map((cells) => [cells[1], cells[2], cells[6], cells[8], cells[10]].join('\t'));
  return {
    csv: ['time\tsample\ttest\tunit\tvalue', ...lines].join('\n'),
    glucose: picked.filter((cells) => cells[6] === 'AC2B').map((cells) => cells[10]!),
    ammonia: picked.filter((cells) => cells[6] === 'GLN2B').map((cells) => cells[10]!),
  };
}

describe('flagged cells and duplicate keys', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
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

  it("stores the Nova FLEX2 file's '10.00%' density as missing, counts it with its text, and reads a percent in a % column as its number", async () => {
    const [viable, sparging] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const { statusCode, body } = await upload(ctx, plant.editor.token, unitOperation, {
      // The header sanitiser drops '&' (the name the wizard shows and sends).
      timestamp_column: 'Date  Time', columns: [{ column: 'Viable Density', instrument_id: viable }, { column: 'Sparging O2%', instrument_id: sparging }],
    }, { name: NOVA, content: readFileSync(realExportPath(NOVA)) });
    expect(body.error ?? null).toBeNull();
    expect(statusCode).toBe(200);
    expect(body.result).toMatchObject({
      flagged_cells: [{ column: 'Viable Density', key: null, count: 1, examples: ['10.00%'] }],
      duplicates: { policy: 'refuse', keys: 0, rows_dropped: 0 },
    });
    expect(body.result!.flagged_message).toContain("Viable Density: 1 ('10.00%')");
    // Viable Density: two Default samples wrote a density (0.00 and the flag), the Simple ones none.
    const density = await readSeries(ctx, plant.viewer.token, { instrument_id: viable! });
    expect(density.map((reading) => [reading.ts, reading.value])).toEqual([['2021-02-18T10:28:04.000Z', 0]]);
    const oxygen = await readSeries(ctx, plant.viewer.token, { instrument_id: sparging! });
    expect(oxygen.map((reading) => reading.value)).toEqual([20.9, 20.9, 20.9, 20.9, 20.9, 20.9]);
    expect(body.result!.points_written).toBe(7);
    expect(await storedPoints(ctx, plant.organizationId)).toBe(7);
  });

  it("keeps the Cedex Bio HT's below-range results ('< 0.4000') as missing values, counted per key with their text", async () => {
    const excerpt = cedexBioHtExcerpt();
    const flaggedGlucose = excerpt.glucose.filter((value) => value.trim().startsWith('<'));
    const flaggedAmmonia = excerpt.ammonia.filter((value) => value.trim().startsWith('<'));
    expect(flaggedGlucose.length + flaggedAmmonia.length).toBeGreaterThan(0);
    const [glucose, ammonia] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const { statusCode, body } = await upload(ctx, plant.editor.token, unitOperation, {
      timestamp_column: 'time', time_zone: 'UTC', key_column: 'test',
      columns: [{ column: 'value', key: 'AC2B', instrument_id: glucose }, { column: 'value', key: 'GLN2B', instrument_id: ammonia }],
    }, { name: 'cedex-bioht-excerpt.tsv.csv', content: excerpt.csv }, { duplicates: 'keep-last' });
    expect(statusCode).toBe(200);
    const flagged = body.result!.flagged_cells as Array<{ key: string; count: number; examples: string[] }>;
    const byKey = new Map(flagged.map((entry) => [entry.key, entry]));
    expect(byKey.get('AC2B')?.count ?? 0).toBe(flaggedGlucose.length);
    expect(byKey.get('GLN2B')?.count ?? 0).toBe(flaggedAmmonia.length);
    for (const entry of flagged) {
      expect(entry.examples.length).toBeLessThanOrEqual(5);
      for (const example of entry.examples) expect(example).toMatch(/^< \d/);
    }
    const written = body.result!.points_written as number;
    const dropped = (body.result!.duplicates as { rows_dropped: number }).rows_dropped;
    expect(written).toBe(excerpt.glucose.length + excerpt.ammonia.length - flaggedGlucose.length - flaggedAmmonia.length - dropped);
    expect(await storedPoints(ctx, plant.organizationId)).toBe(written);
  });

  describe('the Cedex HiRes file: eight counts at one draw time', () => {
    const file = () => ({ name: CEDEX_HIRES, content: readFileSync(realExportPath(CEDEX_HIRES)) });
    const mapping = (instrument: number) => ({ timestamp_column: 'Sample draw Time', time_zone: 'UTC', columns: [{ column: 'Viable Cell Conc.', instrument_id: instrument }] });
    /** The file's Viable Cell Conc. per data line (line 2 is the first row), read independently of the product. */
    const viableByLine = () => {
      const lines = readFileSync(realExportPath(CEDEX_HIRES), 'utf8').split('\n');
      const index = lines[0]!.split(',').indexOf('Viable Cell Conc.');
      return lines.slice(1).map((line) => Number(line.split(',')[index]));
    };

    it('is refused by default with a 422 naming the first and last line of the key and the count, writing nothing', async () => {
      const [counter] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, body } = await upload(ctx, plant.editor.token, unitOperation, mapping(counter!), file());
      expect(statusCode).toBe(422);
      expect(body.error).toContain("'Viable Cell Conc.' at 2019-06-17T08:34:01.000Z is on 8 rows, lines 2 to 9");
      expect(body.error).toContain('1 time(s) appear more than once');
      const job = await latestJob(ctx, plant.editor.token);
      expect(job.state).toBe('failed');
      expect(job.result).toMatchObject({
        duplicates: { policy: 'refuse', keys: 1, rows_dropped: 0, first: { instrument_id: counter, first_line: 2, last_line: 9, rows: 8 } },
      });
      expect(await storedPoints(ctx, plant.organizationId)).toBe(0);
    });

    it('keeps the first row when asked, and counts the seven it did not store', async () => {
      const [counter] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, body } = await upload(ctx, plant.editor.token, unitOperation, mapping(counter!), file(), { duplicates: 'keep-first' });
      expect(statusCode).toBe(200);
      expect(body.result).toMatchObject({ points_written: 1, duplicates: { policy: 'keep-first', keys: 1, rows_dropped: 7, first: { first_line: 2, last_line: 9 } } });
      expect(body.progress.points_written).toBe(1);
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: counter! });
      expect(readings.map((reading) => reading.value)).toEqual([viableByLine()[0]]);
      expect(await storedPoints(ctx, plant.organizationId)).toBe(1);
    });

    it('keeps the last row when asked', async () => {
      const [counter] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
      const unitOperation = await createUnitOperation(ctx, plant);
      const { statusCode, body } = await upload(ctx, plant.editor.token, unitOperation, mapping(counter!), file(), { duplicates: 'keep-last' });
      expect(statusCode).toBe(200);
      expect(body.result).toMatchObject({ points_written: 1, duplicates: { policy: 'keep-last', keys: 1, rows_dropped: 7 } });
      expect(body.result!.duplicates_message).toContain('the last row of each was kept');
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: counter! });
      expect(readings.map((reading) => reading.value)).toEqual([viableByLine()[7]]);
      expect(await storedPoints(ctx, plant.organizationId)).toBe(1);
    });
  });

  it('merges rows that share a minute: duplicates at the stored resolution, counted across a file with blank lines, by their file lines', async () => {
    const [sensor, other] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
    const unitOperation = await createUnitOperation(ctx, plant);
    const csv = ['time,a,b', '2024-03-01 10:00,1,10', '', '2024-03-01 10:01,2,20', '2024-03-01 10:01,3,', '2024-03-01 10:02,4,40', '2024-03-01 10:01,5,50'].join('\n');
    const refused = await upload(ctx, plant.editor.token, unitOperation,
      { timestamp_column: 'time', time_zone: 'UTC', columns: [{ column: 'a', instrument_id: sensor }, { column: 'b', instrument_id: other }] }, { name: 'minutes.csv', content: csv });
    expect(refused.statusCode).toBe(422);
    expect(refused.body.error).toContain('3 rows, lines 4 to 7');
    const kept = await upload(ctx, plant.editor.token, unitOperation,
      { timestamp_column: 'time', time_zone: 'UTC', columns: [{ column: 'a', instrument_id: sensor }, { column: 'b', instrument_id: other }] },
      { name: 'minutes.csv', content: csv }, { duplicates: 'keep-last' });
    expect(kept.statusCode).toBe(200);
    // a: 10:01 three times (2 not stored); b: 10:01 twice (one empty cell), 1 not stored.
    expect(kept.body.result).toMatchObject({ points_written: 6, duplicates: { keys: 2, rows_dropped: 3 } });
    expect(await storedPoints(ctx, plant.organizationId)).toBe(6);
    const a = await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! });
    expect(a.map((reading) => reading.value)).toEqual([1, 5, 4]);
  });

  it('stores the values the user names as missing (-9999, as BioLector writes for an unfitted channel) as missing, counted', async () => {
    const [co2] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const csv = ['time;CO2', '2019-07-12 16:55:17;-9999.00', '2019-07-12 17:05:17;0.41', '2019-07-12 17:15:17;-9999.00'].join('\n');
    const mapping = { timestamp_column: 'time', time_zone: 'UTC', columns: [{ column: 'CO2', instrument_id: co2 }] };
    const asNumbers = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'co2.csv', content: csv });
    expect(asNumbers.body.result).toMatchObject({ points_written: 3, flagged_cells: [] });
    const marked = await upload(ctx, plant.editor.token, unitOperation, { ...mapping, replace_existing: true }, { name: 'co2.csv', content: csv }, { missing_values: '["-9999"]' });
    expect(marked.statusCode).toBe(200);
    expect(marked.body.result).toMatchObject({ points_written: 1, flagged_cells: [{ column: 'CO2', count: 2, examples: ['-9999.00'] }] });
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: co2! });
    expect(readings.map((reading) => reading.value)).toEqual([0.41]);
  });

  it('answers a bad choice with a 400 naming it, before anything is queued', async () => {
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] };
    const bad = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'v.csv', content: 'time,v\n2024-01-01 00:00,1\n' }, { duplicates: 'keep-any' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body.error).toBe('duplicates must be one of refuse, keep-first, keep-last');
    const badMissing = await upload(ctx, plant.editor.token, unitOperation, mapping, { name: 'v.csv', content: 'time,v\n2024-01-01 00:00,1\n' }, { missing_values: '-9999' });
    expect(badMissing.statusCode).toBe(400);
    expect(badMissing.body.error).toContain('missing_values');
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM ingest_jobs WHERE organization_id = $1`, [plant.organizationId]);
    expect(rows[0].n).toBe(0);
  });
});
