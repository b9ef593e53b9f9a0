/**
 * A batch of one-chunk bulk posts the api accepted together (feeds posting a few seconds of readings
 * each): every step is one statement for the whole batch rather than one per post. The jobs and
 * their rows are read in one round trip, written in one insert (shared with the batches the worker
 * runs meanwhile) and completed together (finishBulkPosts); their rows read `queued` until then. A post whose record or
 * data is unusable fails alone; the others go on.
 */
import type { Job } from 'bullmq';
import type { BulkBatchPayload } from '@bioprocess/shared/queues';
import { bulkRequestSchema, type BulkRequest } from '@bioprocess/shared/ingest/requests';
import { POINT_ROWS_FORMAT, rowsWithVersion, type PointRowsLayout } from '@bioprocess/shared/point-rows';
import { batchJobsWithRows } from '@bioprocess/shared/server/ingest-jobs';
import type { WorkerContext } from '../context.ts';
import type { BulkJobOnItsWay } from '../bulk-writes.ts';
import { markFailed } from '../job-store.ts';
import { finishBulkPosts, MISSING_DATA_MESSAGE, UNREADABLE_RECORD_MESSAGE } from './bulk-chunk.ts';

interface BatchPost {
  jobId: string;
  request: BulkRequest;
  organizationId: number;
  versionSeq: number;
  /** Its rows, unless an earlier run wrote them already. */
  rows: Buffer | null;
}

export async function processBulkBatch(context: WorkerContext, payload: BulkBatchPayload, _job: Job, ahead?: BulkJobOnItsWay): Promise<void> {
  const records = await batchJobsWithRows(context.pg, payload.job_ids);
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
    const written = record.chunks_done.includes(0);
    if (!written && !record.rows) {
      await markFailed(context.pg, jobId, MISSING_DATA_MESSAGE);
      continue;
    }
    posts.push({ jobId, request: parsed.data, organizationId: record.organization_id, versionSeq: record.version_seq, rows: written ? null : record.rows });
  }
  // Batches are made only by apis that write RowBinary rows, with the source's details or (apis from
  // before them, jobs queued across a deploy) without: one insert per layout. Rows written twice (a
  // delivery run again) are identical, and reads and rollups see each key once.
  const byLayout = new Map<PointRowsLayout, Uint8Array[]>();
  for (const post of posts) {
    if (post.rows === null) continue;
    const layout = post.request.rows_format ?? 'RowBinary';
    const rows = rowsWithVersion(post.rows, Number(post.versionSeq), post.request.versions_from_job === true, layout);
    byLayout.set(layout, [...byLayout.get(layout) ?? [], rows]);
  }
  await Promise.all([...byLayout].map(([layout, rows]) => context.bulkWrites.insert(Buffer.concat(rows), layout, layout === POINT_ROWS_FORMAT ? ahead?.toInsert : undefined)));
  ahead?.toInsert.arrived();
  if (posts.length === 0) return;
  // Completed in one statement, with no record of their one chunk first: a batch cut short between
  // the insert and the completion is written again whole, which stores the same rows.
  await finishBulkPosts(context, posts.map((post) => ({
    jobId: post.jobId, organizationId: post.organizationId, versionSeq: post.versionSeq, request: post.request,
  })), ahead?.toRollups);
}
