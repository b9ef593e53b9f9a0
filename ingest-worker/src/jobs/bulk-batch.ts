/**
 * A batch of one-chunk bulk posts the api accepted together (feeds posting a few seconds of readings
 * each): every step is one statement for the whole batch rather than one per post. The jobs are
 * started in one round trip, their rows and minute figures read in one query and written in one
 * insert, recorded in one update, and completed together (finishBulkPosts). A post whose record or
 * data is unusable fails alone; the others go on.
 */
import type { Job } from 'bullmq';
import type { BulkBatchPayload } from '@bioprocess/shared/queues';
import { bulkRequestSchema, type BulkRequest } from '@bioprocess/shared/ingest/requests';
import { rowsWithVersion } from '@bioprocess/shared/point-rows';
import type { WorkerContext } from '../context.ts';
import type { Sender } from '@bioprocess/shared/group-commit';
import { markFailed, recordChunksDone, startJobs } from '../job-store.ts';
import { finishBulkPosts, MISSING_DATA_MESSAGE, storedParts, UNREADABLE_RECORD_MESSAGE } from './bulk-chunk.ts';

interface BatchPost {
  jobId: string;
  request: BulkRequest;
  organizationId: number;
  versionSeq: number;
  written: boolean;
}

export async function processBulkBatch(context: WorkerContext, payload: BulkBatchPayload, _job: Job, ahead?: Sender): Promise<void> {
  const records = await startJobs(context.pg, payload.job_ids);
  const posts: BatchPost[] = [];
  for (const [jobId, record] of records) {
    if (record.state === 'completed' || record.state === 'failed') {
      // Finished by an earlier run whose answer was lost (a connection cut after the commit): that
      // run never noted its data for deletion.
      context.jobDataPurge.add(jobId);
      continue;
    }
    const parsed = bulkRequestSchema.safeParse(record.request);
    if (!parsed.success) {
      await markFailed(context.pg, jobId, UNREADABLE_RECORD_MESSAGE);
      continue;
    }
    posts.push({ jobId, request: parsed.data, organizationId: record.organization_id, versionSeq: record.version_seq, written: record.chunks_done.includes(0) });
  }
  if (posts.length === 0) return;
  const stored = await storedParts(context, posts.map((post) => post.jobId), [0]);
  const toWrite: BatchPost[] = [];
  for (const post of posts.filter((candidate) => !candidate.written)) {
    if (stored.has(`${post.jobId}:0`)) toWrite.push(post);
    else await markFailed(context.pg, post.jobId, MISSING_DATA_MESSAGE);
  }
  const live = posts.filter((post) => post.written || toWrite.includes(post));
  if (toWrite.length > 0) {
    // Batches are made only by apis that write RowBinary rows. Rows written twice (a delivery run
    // again) are identical, and reads and rollups see each key once.
    await context.bulkWrites.insert(Buffer.concat(toWrite.map((post) =>
      rowsWithVersion(stored.get(`${post.jobId}:0`)!, Number(post.versionSeq), post.request.versions_from_job === true))), 'RowBinary');
  }
  await recordChunksDone(context.pg, live.map((post) => ({ jobId: post.jobId, chunkIndex: 0, points: post.request.points })));
  await finishBulkPosts(context, live.map((post) => ({
    jobId: post.jobId, organizationId: post.organizationId, versionSeq: post.versionSeq, request: post.request,
  })), ahead);
}
