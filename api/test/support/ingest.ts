/**
 * Helpers of the time-series tests: an in-process ingest-worker, multipart bodies, job polling and
 * reads (the plant they write to comes from ./fixtures.ts).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@bioprocess/shared/server/logger';
import { startIngestWorker, type IngestWorker } from '@bioprocess/ingest-worker';
import type { TestContext } from './test-context.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export { realExportPath, type RealExportName } from '../../../shared/test-data/real-exports.ts';

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

export interface Reading { ts: string; instrument_id: number; value: number | null; min?: number | null; max?: number | null; quality?: number; historical?: boolean }

export async function readSeries(ctx: TestContext, token: string, query: Record<string, string | number>): Promise<Reading[]> {
  const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]));
  const response = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?${search}`, token });
  if (response.statusCode !== 200) throw new Error(`read failed ${response.statusCode}: ${response.body}`);
  return response.json() as Reading[];
}
