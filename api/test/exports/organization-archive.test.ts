/**
 * The whole-organisation archive, built as an export job: a ZIP of every record kind as CSV, each unit
 * operation's readings as CSV long and a manifest whose counts, sizes and checksums match the files;
 * progress in files; admins only (the job's status and file too); another organisation's data never
 * inside; audited.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import JSZip from 'jszip';
import { parse } from 'csv-parse/sync';
import { RECORD_EXPORT_ENTITIES } from '@bioprocess/shared/exports';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import type { ArchiveManifest } from '../../src/exports/archive.ts';
import type { ExportWorker } from '../../src/exports/jobs/export-worker.ts';
import { pendingAuditEvents } from '../metadata/fixtures.ts';
import { followExportJob, startExportWorkerFor } from './job-support.ts';
import { createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';
import { recomputeRollups } from '@bioprocess/ingest-worker';

const T0 = Date.UTC(2024, 8, 1);

describe('organisation archive', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let exporter: ExportWorker;
  let plant: Plant;
  let admin: TestUser;
  let unitOperationId: number;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    exporter = startExportWorkerFor(ctx);
    plant = await createPlant(ctx, 2);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    unitOperationId = await createUnitOperation(ctx, plant, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const data = plant.instrumentIds.flatMap((instrument) => Array.from({ length: 500 }, (_, index) => ({ ts: T0 + index * 1000, instrument_id: instrument, value: index / 3 })));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(response.statusCode).toBe(200);
    const other = await createPlant(ctx, 1);
    await createUnitOperation(ctx, other, { start: new Date(T0).toISOString() });
  }, 60_000);
  afterAll(async () => {
    await exporter.close();
    await worker.close();
    await ctx.close();
  });

  it('holds every record kind, each unit operation as CSV long, and a manifest that matches them', async () => {
    const accepted = await ctx.request({ method: 'POST', url: '/api/v1/exports/organization-archive', token: admin.token });
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json()).toMatchObject({ kind: 'organization_archive', state: 'queued', fraction: 0 });
    const statuses = await followExportJob(ctx, admin.token, accepted.json().id);
    const last = statuses.at(-1)!;
    const files = RECORD_EXPORT_ENTITIES.length + 2;
    expect(last).toMatchObject({ state: 'completed', fraction: 1, progress: { files_total: files, files_done: files }, file_name: expect.stringMatching(/^organization-\d+-\d{4}-\d{2}-\d{2}\.zip$/) });
    const response = await ctx.request({ method: 'GET', url: last.download_url!, token: admin.token });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    // Editors may export time series but not the archive, even knowing its job.
    const editor = await ctx.request({ method: 'GET', url: last.download_url!, token: plant.editor.token });
    expect(editor.statusCode).toBe(403);
    const events = (await pendingAuditEvents(ctx)) as Array<Record<string, unknown>>;
    expect(events.find((event) => event.event_id === last.id)).toMatchObject({
      event_type: 'organization.exported', user_id: admin.id, success: true, changes: { after: { files, rows: last.rows, complete: true } },
    });
    const zip = await JSZip.loadAsync(response.rawPayload);
    const manifest = JSON.parse(await zip.file('manifest.json')!.async('string')) as ArchiveManifest;
    expect(manifest).toMatchObject({ product: 'bioprocess-platform', product_version: expect.any(String), organization_id: plant.organizationId, exported_by: admin.email });
    expect(manifest.files.map((file) => file.path)).toEqual([
      ...RECORD_EXPORT_ENTITIES.map((entity) => `records/${entity}.csv`), `time-series/unit-operation-${unitOperationId}.csv`, 'samples/samples.csv',
    ]);
    for (const file of manifest.files) {
      const bytes = await zip.file(file.path)!.async('nodebuffer');
      expect(bytes.length, file.path).toBe(file.bytes);
      expect(createHash('sha256').update(bytes).digest('hex'), file.path).toBe(file.sha256);
      const [header, ...rows] = parse(bytes) as string[][];
      expect(header, file.path).toEqual(file.schema.columns.map((column) => column.name));
      expect(rows.length, file.path).toBe(file.rows);
    }
    expect(manifest.files.at(-2)!.rows).toBe(1000);
    const runs = parse(await zip.file('records/runs.csv')!.async('nodebuffer')) as string[][];
    expect(runs).toHaveLength(2); // the header and this organisation's one run
  });

  it('waits for the rollups of readings answered before it, as its windows are planned from them', async () => {
    const owedPlant = await createPlant(ctx, 1);
    const owedAdmin = await ctx.createUser({ organizationId: owedPlant.organizationId, role: 'admin' });
    await createUnitOperation(ctx, owedPlant, { start: new Date(T0).toISOString(), end: new Date(T0 + 3_600_000).toISOString() });
    const range = { organizationId: owedPlant.organizationId, instrumentIds: owedPlant.instrumentIds.slice(0, 1), startMs: T0, endMs: T0 + 299_000 };
    // 300 readings stored and their rollups still owed, as a post answered a moment ago leaves them.
    const rows = Array.from({ length: 300 }, (_, index) => `(${range.organizationId}, ${range.instrumentIds[0]}, ${T0 + index * 1000}, ${index}, 1, 0)`);
    await ctx.deps.clickhouse.command({ query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted) VALUES ${rows.join(',')}` });
    await ctx.deps.pg.query('INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms) VALUES ($1, gen_random_uuid(), $2, $3, $4)',
      [range.organizationId, range.instrumentIds, range.startMs, range.endMs]);
    const accepted = await ctx.request({ method: 'POST', url: '/api/v1/exports/organization-archive', token: owedAdmin.token });
    expect(accepted.statusCode).toBe(202);
    // The archive has had its chance to run; the rollups come only now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, [{ range }]);
    await ctx.deps.pg.query('DELETE FROM rollup_backlog WHERE organization_id = $1', [range.organizationId]);
    const last = (await followExportJob(ctx, owedAdmin.token, accepted.json().id)).at(-1)!;
    expect(last.state).toBe('completed');
    const zip = await JSZip.loadAsync((await ctx.request({ method: 'GET', url: last.download_url!, token: owedAdmin.token })).rawPayload);
    const manifest = JSON.parse(await zip.file('manifest.json')!.async('string')) as ArchiveManifest;
    expect(manifest.files.at(-2)!.rows).toBe(300);
  });

  it('is for admins only', async () => {
    for (const token of [plant.editor.token, plant.viewer.token]) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/exports/organization-archive', token });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: expect.any(String) });
    }
  });
});
