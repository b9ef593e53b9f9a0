/**
 * Group commit of small bulk posts in the api. Feeds post a few seconds of readings at a time, many at
 * once; alone, each post would cost a job insert and its own writes. Small posts that arrive while a
 * commit runs wait for it and then go out together: their job rows with their data in one PostgreSQL
 * statement (the record a 202 stands on), then one ClickHouse insert and one completing statement made
 * by the api itself (bulk-finish.ts); with BULK_WRITES_IN_API off, one delivery naming them all instead
 * (the worker writes them with one insert). A commit first waits a moment for the posts being read
 * meanwhile; a lone post waits for nobody.
 */
import { randomUUID } from 'node:crypto';
import { GroupCommit, type Sender } from '@bioprocess/shared/group-commit';
import { BULK_BATCH_MAX_JOBS, BULK_MINUTE_FIGURES_PART } from '@bioprocess/shared/queues';
import { rowsWithVersion } from '@bioprocess/shared/point-rows';
import type { BulkRequest } from '@bioprocess/shared/ingest/requests';
import type { RequestPrincipal } from '../auth/principal.ts';
import type { AppDeps } from '../platform/deps.ts';
import { insertIngestJobs, WAIT_TIMEOUT_MS, type IngestJobRow, type NewIngestJob } from '../ingest-jobs/jobs.ts';
import type { FinishWait } from '../ingest-jobs/finish-events.ts';
import { enqueueIngest } from './enqueue.ts';
import { createBulkFinish } from './bulk-finish.ts';

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
  toInsert?: Sender;
}

/** A post on its way to a commit (`arrived`: it was submitted), then to the api's insert. */
export interface PostOnItsWay extends Sender {
  /** Arrives once the post's rows were given to the insert. */
  readonly toInsert: Sender;
  /** The post took another path, was refused or was answered: neither waits for it any longer. */
  leave(): void;
}

/** A post's recorded job; `finished` when this api writes it (true once completed, false when handed to the worker). */
interface Recorded {
  job: IngestJobRow;
  created: boolean;
  finished?: Promise<boolean>;
}

/** A one-chunk post's point rows, as recorded with its job. */
function pointRowsOf(job: BulkJob): Uint8Array {
  const rows = job.data?.find((item) => item.part === 0);
  if (!rows) throw new Error('A small bulk post without its point rows');
  return rows.bytes;
}

/** A post's per-minute figures (encoded), when it stored each key once (the api computed them while reading it). */
function ownMinuteFigures(job: BulkJob): Uint8Array | undefined {
  const figures = job.data?.find((item) => item.part === BULK_MINUTE_FIGURES_PART);
  return job.request.unique_keys === true && figures ? figures.bytes : undefined;
}

export interface BulkJobBatches {
  /**
   * Counts a post as on its way from now (it is being read) until it is accepted, takes another path
   * or is refused (`arrived`): a commit waits a moment for the posts on their way. So does the api's
   * insert, until the post's rows reach it (`toInsert`).
   */
  setOut(): PostOnItsWay;
  /**
   * Records a one-chunk post's job with its data and queues it (with the others of its batch). With
   * `wait`, the answer carries a wait for the job's finish registered before the job was queued, so
   * its finish cannot be missed; none when the post replayed an idempotency key (the earlier job may
   * have finished long ago: read its row).
   */
  accept(principal: RequestPrincipal, job: BulkJob & { chunkCount: 1 }, wait: boolean, sender?: PostOnItsWay): Promise<{ job: IngestJobRow; registered?: FinishWait }>;
  /** Waits for the posts this api is still writing (a graceful shutdown). */
  close(): Promise<void>;
}

export function createBulkJobBatches(deps: Pick<AppDeps, 'env' | 'pg' | 'clickhouse' | 'queues' | 'logger' | 'jobEvents'>): BulkJobBatches {
  const writesHere = deps.env.BULK_WRITES_IN_API;
  const finish = createBulkFinish(deps);
  const commit = new GroupCommit<Entry, Recorded>({
    flush: async (entries) => {
      // Named after its first job: the delivery that writes them all, and the reconciler makes again.
      const batch = entries.length > 1 ? entries[0]!.job.id : undefined;
      const results = await insertIngestJobs(deps.pg, entries.map(({ principal, job }) => ({
        principal,
        job: {
          ...(batch === undefined ? job : { ...job, request: { ...job.request, batch } }),
          // Written by this api right away (bulk-finish.ts); recorded as running, so that a job it
          // leaves unfinished is delivered again flagged as retried, and owing its rollups, as it is
          // answered before the statement that completes it.
          state: writesHere ? 'running' : 'queued',
          owesRollups: writesHere,
        },
      })));
      const created = results.flatMap((result, index) => result.created ? [{ job: result.job, entry: entries[index]! }] : []);
      if (!writesHere) {
        await enqueueIngest(deps, created.map(({ job }) => job));
        return results;
      }
      const finished = finish.finish(created.map(({ job, entry }) => ({
        job, request: entry.job.request, rows: rowsWithVersion(pointRowsOf(entry.job), Number(job.version_seq), entry.job.request.versions_from_job === true), minuteFigures: ownMinuteFigures(entry.job),
      })));
      for (const entry of entries) entry.toInsert?.arrived();
      const finishedOf = new Map(created.map(({ job }, index) => [job.id, finished[index]!]));
      return results.map((result) => ({ ...result, finished: finishedOf.get(result.job.id) }));
    },
    weigh: ({ job }) => job.request.points,
    maxWeight: BATCH_MAX_POINTS,
    maxItems: BULK_BATCH_MAX_JOBS,
    // The posts being read are a version draw, a parse on a thread and an ownership lookup away, a few
    // milliseconds: feeds' posts arrive a moment apart, and each batch costs a statement, a delivery,
    // a worker's job and a ClickHouse part.
    awaitSendersMs: deps.env.BULK_BATCH_WAIT_MS,
  });
  return {
    setOut: () => {
      const toCommit = commit.setOut();
      // Without writes here no insert waits: the posts go to the worker.
      const toInsert = writesHere ? finish.setOut() : { arrived: () => undefined };
      return {
        arrived: () => toCommit.arrived(),
        toInsert,
        leave: () => {
          toCommit.arrived();
          toInsert.arrived();
        },
      };
    },
    close: () => finish.close(),
    accept: async (principal, job, wait, sender) => {
      const id = randomUUID();
      const registered = wait ? deps.jobEvents.wait(id, WAIT_TIMEOUT_MS) : undefined;
      try {
        const submitted = commit.submit({ principal, job: { ...job, id }, toInsert: sender?.toInsert });
        sender?.arrived();
        const { job: row, created, finished } = (await submitted).result;
        if (!created) {
          registered?.end();
          return { job: row };
        }
        // Without a wait the answer goes now; the api goes on writing the post.
        if (!finished || !wait) return { job: row, registered };
        if (await finished) {
          registered?.end();
          return { job: { ...row, state: 'completed' } };
        }
        // Handed to the ingest-worker: its finish is announced like any job's.
        return { job: row, registered };
      } catch (error) {
        registered?.end();
        throw error;
      }
    },
  };
}
