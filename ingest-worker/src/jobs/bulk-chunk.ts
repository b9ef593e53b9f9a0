/**
 * A chunk of a bulk post: insert its rows (written by the api, stored in PostgreSQL with the job row);
 * the last chunk to finish stores the post's rollups and
 * completes the job. Chunks and rollups of posts that arrive together are written together
 * (bulk-writes.ts). The post's stored data is deleted afterwards, many jobs at a time (job-data-purge.ts).
 */
import type { Job } from 'bullmq';
import { decodeMinuteFigures, type MinuteFigure } from '@bioprocess/shared/minute-figures';
import { BULK_MINUTE_FIGURES_PART, bulkChunkDataKey, type BulkChunkPayload } from '@bioprocess/shared/queues';
import { bulkRequestSchema } from '@bioprocess/shared/ingest/requests';
import type { WorkerContext } from '../context.ts';
import { applyLaterDeletions } from '../deletions.ts';
import { startJob, markBulkCompleted, recordChunkDone } from '../job-store.ts';
import { PermanentJobError } from '../errors.ts';
import { nextRequestVersion, pointVersion } from '@bioprocess/shared/ingest/versions';

export async function processBulkChunk(context: WorkerContext, payload: BulkChunkPayload, job: Job): Promise<void> {
  const record = await startJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const parsed = bulkRequestSchema.safeParse(record.request);
  if (!parsed.success) throw new PermanentJobError('The record of this bulk post is unreadable, so it was not written; please post it again.');
  const request = parsed.data;
  const markRetried = () => context.pg.query('UPDATE ingest_jobs SET retried = true WHERE id = $1', [payload.job_id]);
  if (job.attemptsMade > 0 || (job.attemptsStarted ?? 0) > 1) await markRetried();
  // A chunk already recorded (its job delivered again after a crash or a lost queue) is not written twice.
  if (!record.chunks_done.includes(payload.chunk_index)) {
    const rows = await chunkRows(context, payload);
    if (!rows) throw new PermanentJobError('The data of this bulk post is missing, so it was not written; please post it again.');
    // Written a second time after a shared insert failed part-way: some of its rows may be there twice.
    if ((await context.bulkWrites.insert(rows, payload.format)).flushedAgain) await markRetried();
  }
  const { allDone, retried } = await recordChunkDone(context.pg, payload.job_id, payload.chunk_index, payload.points);
  if (!allDone) return;
  const range = {
    organizationId: payload.organization_id,
    instrumentIds: request.instrument_ids,
    startMs: request.start_ms,
    endMs: request.end_ms,
  };
  await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
  // Each key stored once by this job alone: a plain aggregation gives exact rollups (checked in the database).
  const ownRowsOnly = request.unique_keys === true && !retried;
  await context.bulkWrites.recomputeRollups({
    range,
    points: request.points,
    ownRows: ownRowsOnly ? { fromVersion: pointVersion(payload.version_seq, 0), toVersion: nextRequestVersion(payload.version_seq) } : undefined,
    minuteFigures: ownRowsOnly ? await minuteFiguresOf(context, payload.job_id) : undefined,
  });
  await markBulkCompleted(context.pg, payload.job_id, { points_written: request.points, instruments: request.instrument_ids.length }, { points_written: request.points });
  context.jobDataPurge.add(payload.job_id);
}

/** The post's minute figures; undefined (the rollups are then aggregated in ClickHouse) when they are gone or unreadable. */
async function minuteFiguresOf(context: WorkerContext, jobId: string): Promise<MinuteFigure[] | undefined> {
  const bytes = await storedPart(context, jobId, BULK_MINUTE_FIGURES_PART);
  if (!bytes) return undefined;
  try {
    return decodeMinuteFigures(bytes);
  } catch (error) {
    context.logger.warn({ err: error, jobId }, 'bulk minute figures unreadable; the rollups are aggregated from the points');
    return undefined;
  }
}

async function storedPart(context: WorkerContext, jobId: string, part: number): Promise<Buffer | null> {
  // As base64 rather than bytea's hex text: a third less to receive and decode (the driver reads every
  // field as a string; its binary mode does not keep bytes), about half the worker's CPU per chunk.
  const { rows } = await context.pg.query<{ data: string }>(`SELECT encode(bytes, 'base64') AS data FROM ingest_job_data WHERE job_id = $1 AND part = $2`, [jobId, part]);
  return rows[0] ? Buffer.from(rows[0].data, 'base64') : null;
}

/** The chunk's rows: stored with the job, or (a chunk queued by an older api) in Redis. */
async function chunkRows(context: WorkerContext, payload: BulkChunkPayload): Promise<Buffer | null> {
  return await storedPart(context, payload.job_id, payload.chunk_index)
    ?? await context.redis.getBuffer(bulkChunkDataKey(context.env.QUEUE_PREFIX, payload.job_id, payload.chunk_index));
}
