/** A chunk of a bulk post: insert its points; the last chunk to finish completes the job. */
import type { BulkChunkPayload } from '@bioprocess/shared/queues';
import type { WorkerContext } from '../context.ts';
import { applyLaterDeletions, insertPointsTsv, recomputeRollups } from '../points-store.ts';
import { loadJob, markCompleted, recordChunkDone } from '../job-store.ts';
import { int } from '../sql.ts';
import { pointVersion } from '../versions.ts';

export function chunkTsv(payload: BulkChunkPayload): string {
  const organization = int(payload.organization_id);
  const lines: string[] = new Array(payload.points.length);
  for (let index = 0; index < payload.points.length; index += 1) {
    const [instrumentId, ts, value] = payload.points[index]!;
    const versionText = pointVersion(payload.version_seq, payload.first_index + index);
    lines[index] = `${organization}\t${instrumentId}\t${ts}\t${value === null ? '\\N' : value}\t${versionText}\t0\n`;
  }
  return lines.join('');
}

export async function processBulkChunk(context: WorkerContext, payload: BulkChunkPayload): Promise<void> {
  const job = await loadJob(context.pg, payload.job_id);
  if (!job || job.state === 'completed' || job.state === 'failed') return;
  if (payload.points.length > 0) await insertPointsTsv(context.clickhouse, chunkTsv(payload));
  const { allDone } = await recordChunkDone(context.pg, payload.job_id, payload.chunk_index, payload.points.length);
  if (!allDone) return;
  const request = job.request as { instrument_ids: number[]; start_ms: number; end_ms: number; points: number };
  const range = {
    organizationId: payload.organization_id,
    instrumentIds: request.instrument_ids,
    startMs: request.start_ms,
    endMs: request.end_ms,
  };
  await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
  await recomputeRollups(context.clickhouse, context.pg, range);
  await markCompleted(context.pg, payload.job_id, { points_written: request.points, instruments: request.instrument_ids.length }, { points_written: request.points });
}
