/** A chunk of a bulk post: insert its points; the last chunk to finish completes the job. */
import { Readable } from 'node:stream';
import type { Job } from 'bullmq';
import type { BulkChunkPayload } from '@bioprocess/shared/queues';
import type { WorkerContext } from '../context.ts';
import { applyLaterDeletions, insertPointsTsv, recomputeRollups } from '../points-store.ts';
import { loadJob, markCompleted, recordChunkDone } from '../job-store.ts';
import { int } from '../sql.ts';
import { TsvBuffer } from '../tsv-buffer.ts';
import { nextRequestVersion, pointVersion } from '../versions.ts';

/**
 * The chunk as TSV. A post that holds every key once shares one version; otherwise each point gets
 * its own, so the later of two points with the same key wins deterministically.
 */
export function chunkTsv(payload: BulkChunkPayload): Buffer {
  const organization = int(payload.organization_id);
  const tsv = new TsvBuffer(payload.points.length * 64);
  const shared = payload.unique_keys ? `\t${pointVersion(payload.version_seq, 0)}\t0\n` : null;
  for (let index = 0; index < payload.points.length; index += 1) {
    const [instrumentId, ts, value] = payload.points[index]!;
    const suffix = shared ?? `\t${pointVersion(payload.version_seq, payload.first_index + index)}\t0\n`;
    tsv.append(`${organization}\t${instrumentId}\t${ts}\t${value === null ? '\\N' : value}${suffix}`);
  }
  return tsv.contents();
}

export async function processBulkChunk(context: WorkerContext, payload: BulkChunkPayload, job: Job): Promise<void> {
  const record = await loadJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const repeated = job.attemptsMade > 0 || (job.attemptsStarted ?? 0) > 1;
  if (repeated) await context.pg.query('UPDATE ingest_jobs SET retried = true WHERE id = $1', [payload.job_id]);
  if (payload.points.length > 0) await insertPointsTsv(context.clickhouse, Readable.from([chunkTsv(payload)], { objectMode: false }));
  const { allDone } = await recordChunkDone(context.pg, payload.job_id, payload.chunk_index, payload.points.length);
  if (!allDone) return;
  const request = record.request as { instrument_ids: number[]; start_ms: number; end_ms: number; points: number; unique_keys?: boolean };
  const range = {
    organizationId: payload.organization_id,
    instrumentIds: request.instrument_ids,
    startMs: request.start_ms,
    endMs: request.end_ms,
  };
  await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
  const { rows } = await context.pg.query<{ retried: boolean }>('SELECT retried FROM ingest_jobs WHERE id = $1', [payload.job_id]);
  // Each key stored once by this job alone: a plain aggregation gives exact rollups (checked in the database).
  const ownRowsOnly = request.unique_keys === true && rows[0]?.retried === false;
  await recomputeRollups(context.clickhouse, context.pg, range, ownRowsOnly
    ? { fromVersion: pointVersion(payload.version_seq, 0), toVersion: nextRequestVersion(payload.version_seq) }
    : undefined);
  await markCompleted(context.pg, payload.job_id, { points_written: request.points, instruments: request.instrument_ids.length }, { points_written: request.points });
}
