/**
 * The ClickHouse writes of bulk posts, shared by the worker's concurrent bulk jobs: chunks waiting at
 * the same time go out as one insert, and the rollups of posts finishing together are recomputed in
 * one pass (group-commit.ts). Feeds post many small batches at once; this keeps ClickHouse at a few
 * parts and statements per flush instead of three per post.
 *
 * A post's rollups are recomputed after its job completed, which recorded them as owed
 * (rollups/owed.ts): the post's answer does not wait for them.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { GroupCommit, type Sender } from '@bioprocess/shared/group-commit';
import { POINT_ROWS_FORMAT } from '@bioprocess/shared/point-rows';
import { insertPoints, type PointRowsLayout } from './points-store.ts';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createOwedRollupsFlush, type OwedRollups } from './rollups/owed.ts';

/** Bytes per shared insert: a few bulk chunks (about 2 MB each). */
const INSERT_MAX_BYTES = 64 * 1024 * 1024;
/**
 * How long an insert waits at most for the bulk jobs this worker has started (reading their records
 * and rows): feeds' batches arrive a few milliseconds apart, and each insert is a part in ClickHouse,
 * written and merged again, costing about as much as a hundred more rows in it.
 */
const INSERT_AWAITS_JOBS_MS = 10;

/** A started bulk job, counted until it submitted its rows to an insert and its posts to the rollups (or ended). */
export interface BulkJobOnItsWay {
  toInsert: Sender;
  toRollups: Sender;
}

export interface BulkWrites {
  /** Counts a started bulk job as on its way to an insert and to the rollups (GroupCommit.setOut). */
  setOut(): BulkJobOnItsWay;
  /** Inserts a chunk's point rows (the job's sender arrives with them); resolves once they are stored. */
  insert(rows: Uint8Array, layout: PointRowsLayout, sender?: Sender): Promise<void>;
  /**
   * Recomputes the rollups of a completed post, then deletes its backlog row. A failure is logged and
   * leaves the row, which a backlog pass takes up.
   */
  recomputeRollups(request: OwedRollups): void;
  /** Resolves once every rollup recomputation asked for so far ended. */
  drain(): Promise<void>;
}

export function createBulkWrites(clickhouse: ClickHouseClient, pool: Pool, logger: Logger): BulkWrites {
  // One committer per layout: a flush is one INSERT, in one format and column list (the older
  // layouts only from jobs of older apis).
  const insertsOf = (layout: PointRowsLayout) => new GroupCommit<Uint8Array>({
    flush: (chunks) => insertPoints(clickhouse, Readable.from(chunks, { objectMode: false }), layout),
    weigh: (rows) => rows.length,
    maxWeight: INSERT_MAX_BYTES,
    awaitSendersMs: INSERT_AWAITS_JOBS_MS,
  });
  const inserts: Record<PointRowsLayout, GroupCommit<Uint8Array>> = {
    RowBinaryWithSource: insertsOf('RowBinaryWithSource'), RowBinary: insertsOf('RowBinary'), TabSeparated: insertsOf('TabSeparated'),
  };
  const rollups = createOwedRollupsFlush(clickhouse, pool, logger);
  return {
    // Older apis' jobs are rare: only the current layout's inserts wait for the jobs on their way.
    setOut: () => ({ toInsert: inserts[POINT_ROWS_FORMAT].setOut(), toRollups: rollups.headingForRollups() }),
    insert: (rows, layout, sender) => {
      const inserted = inserts[layout].submit(rows);
      sender?.arrived();
      return inserted;
    },
    recomputeRollups: (request) => rollups.recompute(request),
    drain: () => rollups.drain(),
  };
}
