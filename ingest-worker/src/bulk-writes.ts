/**
 * The ClickHouse writes of bulk posts, shared by the worker's concurrent bulk jobs: chunks waiting at
 * the same time go out as one insert, and the rollups of posts finishing together are recomputed in
 * one pass (group-commit.ts). Feeds post many small batches at once; this keeps ClickHouse at a few
 * parts and statements per flush instead of three per post.
 *
 * A post's rollups are recomputed after its job completed, which recorded them as owed
 * (rollup-backlog.ts): the post's answer does not wait for them, and the posts completed while one
 * rollup flush runs share the next.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { GroupCommit, type FlushOutcome, type Sender } from '@bioprocess/shared/group-commit';
import { insertPoints, type PointRowsFormat } from './points-store.ts';
import type { Logger } from '@bioprocess/shared/server/logger';
import { recomputeRollupsTogether, type RollupRequest } from './rollups.ts';
import { clearRollupBacklog } from './rollup-backlog.ts';

/** Bytes per shared insert: a few bulk chunks (about 2 MB each). */
const INSERT_MAX_BYTES = 64 * 1024 * 1024;
/** Points per shared rollup pass: bounds ClickHouse's aggregation memory. */
const ROLLUP_MAX_POINTS = 2_000_000;
/**
 * How long a rollup flush waits at most for the bulk jobs already under way (about a point insert and
 * two PostgreSQL statements): each flush writes a part in each rollup table, 26 files each.
 */
const ROLLUP_MAX_WAIT_MS = 50;

export interface BulkWrites {
  /** Counts a started bulk job as heading for the rollups until it says it arrived (GroupCommit.setOut). */
  headingForRollups(): Sender;
  /** Inserts a chunk's point rows; resolves once they are stored. */
  insert(rows: Uint8Array, format: PointRowsFormat): Promise<FlushOutcome>;
  /**
   * Recomputes the rollups of a completed post of `points` points, then deletes its backlog row. A
   * failure is logged and leaves the row, which a backlog pass takes up.
   */
  recomputeRollups(request: OwedRollups): void;
  /** Resolves once every rollup recomputation asked for so far ended. */
  drain(): Promise<void>;
}

/** The rollups a completed post owes: its backlog row is `jobId`'s. */
export type OwedRollups = RollupRequest & { points: number; jobId: string };

export function createBulkWrites(clickhouse: ClickHouseClient, pool: Pool, logger: Logger): BulkWrites {
  // One committer per format: a flush is one INSERT, in one format (TSV only from jobs of older apis).
  const insertsOf = (format: PointRowsFormat) => new GroupCommit<Uint8Array>({
    flush: (chunks) => insertPoints(clickhouse, Readable.from(chunks, { objectMode: false }), format),
    weigh: (rows) => rows.length,
    maxWeight: INSERT_MAX_BYTES,
  });
  const inserts = { RowBinary: insertsOf('RowBinary'), TabSeparated: insertsOf('TabSeparated') };
  const rollups = new GroupCommit<OwedRollups>({
    flush: async (requests) => {
      await recomputeRollupsTogether(clickhouse, pool, requests);
      await clearRollupBacklog(pool, requests.map((request) => request.jobId));
    },
    weigh: (request) => request.points,
    maxWeight: ROLLUP_MAX_POINTS,
    awaitSendersMs: ROLLUP_MAX_WAIT_MS,
  });
  const underWay = new Set<Promise<void>>();
  return {
    headingForRollups: () => rollups.setOut(),
    insert: (rows, format) => inserts[format].submit(rows),
    recomputeRollups: (request) => {
      const recomputed = rollups.submit(request).then(() => undefined, (error: unknown) => {
        logger.warn({ err: error, jobId: request.jobId }, 'rollups of a completed bulk post not recomputed; the backlog pass will');
      });
      underWay.add(recomputed);
      void recomputed.finally(() => underWay.delete(recomputed));
    },
    drain: async () => {
      while (underWay.size > 0) await Promise.all(underWay);
    },
  };
}
