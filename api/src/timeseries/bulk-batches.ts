/**
 * Group commit of small bulk posts in the api. Feeds post a few seconds of readings at a time, many at
 * once; alone, each post would cost a job insert, a queue entry and a delivery to the worker. Small posts
 * that arrive while a commit runs wait for it and then go out together: their job rows with their data
 * in one PostgreSQL statement, and one delivery naming them all (the worker writes them with one
 * insert). An idle committer commits at once, so a lone post waits for nobody.
 */
import { randomUUID } from 'node:crypto';
import { GroupCommit } from '@bioprocess/shared/group-commit';
import { BULK_BATCH_MAX_JOBS } from '@bioprocess/shared/queues';
import type { BulkRequest } from '@bioprocess/shared/ingest/requests';
import type { RequestPrincipal } from '../auth/principal.ts';
import type { AppDeps } from '../platform/deps.ts';
import { insertIngestJobs, type IngestJobRow, type NewIngestJob } from '../ingest-jobs/jobs.ts';
import { enqueueIngest } from './enqueue.ts';

/**
 * Posts of at most this many points are batched. A larger post's statement and insert cost far more
 * than their fixed part, so it gains nothing from company, and batching it would make posts behind it
 * wait for its statement.
 */
export const BATCHED_POST_MAX_POINTS = 5_000;
/** Points per batch: one statement carries a megabyte or so at most. */
const BATCH_MAX_POINTS = 50_000;

export type BulkJob = NewIngestJob & { kind: 'bulk'; request: BulkRequest; chunkCount: number };

interface Entry {
  principal: RequestPrincipal;
  job: BulkJob;
}

export interface BulkJobBatches {
  /** Records a one-chunk post's job with its data and queues it (with the others of its batch). */
  accept(principal: RequestPrincipal, job: BulkJob & { chunkCount: 1 }): Promise<{ job: IngestJobRow; created: boolean }>;
}

export function createBulkJobBatches(deps: Pick<AppDeps, 'pg' | 'queues' | 'logger'>): BulkJobBatches {
  const commit = new GroupCommit<Entry, { job: IngestJobRow; created: boolean }>({
    flush: async (entries) => {
      const ids = entries.map(({ job }) => job.id ?? randomUUID());
      // Named after its first job: the delivery that writes them all, and the reconciler makes again.
      const batch = entries.length > 1 ? ids[0] : undefined;
      const results = await insertIngestJobs(deps.pg, entries.map(({ principal, job }, index) => ({
        principal,
        job: { ...job, id: ids[index], request: batch === undefined ? job.request : { ...job.request, batch } },
      })));
      await enqueueIngest(deps, results.filter((result) => result.created).map((result) => result.job));
      return results;
    },
    weigh: ({ job }) => job.request.points,
    maxWeight: BATCH_MAX_POINTS,
    maxItems: BULK_BATCH_MAX_JOBS,
  });
  return { accept: async (principal, job) => (await commit.submit({ principal, job })).result };
}
