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
import { GroupCommit, type FlushOutcome, type Sender } from '@bioprocess/shared/group-commit';
import { insertPoints, type PointRowsFormat } from './points-store.ts';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createOwedRollupsFlush, type OwedRollups } from './rollups/owed.ts';

/** Bytes per shared insert: a few bulk chunks (about 2 MB each). */
const INSERT_MAX_BYTES = 64 * 1024 * 1024;

export interface BulkWrites {
  /** Counts a started bulk job as heading for the rollups until it says it arrived (GroupCommit.setOut). */
  headingForRollups(): Sender;
  /** Inserts a chunk's point rows; resolves once they are stored. */
  insert(rows: Uint8Array, format: PointRowsFormat): Promise<FlushOutcome>;
  /**
   * Recomputes the rollups of a completed post, then deletes its backlog row. A failure is logged and
   * leaves the row, which a backlog pass takes up.
   */
  recomputeRollups(request: OwedRollups): void;
  /** Resolves once every rollup recomputation asked for so far ended. */
  drain(): Promise<void>;
}

export function createBulkWrites(clickhouse: ClickHouseClient, pool: Pool, logger: Logger): BulkWrites {
  // One committer per format: a flush is one INSERT, in one format (TSV only from jobs of older apis).
  const insertsOf = (format: PointRowsFormat) => new GroupCommit<Uint8Array>({
    flush: (chunks) => insertPoints(clickhouse, Readable.from(chunks, { objectMode: false }), format),
    weigh: (rows) => rows.length,
    maxWeight: INSERT_MAX_BYTES,
  });
  const inserts = { RowBinary: insertsOf('RowBinary'), TabSeparated: insertsOf('TabSeparated') };
  const rollups = createOwedRollupsFlush(clickhouse, pool, logger);
  return {
    headingForRollups: () => rollups.headingForRollups(),
    insert: (rows, format) => inserts[format].submit(rows),
    recomputeRollups: (request) => rollups.recompute(request),
    drain: () => rollups.drain(),
  };
}
