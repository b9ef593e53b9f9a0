/**
 * Export jobs through the real HTTP server, PostgreSQL, Redis, ClickHouse and an in-process
 * export-worker: a time-series export above EXPORT_STREAM_MAX_POINTS becomes a job whose progress
 * streams as server-sent events and whose file, once ready, holds what the streamed export holds; roles
 * and organisations for status, events and download; expiry; a delivery that died mid-way (delivered
 * again, its part file never offered) and a job that used up its attempts or cannot succeed (failed
 * clearly, no file); every job audited.
 */
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { EXPORT_JOB_MAX_ATTEMPTS } from '@bioprocess/shared/queues';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import type { ExportWorker } from '../../src/exports/jobs/export-worker.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { followExportJob, startExportWorkerFor } from './job-support.ts';
import { createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 5, 1, 8);
const POINTS_PER_INSTRUMENT = 400;
const LIMIT = 500;

describe('export jobs', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let exporter: ExportWorker | null = null;
  let plant: Plant;
  let admin: TestUser;
  let unitOperationId: number;
  const url = () => `/api/v1/exports/time-series?unit_operation_id=${unitOperationId}&format=csv-long`;

  beforeAll(async () => {
    ctx = await createTestContext({ EXPORT_STREAM_MAX_POINTS: String(LIMIT), EXPORT_FILE_TTL_HOURS: '1' });
    ingest = startWorker(ctx);
    plant = await createPlant(ctx, 2);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    unitOperationId = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const data = plant.instrumentIds.flatMap((instrument) => Array.from({ length: POINTS_PER_INSTRUMENT }, (_, index) => ({ ts: T0 + index * 1000, instrument_id: instrument, value: index / 4 })));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(response.statusCode, response.body).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await exporter?.close();
    await ingest.close();
    await ctx.close();
  });

  const exportFiles = async () => (await readdir(ctx.env.EXPORT_DIR).catch(() => [] as string[])).sort();
  const row = async (id: string) => (await ctx.deps.pg.query('SELECT state, attempts, error, file_path FROM export_jobs WHERE id = $1', [id])).rows[0];
  async function requestJob(token = plant.editor.token): Promise<string> {
    const response = await ctx.request({ method: 'GET', url: url(), token });
    expect(response.statusCode, response.body).toBe(202);
    return response.json().id as string;
  }

  it('streams what fits, makes a job of what does not, and delivers its file with progress events', async () => {
    const total = POINTS_PER_INSTRUMENT * plant.instrumentIds.length;
    // Within the limit: streamed as before.
    const small = await ctx.request({ method: 'GET', url: `${url()}&end_time=${new Date(T0 + 99_000).toISOString()}`, token: plant.editor.token });
    expect(small.statusCode).toBe(200);
    expect(parse(small.body)).toHaveLength(1 + 200);

    const accepted = await ctx.request({ method: 'GET', url: url(), token: plant.editor.token });
    expect(accepted.statusCode).toBe(202);
    const job = accepted.json();
    expect(job).toMatchObject({ kind: 'time_series', state: 'queued', fraction: 0, progress: { points_total: total, points_done: 0 }, download_url: null });
    const early = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${job.id}/download`, token: plant.editor.token });
    expect(early.statusCode).toBe(409);
    expect(early.json()).toEqual({ error: 'The export is not ready yet.' });

    exporter = startExportWorkerFor(ctx);
    const statuses = await followExportJob(ctx, plant.editor.token, job.id);
    const last = statuses.at(-1)!;
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(last).toMatchObject({
      state: 'completed', fraction: 1, rows: total, progress: { points_total: total, points_done: total },
      download_url: `/api/v1/export-jobs/${job.id}/download`, file_name: expect.stringMatching(/^unit-operation-\d+-\d{8}T\d{6}-long\.csv$/),
    });
    // Fractions never go back.
    const fractions = statuses.map((status) => status.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));

    const file = await ctx.request({ method: 'GET', url: last.download_url!, token: plant.editor.token });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.headers['content-disposition']).toBe(`attachment; filename="${last.file_name}"`);
    const [header, ...rows] = parse(file.body) as string[][];
    expect(header).toEqual(['timestamp', 'elapsed_s', 'instrument', 'instrument_id', 'unit', 'value', 'quality', 'historical']);
    expect(rows).toHaveLength(total);
    // The file holds exactly what the streamed export holds (its first part, streamed, compared line by line).
    expect(file.body.startsWith(small.body)).toBe(true);
    expect(Number(file.headers['content-length'])).toBe(file.rawPayload.length);
    expect(await exportFiles()).toEqual([`${job.id}.csv`]);

    const events = (await pendingAuditEvents(ctx)) as Array<Record<string, unknown>>;
    expect(events.find((event) => event.event_id === job.id)).toMatchObject({
      event_type: 'time_series.exported', action: 'export', resource_type: 'unit_operation', resource_id: String(unitOperationId),
      user_id: plant.editor.id, success: true,
      changes: { after: { export_job_id: job.id, format: 'csv-long', points: total, rows: total, complete: true, instrument_ids: plant.instrumentIds } },
    });
  });

  it('shows status, events and files to editors and admins of the organisation only', async () => {
    const id = await requestJob();
    const done = (await followExportJob(ctx, admin.token, id)).at(-1)!;
    expect(done.state).toBe('completed');
    for (const suffix of ['', '/events', '/download']) {
      const viewer = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}${suffix}`, token: plant.viewer.token });
      expect(viewer.statusCode, suffix).toBe(403);
      expect(viewer.json()).toEqual({ error: expect.any(String) });
    }
    const other = await createPlant(ctx, 1);
    for (const suffix of ['', '/events', '/download']) {
      const foreign = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}${suffix}`, token: other.editor.token });
      expect(foreign.statusCode, suffix).toBe(404);
      expect(foreign.json()).toEqual({ error: 'Export not found' });
    }
    const unknown = await ctx.request({ method: 'GET', url: '/api/v1/export-jobs/not-a-job', token: plant.editor.token });
    expect(unknown.statusCode).toBe(404);
    const mine = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}/download`, token: admin.token });
    expect(mine.statusCode).toBe(200);
  });

  it('removes a file once it expired; its download then answers 410', async () => {
    const id = await requestJob();
    expect((await followExportJob(ctx, plant.editor.token, id)).at(-1)!.state).toBe('completed');
    const { file_path: file } = await row(id);
    expect(await exportFiles()).toContain(path.basename(file));
    await ctx.deps.pg.query("UPDATE export_jobs SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    const outcome = await exporter!.sweep();
    expect(outcome.expired).toBe(1);
    expect((await row(id)).state).toBe('expired');
    expect(await exportFiles()).not.toContain(path.basename(file));
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}/download`, token: plant.editor.token });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error).toMatch(/expired/);
    const status = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}`, token: plant.editor.token });
    expect(status.json()).toMatchObject({ state: 'expired', download_url: null });
  });

  it('a delivery that died mid-way is delivered again; its half file is never offered', async () => {
    await exporter!.close();
    exporter = null;
    const id = await requestJob();
    // What a worker killed with -9 leaves: the row running with one attempt spent, a half-written part
    // file, and (Redis restarted empty) no delivery at all.
    await ctx.deps.queues.export.remove(id);
    await ctx.deps.pg.query("UPDATE export_jobs SET state = 'running', attempts = 1, updated_at = now() - interval '1 hour' WHERE id = $1", [id]);
    await writeFile(path.join(ctx.env.EXPORT_DIR, `${id}.part`), 'timestamp,elapsed_s,instrument,instr');
    const half = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}/download`, token: plant.editor.token });
    expect(half.statusCode).toBe(409);

    // The sweep, run when the worker starts, finds the job no worker drives and delivers it again.
    exporter = startExportWorkerFor(ctx);
    const last = (await followExportJob(ctx, plant.editor.token, id)).at(-1)!;
    expect(last.state).toBe('completed');
    expect((await row(id)).attempts).toBe(2);
    const file = await ctx.request({ method: 'GET', url: last.download_url!, token: plant.editor.token });
    expect(parse(file.body)).toHaveLength(1 + POINTS_PER_INSTRUMENT * plant.instrumentIds.length);
    expect((await exportFiles()).filter((name) => name.startsWith(id))).toEqual([`${id}.csv`]);
  });

  it('a job that used up its attempts fails with a clear message, leaves no file, and is audited', async () => {
    await exporter!.close();
    exporter = null;
    const id = await requestJob();
    await ctx.deps.queues.export.remove(id);
    await ctx.deps.pg.query(
      "UPDATE export_jobs SET state = 'running', attempts = $2, error = 'connect ECONNREFUSED 127.0.0.1:8123', updated_at = now() - interval '1 hour' WHERE id = $1",
      [id, EXPORT_JOB_MAX_ATTEMPTS]);
    await writeFile(path.join(ctx.env.EXPORT_DIR, `${id}.part`), 'timestamp,');
    exporter = startExportWorkerFor(ctx);
    await exporter.sweep();
    const status = (await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}`, token: plant.editor.token })).json();
    expect(status).toMatchObject({ state: 'failed', download_url: null, error: `The export failed after ${EXPORT_JOB_MAX_ATTEMPTS} attempts: connect ECONNREFUSED 127.0.0.1:8123. Export again or narrow the export.` });
    const download = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${id}/download`, token: plant.editor.token });
    expect(download.statusCode).toBe(409);
    expect(download.json().error).toBe(status.error);
    expect((await exportFiles()).filter((name) => name.startsWith(id))).toEqual([]);
    const events = (await pendingAuditEvents(ctx)) as Array<Record<string, unknown>>;
    expect(events.find((event) => event.event_id === id)).toMatchObject({ event_type: 'time_series.exported', success: false, changes: { after: { complete: false } } });
  });

  it('a job that cannot succeed (its unit operation was deleted meanwhile) fails at once with the reason', async () => {
    await exporter!.close();
    exporter = null;
    const doomed = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const response = await ctx.request({ method: 'GET', url: `/api/v1/exports/time-series?unit_operation_id=${doomed}&format=xlsx`, token: plant.editor.token });
    expect(response.statusCode).toBe(202);
    const id = response.json().id as string;
    await ctx.deps.pg.query('DELETE FROM unit_operations WHERE id = $1', [doomed]);
    exporter = startExportWorkerFor(ctx);
    const last = (await followExportJob(ctx, plant.editor.token, id)).at(-1)!;
    expect(last).toMatchObject({ state: 'failed', error: 'The export failed: Unit operation not found', download_url: null });
    expect((await row(id)).attempts).toBe(1);
    expect((await exportFiles()).filter((name) => name.startsWith(id))).toEqual([]);
  });
});
