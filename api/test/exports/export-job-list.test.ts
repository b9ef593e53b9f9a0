/**
 * The list of recent export jobs and the limit on an organisation's unfinished ones, through the real
 * HTTP server, PostgreSQL, Redis, ClickHouse and an in-process export-worker: an admin lists the
 * organisation's jobs (the archive included), an editor the time-series exports they asked for, another
 * organisation none of them; a job's progress and download are in the list after the fact (what a page
 * reloaded mid-export shows); at most EXPORT_MAX_ACTIVE_JOBS queued or running per organisation, even
 * when the requests arrive together, and the place is free again once one finishes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportJobStatus } from '@bioprocess/shared/exports';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import type { ExportWorker } from '../../src/exports/jobs/export-worker.ts';
import { tooManyExportsMessage } from '../../src/exports/jobs/export-jobs.ts';
import { followExportJob, startExportWorkerFor } from './job-support.ts';
import { createApiKey, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 6, 1, 8);
const MAX_ACTIVE = 2;

describe('export job list and limits', () => {
  let ctx: TestContext;
  let ingest: IngestWorker;
  let exporter: ExportWorker | null = null;
  let plant: Plant;
  let other: Plant;
  let admin: TestUser;
  let secondEditor: TestUser;
  let unitOperationId: number;
  let otherUnitOperationId: number;
  const seriesUrl = (id: number) => `/api/v1/exports/time-series?unit_operation_id=${id}&format=csv-long`;

  async function seed(target: Plant): Promise<number> {
    const id = await createUnitOperation(ctx, target, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const data = target.instrumentIds.flatMap((instrument) => Array.from({ length: 60 }, (_, index) => ({ ts: T0 + index * 1000, instrument_id: instrument, value: index })));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: target.editor.token, payload: { data } });
    expect(response.statusCode, response.body).toBe(200);
    return id;
  }

  beforeAll(async () => {
    // Every time-series export of these plants (120 points) becomes a job.
    ctx = await createTestContext({ EXPORT_STREAM_MAX_POINTS: '50', EXPORT_MAX_ACTIVE_JOBS: String(MAX_ACTIVE) });
    ingest = startWorker(ctx);
    plant = await createPlant(ctx, 2);
    other = await createPlant(ctx, 2);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    secondEditor = await ctx.createUser({ organizationId: plant.organizationId, role: 'editor' });
    unitOperationId = await seed(plant);
    otherUnitOperationId = await seed(other);
  }, 60_000);
  afterAll(async () => {
    await exporter?.close();
    await ingest.close();
    await ctx.close();
  });

  const list = async (token: string, query = ''): Promise<ExportJobStatus[]> => {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs${query}`, token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as ExportJobStatus[];
  };
  async function accepted(token: string, url: string, method: 'GET' | 'POST' = 'GET'): Promise<ExportJobStatus> {
    const response = await ctx.request({ method, url, token });
    expect(response.statusCode, response.body).toBe(202);
    return response.json() as ExportJobStatus;
  }

  it(`takes at most ${MAX_ACTIVE} unfinished export jobs per organisation, then answers 429 until one finishes`, async () => {
    const first = await accepted(plant.editor.token, seriesUrl(unitOperationId));
    const second = await accepted(secondEditor.token, seriesUrl(unitOperationId));
    for (const [token, url, method] of [
      [plant.editor.token, seriesUrl(unitOperationId), 'GET'],
      [admin.token, '/api/v1/exports/organization-archive', 'POST'],
    ] as const) {
      const refused = await ctx.request({ method, url, token });
      expect(refused.statusCode, url).toBe(429);
      expect(refused.json()).toEqual({ error: tooManyExportsMessage(MAX_ACTIVE) });
    }
    // A streamed export is not a job: still served.
    const streamed = await ctx.request({ method: 'GET', url: `${seriesUrl(unitOperationId)}&end_time=${new Date(T0 + 9_000).toISOString()}`, token: plant.editor.token });
    expect(streamed.statusCode).toBe(200);
    // Another organisation has places of its own.
    const foreign = await accepted(other.editor.token, seriesUrl(otherUnitOperationId));

    exporter = startExportWorkerFor(ctx);
    for (const job of [first, second]) expect((await followExportJob(ctx, admin.token, job.id)).at(-1)!.state).toBe('completed');
    expect((await followExportJob(ctx, other.editor.token, foreign.id)).at(-1)!.state).toBe('completed');
    const archive = await accepted(admin.token, '/api/v1/exports/organization-archive', 'POST');
    expect((await followExportJob(ctx, admin.token, archive.id)).at(-1)!.state).toBe('completed');
  });

  it('holds the place count under requests that arrive together', async () => {
    await exporter!.close();
    exporter = null;
    const answers = await Promise.all(Array.from({ length: 6 }, () => ctx.request({ method: 'GET', url: seriesUrl(unitOperationId), token: plant.editor.token })));
    const codes = answers.map((answer) => answer.statusCode).sort();
    expect(codes).toEqual([...Array<number>(MAX_ACTIVE).fill(202), ...Array<number>(6 - MAX_ACTIVE).fill(429)]);
    const { rows: [active] } = await ctx.deps.pg.query(
      "SELECT count(*)::int AS count FROM export_jobs WHERE organization_id = $1 AND state IN ('queued', 'running')", [plant.organizationId]);
    expect(active.count).toBe(MAX_ACTIVE);
    exporter = startExportWorkerFor(ctx);
    for (const answer of answers.filter((one) => one.statusCode === 202)) {
      expect((await followExportJob(ctx, plant.editor.token, answer.json().id)).at(-1)!.state).toBe('completed');
    }
  });

  it("lists an admin the organisation's jobs and an editor their own, newest first, with progress and download", async () => {
    const all = await list(admin.token);
    expect(all.length).toBeGreaterThanOrEqual(5);
    const created = all.map((job) => job.created_at);
    expect(created).toEqual([...created].sort().reverse());
    expect(new Set(all.map((job) => job.requested_by))).toEqual(new Set([plant.editor.email, secondEditor.email, admin.email]));
    expect(all.some((job) => job.kind === 'organization_archive')).toBe(true);
    for (const job of all) {
      expect(job).toMatchObject({ state: 'completed', fraction: 1, download_url: `/api/v1/export-jobs/${job.id}/download`, expires_at: expect.any(String) });
    }
    const archives = await list(admin.token, '?kind=organization_archive');
    expect(archives.map((job) => job.kind)).toEqual(['organization_archive']);
    expect(await list(admin.token, '?limit=2')).toEqual(all.slice(0, 2));

    // An editor: their own time-series exports, never another user's or the archive.
    const mine = await list(plant.editor.token);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((job) => job.requested_by === plant.editor.email && job.kind === 'time_series')).toBe(true);
    expect(mine.map((job) => job.id)).toEqual(all.filter((job) => job.requested_by === plant.editor.email).map((job) => job.id));
    expect(await list(plant.editor.token, '?kind=organization_archive')).toEqual([]);
    expect((await list(secondEditor.token)).map((job) => job.requested_by)).toEqual([secondEditor.email]);

    // The download the list offers works for whoever listed it.
    const download = await ctx.request({ method: 'GET', url: mine[0]!.download_url!, token: plant.editor.token });
    expect(download.statusCode).toBe(200);
  });

  it("shows a running job's progress, and an expired job without its download", async () => {
    await exporter!.close();
    exporter = null;
    const job = await accepted(plant.editor.token, seriesUrl(unitOperationId));
    await ctx.deps.pg.query(`UPDATE export_jobs SET state = 'running', progress = progress || '{"points_done": 30}' WHERE id = $1`, [job.id]);
    expect((await list(plant.editor.token, '?limit=1'))[0]).toMatchObject({ id: job.id, state: 'running', fraction: 0.25, download_url: null });
    await ctx.deps.pg.query("UPDATE export_jobs SET state = 'failed', finished_at = now() WHERE id = $1", [job.id]);

    const [completed] = await list(plant.editor.token, '?limit=2').then((jobs) => jobs.filter((one) => one.state === 'completed'));
    await ctx.deps.pg.query("UPDATE export_jobs SET expires_at = now() - interval '1 second' WHERE id = $1", [completed!.id]);
    exporter = startExportWorkerFor(ctx);
    await exporter.sweep();
    expect((await list(plant.editor.token)).find((one) => one.id === completed!.id)).toMatchObject({ state: 'expired', download_url: null });
  });

  it('never shows another organisation its jobs, and checks roles and the query', async () => {
    const ours = new Set((await list(admin.token)).map((job) => job.id));
    const foreignAdmin = await ctx.createUser({ organizationId: other.organizationId, role: 'admin' });
    for (const token of [other.editor.token, foreignAdmin.token]) {
      const theirs = await list(token);
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.filter((job) => ours.has(job.id))).toEqual([]);
    }
    const viewer = await ctx.request({ method: 'GET', url: '/api/v1/export-jobs', token: plant.viewer.token });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json()).toEqual({ error: expect.any(String) });
    const anonymous = await ctx.request({ method: 'GET', url: '/api/v1/export-jobs' });
    expect(anonymous.statusCode).toBe(401);
    for (const query of ['?limit=0', '?limit=101', '?limit=ten', '?kind=everything']) {
      const bad = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs${query}`, token: admin.token });
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json()).toEqual({ error: expect.any(String) });
    }
    // An API key lists the exports it asked for.
    const key = await createApiKey(ctx, plant.organizationId, 'editor');
    expect(await list(key)).toEqual([]);
    const byKey = await accepted(key, seriesUrl(unitOperationId));
    expect((await list(key)).map((job) => job.id)).toEqual([byKey.id]);
    expect((await list(plant.editor.token)).map((job) => job.id)).not.toContain(byKey.id);
  });
});
