/** Fixtures of the export job tests: an in-process export-worker and the reading of a job's progress events. */
import { createLogger } from '@bioprocess/shared/server/logger';
import { exportJobStatusSchema, type ExportJobStatus } from '@bioprocess/shared/exports';
import { startExportWorker, type ExportWorker } from '../../src/exports/jobs/export-worker.ts';
import type { TestContext } from '../support/test-context.ts';

export function startExportWorkerFor(ctx: TestContext, overrides: Record<string, unknown> = {}): ExportWorker {
  // The sweep runs when a test asks for it (worker.sweep()), not on a timer.
  return startExportWorker({ ...ctx.env, EXPORT_SWEEP_MS: 3_600_000, EXPORT_LOCK_MS: 5_000, ...overrides }, createLogger('export-worker-test', ctx.env.LOG_LEVEL));
}

/** Follows the job's event stream to its end; answers every status it sent, the last one the end. */
export async function followExportJob(ctx: TestContext, token: string, jobId: string): Promise<ExportJobStatus[]> {
  const response = await ctx.request({ method: 'GET', url: `/api/v1/export-jobs/${jobId}/events`, token });
  if (response.statusCode !== 200) throw new Error(`events answered ${response.statusCode}: ${response.body}`);
  const statuses: ExportJobStatus[] = [];
  for (const block of response.body.split('\n\n')) {
    const data = block.split('\n').find((line) => line.startsWith('data: '));
    if (data) statuses.push(exportJobStatusSchema.parse(JSON.parse(data.slice(6))));
  }
  return statuses;
}
