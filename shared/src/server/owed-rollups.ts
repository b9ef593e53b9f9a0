/**
 * The rollups completed bulk posts owe. The statement that completes a post records its range in
 * PostgreSQL (`rollup_backlog`), so its answer need not wait for its minute and hour rollups; whoever
 * completed it (the ingest-worker, or the api for the small posts it writes itself) then recomputes
 * them here and deletes the row. Posts completed while one recomputation runs share the next: each
 * writes a part in each rollup table. Reads of rollups wait for the rows recorded before them
 * (api/src/timeseries/rollup-backlog.ts); a row whose recomputation never came (its process died, or
 * ClickHouse was down) is taken up by the ingest-worker's backlog pass.
 */
import type { Sender } from '../group-commit.ts';
import { GroupCommit } from '../group-commit.ts';
import type { ClickHouseClient } from './clickhouse.ts';
import type { Logger } from './logger.ts';
import type { Pool } from './postgres.ts';
import { RollupChains } from './rollup-chains.ts';
import { recomputeRollupsTogether, type RollupRequest } from './rollups.ts';

/** Points per shared recomputation: bounds ClickHouse's aggregation memory. */
const ROLLUP_MAX_POINTS = 2_000_000;
/**
 * How long a recomputation waits at most for the posts already on their way to it (about a point
 * insert and two PostgreSQL statements): each one writes a part in each rollup table, 26 files each.
 */
const ROLLUP_MAX_WAIT_MS = 50;
/**
 * A recomputation starts at most this often. Feeds keep posts completing all the time; without a pause
 * each recomputation took the few posts completed during the last one, and in the bench's feeds
 * workload (2,400 posts in about two seconds) the api composed 75 times: 75 ClickHouse lookups, 150
 * rollup parts and 300 PostgreSQL statements. Spaced so, it composes about 20 times, ClickHouse's CPU
 * time fell from 1.0 s to 0.7 s and the feeds rate rose by 9%. Reads of rollups wait for the ones
 * owed (rollup-backlog.ts): at most this much longer.
 */
const ROLLUP_MIN_INTERVAL_MS = 100;

/** The rollups a completed post of `points` points owes: its backlog row is `jobId`'s. */
export type OwedRollups = RollupRequest & { points: number; jobId: string };

export interface OwedRollupsFlush<R extends { points: number; jobId: string } = OwedRollups> {
  /** Counts a post as on its way to the rollups until it says it arrived (GroupCommit.setOut). */
  headingForRollups(): Sender;
  /**
   * Recomputes a completed post's rollups, then deletes its backlog row. A failure is logged and
   * leaves the row, which a backlog pass takes up.
   */
  recompute(request: R): void;
  /** Resolves once every recomputation asked for so far ended. */
  drain(): Promise<void>;
}

/** Deletes the backlog rows of posts whose rollups were just stored. */
export async function clearRollupBacklog(pool: Pool, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await pool.query('DELETE FROM rollup_backlog WHERE job_id = ANY($1::uuid[])', [jobIds]);
}

/** Stores the rollups of posts committed together (composed onto `chains` where they may be), then deletes their backlog rows. */
export async function storeOwedRollups(clickhouse: ClickHouseClient, pool: Pool, chains: RollupChains, requests: readonly OwedRollups[]): Promise<void> {
  await recomputeRollupsTogether(clickhouse, pool, requests, { chains });
  await clearRollupBacklog(pool, requests.map((request) => request.jobId));
}

/**
 * Commits owed rollups together, one commit at a time (a feed's next post composes onto the rows the
 * previous one stored); `store` stores a commit's rollups and deletes their backlog rows.
 */
export function owedRollupsCommitter<R extends { points: number; jobId: string }>(store: (requests: R[]) => Promise<void>, logger: Logger): OwedRollupsFlush<R> {
  const rollups = new GroupCommit<R>({
    flush: store,
    weigh: (request) => request.points,
    maxWeight: ROLLUP_MAX_POINTS,
    awaitSendersMs: ROLLUP_MAX_WAIT_MS,
    minIntervalMs: ROLLUP_MIN_INTERVAL_MS,
  });
  const underWay = new Set<Promise<void>>();
  return {
    headingForRollups: () => rollups.setOut(),
    recompute: (request) => {
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

/** Owed rollups stored by this process, with the chains they compose onto. */
export function createOwedRollupsFlush(clickhouse: ClickHouseClient, pool: Pool, logger: Logger): OwedRollupsFlush {
  const chains = new RollupChains();
  return owedRollupsCommitter((requests) => storeOwedRollups(clickhouse, pool, chains, requests), logger);
}
