/**
 * Fixtures of the time-series tests: an organisation with a facility, equipment and instruments
 * (inserted directly: these tests are about the pipeline), an in-process ingest-worker, multipart
 * bodies, and job polling.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@bioprocess/shared/server/logger';
import { startIngestWorker, type IngestWorker } from '../../../ingest-worker/src/worker.ts';
import type { TestContext, TestUser } from '../support/test-context.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DATASETS_DIR = path.resolve(REPO_ROOT, '../shared/datasets');

export interface Plant {
  organizationId: number;
  editor: TestUser;
  viewer: TestUser;
  equipmentId: number;
  instrumentIds: number[];
}

export async function createPlant(ctx: TestContext, instrumentCount = 3): Promise<Plant> {
  const organizationId = await ctx.createOrganization();
  const editor = await ctx.createUser({ organizationId, role: 'editor' });
  const viewer = await ctx.createUser({ organizationId, role: 'viewer' });
  const facility = await ctx.deps.pg.query(
    `INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Pilot hall', 'pilot plant') RETURNING id`, [organizationId]);
  const equipment = await ctx.deps.pg.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
    [organizationId, facility.rows[0].id, `Reactor ${randomBytes(2).toString('hex')}`]);
  const equipmentId = equipment.rows[0].id as number;
  const instrumentIds = await addInstruments(ctx, organizationId, equipmentId, instrumentCount);
  return { organizationId, editor, viewer, equipmentId, instrumentIds };
}

export async function addInstruments(ctx: TestContext, organizationId: number, equipmentId: number, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const { rows } = await ctx.deps.pg.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type, unit) VALUES ($1, $2, $3, 'temperature', 'celsius') RETURNING id`,
      [organizationId, equipmentId, `Sensor ${randomBytes(3).toString('hex')}`]);
    ids.push(rows[0].id as number);
  }
  return ids;
}

export async function createUnitOperation(ctx: TestContext, plant: Plant, window: { start?: string | null; end?: string | null } = {}): Promise<number> {
  const run = await ctx.deps.pg.query(
    `INSERT INTO runs (organization_id, facility_id, name, target)
     SELECT $1, f.id, 'Run', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`, [plant.organizationId]);
  const { rows } = await ctx.deps.pg.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
     VALUES ($1, $2, 'fermentation', $3, $4, $5) RETURNING id`,
    [plant.organizationId, run.rows[0].id, plant.equipmentId, window.start ?? null, window.end ?? null]);
  return rows[0].id as number;
}

export function startWorker(ctx: TestContext, overrides: Record<string, unknown> = {}): IngestWorker {
  return startIngestWorker({ ...ctx.env, WORKER_CONCURRENCY: 2, ...overrides }, createLogger('ingest-worker-test', ctx.env.LOG_LEVEL));
}

export interface JobStatus {
  id: string;
  kind: string;
  state: string;
  progress: { bytes_total: number; bytes_read: number; rows_read: number; rows_skipped: number; points_written: number };
  result: Record<string, unknown> | null;
  error: string | null;
}

export async function waitForJobState(ctx: TestContext, token: string, jobId: string, timeoutMs = 120_000): Promise<JobStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await ctx.request({ method: 'GET', url: `/api/v1/ingest-jobs/${jobId}`, token });
    const job = response.json() as JobStatus;
    if (job.state === 'completed' || job.state === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A multipart body: fields first (in order), then the file. */
export function multipartBody(fields: Record<string, string>, file?: { name: string; content: Buffer | string; type?: string }): { body: Buffer; contentType: string } {
  const boundary = `----bp${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'text/csv'}\r\n\r\n`));
    parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface Reading { ts: string; instrument_id: number; value: number | null; min?: number | null; max?: number | null }

export async function readSeries(ctx: TestContext, token: string, query: Record<string, string | number>): Promise<Reading[]> {
  const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]));
  const response = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?${search}`, token });
  if (response.statusCode !== 200) throw new Error(`read failed ${response.statusCode}: ${response.body}`);
  return response.json() as Reading[];
}
