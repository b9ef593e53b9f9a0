/**
 * Hostile CSVs through the real upload (app.inject) and the worker: a wide header or a long line is
 * refused at upload time with a 400 naming the limit, leaving no file and no job; what only the whole
 * file shows (a quoted field running over lines past the limit) fails the job naming it, writing
 * nothing; shapes within the limits (a wide header over short rows, thousands of repeated names)
 * are read at the cost of their rows.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CSV_LIMITS } from '@bioprocess/shared/csv/index';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, startWorker, type JobStatus } from '../support/ingest.ts';
import { addInstruments, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import {
  giantLine, giantQuotedField, longSecondLine, repeatedHeaderNames, wideHeaderShortRows, type AdversarialCsv,
} from '../../../shared/test/support/adversarial-csv.ts';

const LINE_LIMIT = 'is longer than 1 MiB; a line, or a quoted field running over several lines, may have at most 1,048,576 bytes';

describe('hostile CSV uploads', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let sensor: number;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
  });
  beforeEach(async () => {
    plant = await createPlant(ctx, 0);
    [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1) as [number];
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  async function upload(csv: AdversarialCsv, wait = true): Promise<{ statusCode: number; job: JobStatus & { error?: string } }> {
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'hostile.csv', content: csv.text });
    const response = await ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads${wait ? '?wait=true' : ''}`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
    return { statusCode: response.statusCode, job: response.json() };
  }

  const jobCount = async () => Number((await ctx.deps.pg.query('SELECT count(*) AS n FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId])).rows[0].n);
  const spooledFiles = () => readdirSync(ctx.deps.env.UPLOAD_DIR, { withFileTypes: true }).filter((entry) => entry.isFile()).length;

  it('refuses a header over the column limit and lines over the line limit with a 400 naming the limit: no job, no file', async () => {
    const cases: Array<[AdversarialCsv, string]> = [
      [wideHeaderShortRows(CSV_LIMITS.defaultMaxColumns + 1, 10), 'The header has 10,001 columns; at most 10,000 columns are allowed'],
      [longSecondLine(CSV_LIMITS.defaultMaxLineBytes + 10), `Line 2 ${LINE_LIMIT}`],
      [giantLine(3 * 1024 * 1024), `Line 1 ${LINE_LIMIT}`],
    ];
    for (const [csv, message] of cases) {
      const { statusCode, job } = await upload(csv, false);
      expect(statusCode, csv.name).toBe(400);
      expect(job.error).toBe(message);
    }
    expect(await jobCount()).toBe(0);
    expect(spooledFiles()).toBe(0);
  });

  it('fails the job of a quoted field running over lines past the limit, naming its line, writing nothing', async () => {
    const { statusCode, job } = await upload(giantQuotedField(CSV_LIMITS.defaultMaxLineBytes + 10));
    expect(statusCode).toBe(422);
    expect(job.error).toBe(`Line 2 ${LINE_LIMIT}`);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: sensor })).toEqual([]);
  });

  it('reads a wide header over short rows, every row once', async () => {
    const wide = await upload(wideHeaderShortRows(9_000, 20_000));
    expect(wide.statusCode).toBe(200);
    expect(wide.job.result).toMatchObject({ rows_read: 20_000, points_written: 20_000 });
  });

  it('reads 8,000 repeats of one header name', async () => {
    const repeated = await upload(repeatedHeaderNames(8_000));
    expect(repeated.statusCode).toBe(200);
    expect(repeated.job.result).toMatchObject({ rows_read: 1, points_written: 1 });
  });
});

describe('hostile CSV uploads under configured limits', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000', CSV_MAX_COLUMNS: '40', CSV_MAX_LINE_BYTES: '4096' });
    worker = startWorker(ctx);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('names CSV_MAX_COLUMNS and CSV_MAX_LINE_BYTES at upload, and in the job for a quoted field over lines', async () => {
    const plant = await createPlant(ctx, 0);
    const [sensor] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    const send = async (csv: AdversarialCsv) => {
      const unitOperation = await createUnitOperation(ctx, plant);
      const mapping = { timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] };
      const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'hostile.csv', content: csv.text });
      const response = await ctx.request({
        method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads?wait=true`, token: plant.editor.token,
        headers: { 'content-type': contentType }, payload: body,
      });
      return { statusCode: response.statusCode, error: (response.json() as { error?: string }).error };
    };
    expect(await send(wideHeaderShortRows(41, 3))).toEqual({ statusCode: 400, error: 'The header has 41 columns; at most 40 columns are allowed' });
    const lineLimit = 'is longer than 4 KiB; a line, or a quoted field running over several lines, may have at most 4,096 bytes';
    expect(await send(longSecondLine(5_000))).toEqual({ statusCode: 400, error: `Line 2 ${lineLimit}` });
    expect(await send(giantQuotedField(5_000))).toEqual({ statusCode: 422, error: `Line 2 ${lineLimit}` });
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: sensor! })).toEqual([]);
  });
});
