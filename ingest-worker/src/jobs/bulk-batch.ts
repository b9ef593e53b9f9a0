/**
 * A batch of one-chunk bulk posts the api accepted together (feeds posting a few seconds of readings
 * each): every step is one statement for the whole batch rather than one per post. The jobs are
 * started in one round trip, their rows and minute figures read in one query and written in one
 * insert, recorded in one update, and completed together (finishBulkPosts). A post whose record or
 * data is unusable fails alone; the others go on.
 */
import { markRetried } from '@bioprocess/shared/server/ingest-job-store';
import type { Job } from 'bullmq';
import { BULK_MINUTE_FIGURES_PART, type BulkBatchPayload } from '@bioprocess/shared/queues';
import { bulkRequestSchema, type BulkRequest } from '@bioprocess/shared/ingest/requests';
import { rowsWithVersion } from '@bioprocess/shared/point-rows';
import type { WorkerContext } from '../context.ts';
import type { Sender } from '@bioprocess/shared/group-commit';
import { markFailed, recordChunksDone, startJobs } from '../job-store.ts';
import { finishBulkPosts, minuteFiguresOf, MISSING_DATA_MESSAGE, storedParts, UNREADABLE_RECORD_MESSAGE } from './bulk-chunk.ts';

interface BatchPost {
  jobId: string;
  request: BulkRequest;
  organizationId: number;
  versionSeq: number;
  written: boolean;
  retried: boolean;
}

export async function processBulkBatch(context: WorkerContext, payload: BulkBatchPayload, job: Job, ahead?: Sender): Promise<void> {
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
    posts.push({
      jobId, request: parsed.data, organizationId: record.organization_id, versionSeq: record.version_seq,
      written: record.chunks_done.includes(0), retried: record.retried,
    });
  }
  if (posts.length === 0) return;
  const deliveredAgain = job.attemptsMade > 0 || (job.attemptsStarted ?? 0) > 1;
  const stored = await storedParts(context, posts.map((post) => post.jobId), [0, BULK_MINUTE_FIGURES_PART]);
  const toWrite: BatchPost[] = [];
  for (const post of posts.filter((candidate) => !candidate.written)) {
    if (stored.has(`${post.jobId}:0`)) toWrite.push(post);
    else await markFailed(context.pg, post.jobId, MISSING_DATA_MESSAGE);
  }
  const live = posts.filter((post) => post.written || toWrite.includes(post));
  let retried = deliveredAgain;
  if (toWrite.length > 0) {
    // Batches are made only by apis that write RowBinary rows.
    const outcome = await context.bulkWrites.insert(Buffer.concat(toWrite.map((post) =>
      rowsWithVersion(stored.get(`${post.jobId}:0`)!, Number(post.versionSeq), post.request.versions_from_job === true))), 'RowBinary');
    // Written a second time after a shared insert failed part-way: some rows may be there twice.
    retried ||= outcome.flushedAgain;
  }
  if (retried) {
    await markRetried(context.pg, live.map((post) => post.jobId));
  }
  const done = await recordChunksDone(context.pg, live.map((post) => ({ jobId: post.jobId, chunkIndex: 0, points: post.request.points })));
  await finishBulkPosts(context, live.map((post, index) => {
    const postRetried = retried || post.retried || done[index]!.retried;
    const unique = post.request.unique_keys === true && !postRetried;
    const figures = stored.get(`${post.jobId}:${BULK_MINUTE_FIGURES_PART}`) ?? null;
    return {
      jobId: post.jobId, organizationId: post.organizationId, versionSeq: post.versionSeq, request: post.request,
      retried: postRetried, minuteFigures: unique ? minuteFiguresOf(context, post.jobId, figures) : undefined,
    };
  }), ahead);
}
