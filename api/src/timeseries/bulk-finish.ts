/**
 * Small bulk posts written by the api itself. Feeds post a few seconds of readings at a time and wait
 * for them; through the queue, each batch of their posts costs a delivery, a worker's job, a read of
 * its rows back from PostgreSQL and four worker statements, about half of a feed's wait. Instead, once
 * a batch's job rows are committed (as `running`, with their data and the record that their rollups
 * are owed: bulk-batches.ts), the api inserts their rows into ClickHouse and answers them: they are
 * queryable, and reads of rollups wait for the owed ones. The statement that completes them follows,
 * shared by the posts inserted meanwhile, and their rollups are stored after it, on a thread of their
 * own (owed-rollups-thread.ts). So a post waits for two statements, not three; its job record
 * reads `running` for the few milliseconds until its completion is written. Batches whose rows are
 * committed while an insert runs share the next one: one part for many posts.
 *
 * Anything out of the ordinary hands the batch to the ingest-worker, which writes it from its recorded
 * data exactly as it writes any other post: ClickHouse failing or stuck (the post then waits for the
 * worker), PostgreSQL failing at completion, or a range deletion accepted after a post (the worker
 * re-applies it over the post's rows, as it would over rows answered a moment earlier). So does a
 * batch that would take the rows the api holds for ClickHouse past BULK_WRITES_IN_API_MAX_BYTES
 * (ClickHouse slow or stuck while feeds go on posting without waiting). The posts are then flagged
 * `retried`: some of their rows may already be stored, so their
 * rollups are recomputed from the deduplicated points. When even that flag cannot be written, nothing
 * is queued: the reconciler finds the jobs still `running` a few seconds later and delivers them, flag
 * first. A process killed at any line leaves the same state: running jobs with their data, which the
 * reconciler hands on; rows inserted twice are identical and read once.
 */
import { GroupCommit, type Sender } from '@bioprocess/shared/group-commit';
import { completeBulkPosts, markRetried } from '@bioprocess/shared/server/ingest-job-store';
import { insertPoints } from '@bioprocess/shared/server/points-store';
import { MAX_POINT_ROW_BYTES, POINT_ROWS_FORMAT } from '@bioprocess/shared/point-rows';
import type { BulkRequest } from '@bioprocess/shared/ingest/requests';
import type { IngestJobRow } from '../ingest-jobs/jobs.ts';
import type { AppDeps } from '../platform/deps.ts';
import { enqueueIngest } from './enqueue.ts';
import { createOwedRollupsThread } from './owed-rollups-thread.ts';

/** A recorded post: its job row (`running`), its request, its point rows and, when it stored each key once, its minute figures (encoded). */
export interface RecordedPost {
  job: IngestJobRow;
  request: BulkRequest;
  rows: Uint8Array;
  minuteFigures?: Uint8Array;
}

const rangeOf = (post: RecordedPost) => ({
  organizationId: Number(post.job.organization_id), instrumentIds: post.request.instrument_ids, startMs: post.request.start_ms, endMs: post.request.end_ms,
});

export interface BulkFinish {
  /**
   * Writes and completes the posts (with those of other batches recorded meanwhile); answers, per post,
   * true once its rows are stored (its completion follows), false when it was handed to the worker.
   */
  finish(posts: readonly RecordedPost[]): Array<Promise<boolean>>;
  /**
   * Counts a post as on its way to an insert (being read or recorded) until it says it arrived: its
   * rows were given to `finish`, or it takes another path or was refused.
   */
  setOut(): Sender;
  /** Waits for the posts being finished and their rollups (a graceful shutdown). */
  close(): Promise<void>;
}

/** Bytes per insert: a few hundred feed posts. */
const INSERT_MAX_BYTES = 16 * 1024 * 1024;
/**
 * How long an insert may take before the api gives up and hands the batch to the worker. The reconciler
 * delivers a job left running for its interval (5 s) anyway; this only frees the posts behind it.
 */
const INSERT_TIMEOUT_MS = 10_000;
/**
 * How long an insert waits at most for the posts on their way to it (being read or recorded). Feeds
 * waiting for their answers keep a few dozen posts in flight, spread over reading, recording and
 * inserting; an insert that goes without the ones about to be recorded makes a part for a third of
 * them, and each part costs ClickHouse about as much to write and merge as a hundred more rows in it.
 * Measured with the bench's feeds (32 clients): a fifth fewer statements, 40% fewer rows merged and
 * about 12% more points per second than an insert that waited for no one.
 */
const INSERT_AWAITS_POSTS_MS = 25;
/**
 * An insert of fewer bytes of rows than this (about a hundred points) starts at most every
 * SMALL_INSERT_INTERVAL_MS: a part costs ClickHouse as much to write and merge as a hundred more rows
 * in it. A thousand feeds posting one reading a second each otherwise made well over a hundred
 * inserts a second of a few points each, and ClickHouse spent two thirds of a core on them, mostly
 * merging their parts. Inserts worth their part, as busy feeds posting a few seconds of readings
 * make, go at once: spacing every insert by 40 ms cost busy feeds a quarter of their throughput.
 */
const SMALL_INSERT_BYTES = 100 * MAX_POINT_ROW_BYTES;
const SMALL_INSERT_INTERVAL_MS = 50;
/** Points per completing statement: a few batches' posts. */
const COMPLETION_MAX_POINTS = 200_000;
/**
 * A completing statement starts at most this often: the posts are answered already, so the posts of
 * several inserts may share it. Feeds posting all the time otherwise completed about ten posts a
 * statement, as many statements as job inserts.
 */
const COMPLETION_MIN_INTERVAL_MS = 50;
const TOO_MANY_HELD = 'the api holds as many rows for ClickHouse as it may already';

