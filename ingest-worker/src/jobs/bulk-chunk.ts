/**
 * A chunk of a bulk post: insert its rows (written by the api, stored in PostgreSQL with the job row, or
 * spooled to a file for a large post);
 * the last chunk to finish completes the post (finishBulkPosts). Chunks and rollups of posts that arrive
 * together are written together (bulk-writes.ts). The post's stored data is deleted afterwards, many
 * jobs at a time (job-data-purge.ts).
 */
import { completeBulkPosts, recordChunkDone, startJob, storedJobData } from '@bioprocess/shared/server/ingest-jobs';
import type { Job } from 'bullmq';
import { bulkChunkDataKey, type BulkChunkPayload } from '@bioprocess/shared/queues';
import { bulkRequestSchema, type BulkRequest } from '@bioprocess/shared/ingest/requests';
import { readSpooledPart } from '@bioprocess/shared/server/bulk-spool';
import { rowsWithVersion } from '@bioprocess/shared/point-rows';
import type { WorkerContext } from '../context.ts';
import type { Sender } from '@bioprocess/shared/group-commit';
import type { BulkJobOnItsWay } from '../bulk-writes.ts';
import { applyLaterDeletions } from '../deletions.ts';
import { PermanentJobError } from '../errors.ts';
import { announceAllPointsStored } from '@bioprocess/shared/server/points-stored';

export const UNREADABLE_RECORD_MESSAGE = 'The record of this bulk post is unreadable, so it was not written; please post it again.';
export const MISSING_DATA_MESSAGE = 'The data of this bulk post is missing, so it was not written; please post it again.';

export async function processBulkChunk(context: WorkerContext, payload: BulkChunkPayload, _job: Job, ahead?: BulkJobOnItsWay): Promise<void> {
  const record = await startJob(context.pg, payload.job_id);
  if (!record) return;
  if (record.state === 'completed' || record.state === 'failed') {
    // Finished by an earlier run whose answer was lost (a connection cut after the commit): that
    // run never noted its data for deletion.
    context.jobDataPurge.add(payload.job_id, (record.request as { spooled?: unknown }).spooled === true);
    return;
  }
  const parsed = bulkRequestSchema.safeParse(record.request);
  if (!parsed.success) throw new PermanentJobError(UNREADABLE_RECORD_MESSAGE);
  const request = parsed.data;
  // A chunk already recorded (its job delivered again after a crash or a lost queue) is not written twice.
  if (!record.chunks_done.includes(payload.chunk_index)) {
    const rows = await chunkRows(context, payload, request.spooled === true);
    if (!rows) throw new PermanentJobError(MISSING_DATA_MESSAGE);
    // Rows written twice (a shared insert that failed part-way and went again) are identical, and
    // reads and rollups see each key once.
    await context.bulkWrites.insert(rowsWithVersion(rows, Number(payload.version_seq), request.versions_from_job === true, payload.format), payload.format, ahead?.toInsert);
  }
  ahead?.toInsert.arrived();
  const { allDone } = await recordChunkDone(context.pg, payload.job_id, payload.chunk_index, payload.points);
  if (!allDone) return;
  await finishBulkPosts(context, [{ jobId: payload.job_id, organizationId: payload.organization_id, versionSeq: payload.version_seq, request }], ahead?.toRollups);
}

/** A bulk post whose rows are all written, about to be completed. */
export interface FinishingPost {
  jobId: string;
  organizationId: number;
  versionSeq: number;
  request: BulkRequest;
}

/**
 * Completes posts whose rows are written: deletions accepted after them applied again, then their job
 * rows completed with their rollups recorded as owed (one statement), then their rollups recomputed
 * together with other posts' after the answer (bulk-writes.ts; reads wait for them).
 */
export async function finishBulkPosts(context: WorkerContext, posts: readonly FinishingPost[], ahead?: Sender): Promise<void> {
  const rangeOf = (post: FinishingPost) => ({
    organizationId: post.organizationId, instrumentIds: post.request.instrument_ids, startMs: post.request.start_ms, endMs: post.request.end_ms,
  });
  const completions = posts.map((post) => ({ jobId: post.jobId, points: post.request.points, range: rangeOf(post) }));
  // Completed at once unless a deletion of their organisations was accepted after the oldest of them
  // (asked by the completing statement itself, after the rows were stored): then its tombstones go
  // over their rows first.
  if (!await completeBulkPosts(context.pg, completions, Math.min(...posts.map((post) => post.versionSeq)))) {
    for (const post of posts) await applyLaterDeletions(context.clickhouse, context.pg, rangeOf(post), post.versionSeq);
    await completeBulkPosts(context.pg, completions);
  }
  for (const post of posts) context.bulkWrites.recomputeRollups({ jobId: post.jobId, range: rangeOf(post), points: post.request.points });
  // Its posts are all submitted: a rollup flush waiting for this job need wait no longer.
  ahead?.arrived();
  for (const post of posts) context.jobDataPurge.add(post.jobId, post.request.spooled === true);
  // Completed: reads see the points (and wait for the rollups owed), so live viewers may read them.
  // Announced after the rollups were handed on, so a slow Redis never holds up the rollup flush.
  await announceAllPointsStored(context.redis, context.env.QUEUE_PREFIX, posts.map((post) => ({
    organizationId: post.organizationId, instrumentIds: post.request.instrument_ids, fromMs: post.request.start_ms, toMs: post.request.end_ms,
    kind: 'points', jobIds: [post.jobId], points: post.request.points,
  })), context.logger);
}

/** A part of the post's stored data: spooled to a file (a large post) or in PostgreSQL with the job row. */
async function storedPart(context: WorkerContext, jobId: string, part: number, spooled: boolean): Promise<Buffer | null> {
  if (spooled) return readSpooledPart(context.env.UPLOAD_DIR, jobId, part);
  return storedJobData(context.pg, jobId, part);
}

/** The chunk's rows: stored with the job, or (a chunk queued by an older api) in Redis. */
async function chunkRows(context: WorkerContext, payload: BulkChunkPayload, spooled: boolean): Promise<Buffer | null> {
  return await storedPart(context, payload.job_id, payload.chunk_index, spooled)
    ?? await context.redis.getBuffer(bulkChunkDataKey(context.env.QUEUE_PREFIX, payload.job_id, payload.chunk_index));
}
