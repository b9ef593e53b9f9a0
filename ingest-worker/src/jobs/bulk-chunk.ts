/**
 * A chunk of a bulk post: insert its rows (written by the api, kept in Redis beside the job); the last
 * chunk to finish stores the post's rollups and completes the job. Chunks and rollups of posts that
 * arrive together are written together (bulk-writes.ts).
 */
import type { Job } from 'bullmq';
import { decodeMinuteFigures, type MinuteFigure } from '@bioprocess/shared/minute-figures';
import { bulkChunkDataKey, bulkMinuteFiguresKey, type BulkChunkPayload } from '@bioprocess/shared/queues';
import type { WorkerContext } from '../context.ts';
import { applyLaterDeletions } from '../points-store.ts';
import { startJob, markCompleted, recordChunkDone } from '../job-store.ts';
import { PermanentJobError } from '../errors.ts';
import { nextRequestVersion, pointVersion } from '../versions.ts';

export async function processBulkChunk(context: WorkerContext, payload: BulkChunkPayload, job: Job): Promise<void> {
  const record = await startJob(context.pg, payload.job_id);
  if (!record || record.state === 'completed' || record.state === 'failed') return;
  const markRetried = () => context.pg.query('UPDATE ingest_jobs SET retried = true WHERE id = $1', [payload.job_id]);
  if (job.attemptsMade > 0 || (job.attemptsStarted ?? 0) > 1) await markRetried();
  const dataKey = bulkChunkDataKey(context.env.QUEUE_PREFIX, payload.job_id, payload.chunk_index);
  const rows = await context.redis.getBuffer(dataKey);
  if (rows) {
    // Written a second time after a shared insert failed part-way: some of its rows may be there twice.
    if ((await context.bulkWrites.insert(rows, payload.format)).flushedAgain) await markRetried();
  } else if (!(await chunkRecorded(context, payload))) {
    // Only a chunk already written may have lost its data (deleted after recording it).
    throw new PermanentJobError('The data of this bulk post expired before it could be written; please post it again.');
  }
  const { allDone } = await recordChunkDone(context.pg, payload.job_id, payload.chunk_index, payload.points);
  await context.redis.del(dataKey).catch((error: unknown) => context.logger.warn({ err: error, key: dataKey }, 'bulk chunk data not deleted; it expires'));
  if (!allDone) return;
  const request = record.request as { instrument_ids: number[]; start_ms: number; end_ms: number; points: number; unique_keys?: boolean };
  const range = {
    organizationId: payload.organization_id,
    instrumentIds: request.instrument_ids,
    startMs: request.start_ms,
    endMs: request.end_ms,
  };
  await applyLaterDeletions(context.clickhouse, context.pg, range, payload.version_seq);
  const { rows: retried } = await context.pg.query<{ retried: boolean }>('SELECT retried FROM ingest_jobs WHERE id = $1', [payload.job_id]);
  // Each key stored once by this job alone: a plain aggregation gives exact rollups (checked in the database).
  const ownRowsOnly = request.unique_keys === true && retried[0]?.retried === false;
  const figuresKey = bulkMinuteFiguresKey(context.env.QUEUE_PREFIX, payload.job_id);
  await context.bulkWrites.recomputeRollups({
    range,
    points: request.points,
    ownRows: ownRowsOnly ? { fromVersion: pointVersion(payload.version_seq, 0), toVersion: nextRequestVersion(payload.version_seq) } : undefined,
    minuteFigures: ownRowsOnly ? await minuteFiguresOf(context, figuresKey) : undefined,
  });
  await markCompleted(context.pg, payload.job_id, { points_written: request.points, instruments: request.instrument_ids.length }, { points_written: request.points });
  await context.redis.del(figuresKey).catch((error: unknown) => context.logger.warn({ err: error, key: figuresKey }, 'bulk minute figures not deleted; they expire'));
}

/** The post's minute figures; undefined (the rollups are then aggregated in ClickHouse) when they are gone or unreadable. */
async function minuteFiguresOf(context: WorkerContext, key: string): Promise<MinuteFigure[] | undefined> {
  const bytes = await context.redis.getBuffer(key);
  if (!bytes) return undefined;
  try {
    return decodeMinuteFigures(bytes);
  } catch (error) {
    context.logger.warn({ err: error, key }, 'bulk minute figures unreadable; the rollups are aggregated from the points');
    return undefined;
  }
}

async function chunkRecorded(context: WorkerContext, payload: BulkChunkPayload): Promise<boolean> {
  const { rows } = await context.pg.query<{ done: boolean }>('SELECT $2 = ANY(chunks_done) AS done FROM ingest_jobs WHERE id = $1', [payload.job_id, payload.chunk_index]);
  return rows[0]?.done === true;
}