export function createBulkFinish(deps: Pick<AppDeps, 'env' | 'pg' | 'clickhouse' | 'queues' | 'logger'>): BulkFinish {
  const rollups = createOwedRollupsThread(deps.env, deps.logger);
  const handOver = async (posts: readonly RecordedPost[], reason: string, error?: unknown) => {
    const jobIds = posts.map((post) => post.job.id);
    deps.logger.warn({ err: error, ingestJobIds: jobIds }, `bulk posts handed to the ingest-worker: ${reason}`);
    try {
      await markRetried(deps.pg, jobIds);
    } catch (markError) {
      deps.logger.warn({ err: markError, ingestJobIds: jobIds }, 'bulk posts not flagged as retried; the reconciler will deliver them');
      return;
    }
    await enqueueIngest(deps, posts.map((post) => post.job));
  };
  /**
   * Completes posts whose rows are stored (and answered): their jobs' state, their recorded data
   * dropped, then their rollups. Whatever goes wrong hands them to the worker, which writes them again
   * from their recorded data and completes them; their rollups stay owed meanwhile.
   */
  const completing = new GroupCommit<RecordedPost>({
    flush: async (posts) => {
      let completed: boolean;
      try {
        completed = await completeBulkPosts(deps.pg, posts.map((post) => ({ jobId: post.job.id, points: post.request.points, range: rangeOf(post) })), {
          unlessDeletionAfter: Math.min(...posts.map((post) => Number(post.job.version_seq))),
          dropData: true,
          owedSinceRecorded: true,
        });
      } catch (error) {
        await handOver(posts, 'they could not be completed', error);
        return;
      }
      if (!completed) {
        await handOver(posts, 'a range deletion was accepted after them');
        return;
      }
      const sender = rollups.headingForRollups();
      for (const post of posts) {
        // Inserted once, by this api: with its figures, its rollups may compose onto the stored ones.
        const own = post.minuteFigures && { ownRows: { versionSeq: post.job.version_seq }, minuteFigures: post.minuteFigures };
        rollups.recompute({ jobId: post.job.id, points: post.request.points, range: rangeOf(post), ...own });
      }
      sender.arrived();
    },
    weigh: (post) => post.request.points,
    maxWeight: COMPLETION_MAX_POINTS,
    minIntervalMs: COMPLETION_MIN_INTERVAL_MS,
  });
  const finishing = new GroupCommit<RecordedPost, { completed: Promise<void> } | null>({
    flush: async (posts) => {
      try {
        await insertPoints(deps.clickhouse, Buffer.concat(posts.map((post) => post.rows)), POINT_ROWS_FORMAT, { timeoutMs: INSERT_TIMEOUT_MS });
      } catch (error) {
        await handOver(posts, 'their rows could not be inserted', error);
        return posts.map(() => null);
      }
      // Queryable now: the posts are answered while their completion is written.
      const completion = completing.setOut();
      // Wrapped: a promise answered from a promise's callback would be waited for.
      const completions = posts.map((post) => ({ completed: completing.submit(post).then(() => undefined) }));
      completion.arrived();
      return completions;
    },
    weigh: (post) => post.rows.length,
    maxWeight: INSERT_MAX_BYTES,
    // The posts of one batch are submitted in the same turn, and go out in one insert with those
    // recorded meanwhile.
    awaitSendersMs: INSERT_AWAITS_POSTS_MS,
    minIntervalMs: SMALL_INSERT_INTERVAL_MS,
    spacedBelowWeight: SMALL_INSERT_BYTES,
  });
  /** Inserts and completions under way, which a graceful shutdown waits for. */
  const underWay = new Set<Promise<unknown>>();
  /** Bytes of rows waiting for or in an insert: bounded, so a stuck ClickHouse cannot fill the api's memory. */
  let heldBytes = 0;
  const track = <T>(work: Promise<T>, bytes = 0) => {
    heldBytes += bytes;
    underWay.add(work);
    void work.finally(() => {
      heldBytes -= bytes;
      underWay.delete(work);
    });
    return work;
  };
  return {
    setOut: () => finishing.setOut(),
    finish: (posts) => {
      const bytes = posts.reduce((sum, post) => sum + post.rows.length, 0);
      if (heldBytes > 0 && heldBytes + bytes > deps.env.BULK_WRITES_IN_API_MAX_BYTES) {
        // Nothing of theirs reached ClickHouse: delivered as they are (not flagged retried).
        deps.logger.warn({ ingestJobIds: posts.map((post) => post.job.id), heldBytes }, `bulk posts handed to the ingest-worker: ${TOO_MANY_HELD}`);
        const handedOver = track(enqueueIngest(deps, posts.map((post) => post.job)).then(() => false), bytes);
        return posts.map(() => handedOver);
      }
      const batch = finishing.setOut();
      // A recomputation of rollups waits a moment for the posts being inserted and completed: the
      // next few batches' rollups go out in one statement per table.
      const toRollups = rollups.headingForRollups();
      const inserted = posts.map((post) => track(finishing.submit(post).then(({ result }) => result, () => null), post.rows.length));
      batch.arrived();
      const completed = inserted.map((insert) => track(insert.then((outcome) => outcome?.completed).catch((error: unknown) => {
        // The job stays running with its data: the reconciler delivers it to the worker.
        deps.logger.warn({ err: error }, 'bulk posts neither completed nor handed to the ingest-worker; the reconciler will deliver them');
      })));
      void Promise.allSettled(completed).then(() => toRollups.arrived());
      return inserted.map((insert) => insert.then((outcome) => outcome !== null));
    },
    close: async () => {
      while (underWay.size > 0) await Promise.all(underWay);
      await rollups.close();
    },
  };
}
