/**
 * Group commit of small bulk posts in the api. Feeds post a few seconds of readings at a time, many at
 * once; alone, each post would cost a job insert, a delivery and a worker's job. Small posts that
 * arrive while a commit runs wait for it and then go out together: their job rows with their data in
 * one PostgreSQL statement (the record a 202 stands on), then one delivery naming them all, which the
 * ingest-worker writes with one insert. A commit first waits a moment for the posts being read
 * meanwhile; a lone post waits for nobody.
 */
import { randomUUID } from 'node:crypto';
import { GroupCommit, type Sender } from '@bioprocess/shared/group-commit';
import { BULK_BATCH_MAX_JOBS } from '@bioprocess/shared/queues';
import type { BulkRequest } from '@bioprocess/shared/ingest/requests';
import type { RequestPrincipal } from '../auth/principal.ts';
import type { AppDeps } from '../platform/deps.ts';
import { insertIngestJobs, WAIT_TIMEOUT_MS, type IngestJobRow, type NewIngestJob } from '../ingest-jobs/jobs.ts';
import type { FinishWait } from '../ingest-jobs/finish-events.ts';
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
  job: BulkJob & { id: string };
}

/** A post on its way to a commit: `arrived` once it was submitted, `leave` when it takes another path or ends. */
export interface PostOnItsWay extends Sender {
  leave(): void;
}

export interface BulkJobBatches {
  /**
   * Counts a post as on its way from now (it is being read) until it is accepted, takes another path
   * or is refused: a commit waits a moment for the posts on their way.
   */
  setOut(): PostOnItsWay;
  /**
   * Records a one-chunk post's job with its data and queues it (with the others of its batch). With
   * `wait`, the answer carries a wait for the job's finish registered before the job was queued, so
   * its finish cannot be missed; none when the post replayed an idempotency key (the earlier job may
   * have finished long ago: read its row).
   */
  accept(principal: RequestPrincipal, job: BulkJob & { chunkCount: 1 }, wait: boolean, sender?: PostOnItsWay): Promise<{ job: IngestJobRow; registered?: FinishWait }>;
}

export function createBulkJobBatches(deps: Pick<AppDeps, 'env' | 'pg' | 'queues' | 'logger' | 'jobEvents'>): BulkJobBatches {
  const commit = new GroupCommit<Entry, { job: IngestJobRow; created: boolean }>({
    flush: async (entries) => {
      // Named after its first job: the delivery that writes them all, and the reconciler makes again.
      const batch = entries.length > 1 ? entries[0]!.job.id : undefined;
      const results = await insertIngestJobs(deps.pg, entries.map(({ principal, job }) => ({
        principal,
        job: batch === undefined ? job : { ...job, request: { ...job.request, batch } },
      })));
      await enqueueIngest(deps, results.flatMap((result) => result.created ? [result.job] : []));
      return results;
    },
    weigh: ({ job }) => job.request.points,
    maxWeight: BATCH_MAX_POINTS,
    maxItems: BULK_BATCH_MAX_JOBS,
    // The posts being read are a parse on a thread and an ownership lookup away, a few milliseconds:
    // feeds' posts arrive a moment apart, and each batch costs a statement, a delivery, a worker's job
    // and a ClickHouse part.
    awaitSendersMs: deps.env.BULK_BATCH_WAIT_MS,
  });
  return {
    setOut: () => {
      const toCommit = commit.setOut();
      return { arrived: () => toCommit.arrived(), leave: () => toCommit.arrived() };
    },
    accept: async (principal, job, wait, sender) => {
      const id = randomUUID();
      const registered = wait ? deps.jobEvents.wait(id, WAIT_TIMEOUT_MS) : undefined;
      try {
        const submitted = commit.submit({ principal, job: { ...job, id } });
        sender?.arrived();
        const { job: row, created } = await submitted;
        if (!created) {
          registered?.end();
          return { job: row };
        }
        return { job: row, registered };
      } catch (error) {
        registered?.end();
        throw error;
      }
    },
  };
}
