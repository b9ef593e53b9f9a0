/**
 * The rollups completed bulk posts owe. The statement that completes a post records its range in
 * PostgreSQL (`rollup_backlog`), so its answer need not wait for its rollups; the worker that completed
 * it then recomputes them (recompute.ts) and deletes the row. Posts completed while one recomputation
 * runs share the next: each writes a part in each rollup table. Reads of rollups wait for the rows
 * recorded before them (api/src/timeseries/rollup-backlog.ts). A row outlives its recomputation only
 * when its worker died or the recomputation failed (ClickHouse down): every worker's backlog pass
 * recomputes rows left alone for ROLLUP_BACKLOG_GRACE_MS, locking them so that two workers never take
 * the same row, and deletes them in the same transaction.
 */
import { GroupCommit, type Sender } from '@bioprocess/shared/group-commit';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Logger } from '@bioprocess/shared/server/logger';
import { runPeriodically, type PeriodicPass } from '@bioprocess/shared/server/periodic-pass';
import { withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { recomputeRollups, type RollupRequest } from './recompute.ts';

/** Points per shared recomputation: bounds one flush's work. */
const FLUSH_MAX_POINTS = 2_000_000;
/**
 * How long a recomputation waits at most for the bulk jobs this worker has started (their rows are
 * being inserted): each recomputation writes a part in each rollup table, and posts a few
 * milliseconds apart then share them.
 */
const FLUSH_AWAITS_JOBS_MS = 50;
/**
 * A recomputation starts at most this often: feeds keep posts completing all the time, and without a
 * pause each recomputation took the few posts completed during the last one. Reads of rollups wait
 * for the ones owed: at most this much longer.
 */
const FLUSH_MIN_INTERVAL_MS = 250;
/** A row older than this has no recomputation coming (its worker died or its recomputation failed). */
export const ROLLUP_BACKLOG_GRACE_MS = 5_000;
/** How often each worker looks for such rows. */
const BACKLOG_PASS_MS = 1_000;
/** Rows one backlog pass recomputes at most. */
const ROWS_PER_PASS = 500;

/** The rollups a completed post of `points` points owes: its backlog row is `jobId`'s. */
export type OwedRollups = RollupRequest & { points: number; jobId: string };

export interface OwedRollupsFlush {
  /** Counts a started bulk job as on its way to the rollups until it says it arrived (GroupCommit.setOut). */
  headingForRollups(): Sender;
  /** Recomputes a completed post's rollups, then deletes its backlog row; a failure leaves the row to the backlog pass. */
  recompute(request: OwedRollups): void;
  /** Resolves once every recomputation asked for so far ended. */
  drain(): Promise<void>;
}

export function createOwedRollupsFlush(clickhouse: ClickHouseClient, pool: Pool, logger: Logger): OwedRollupsFlush {
  const flush = new GroupCommit<OwedRollups>({
    flush: async (requests) => {
      await recomputeRollups(clickhouse, pool, requests);
      await pool.query('DELETE FROM rollup_backlog WHERE job_id = ANY($1::uuid[])', [requests.map((request) => request.jobId)]);
    },
    weigh: (request) => request.points,
    maxWeight: FLUSH_MAX_POINTS,
    awaitSendersMs: FLUSH_AWAITS_JOBS_MS,
    minIntervalMs: FLUSH_MIN_INTERVAL_MS,
  });
  const underWay = new Set<Promise<void>>();
  return {
    headingForRollups: () => flush.setOut(),
    recompute: (request) => {
      const recomputed = flush.submit(request).then(() => undefined, (error: unknown) => {
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

/** Recomputes the rollups of backlog rows no recomputation took care of; answers how many. */
export async function recomputeLeftBacklog(pool: Pool, clickhouse: ClickHouseClient, graceMs = ROLLUP_BACKLOG_GRACE_MS): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; organization_id: string; instrument_ids: string[]; start_ms: string; end_ms: string }>(
      `SELECT id, organization_id, instrument_ids::text[] AS instrument_ids, start_ms, end_ms FROM rollup_backlog
        WHERE recorded_at < now() - $1 * interval '1 millisecond'
        ORDER BY id LIMIT ${ROWS_PER_PASS} FOR UPDATE SKIP LOCKED`,
      [graceMs],
    );
    if (rows.length === 0) return 0;
    await recomputeRollups(clickhouse, pool, rows.map((row) => ({
      range: { organizationId: Number(row.organization_id), instrumentIds: row.instrument_ids.map(Number), startMs: Number(row.start_ms), endMs: Number(row.end_ms) },
    })));
    await client.query('DELETE FROM rollup_backlog WHERE id = ANY($1::bigint[])', [rows.map((row) => row.id)]);
    return rows.length;
  });
}

/**
 * On a cluster: recomputes from every replica the ranges recorded while one did not answer
 * (recheck-ranges.ts), locking them so that two workers never take the same row, and deletes them in
 * the same transaction; fails, leaving them, while a replica still does not answer. Answers how many.
 */
export async function recheckRollups(pool: Pool, clickhouse: ClickHouseClient): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; organization_id: string; instrument_ids: string[]; start_ms: string; end_ms: string }>(
      `SELECT id, organization_id, instrument_ids::text[] AS instrument_ids, start_ms, end_ms FROM rollup_recheck
        ORDER BY id LIMIT ${ROWS_PER_PASS} FOR UPDATE SKIP LOCKED`,
    );
    if (rows.length === 0) return 0;
    await recomputeRollups(clickhouse, pool, rows.map((row) => ({
      range: { organizationId: Number(row.organization_id), instrumentIds: row.instrument_ids.map(Number), startMs: Number(row.start_ms), endMs: Number(row.end_ms) },
    })), { everyReplicaOnly: true });
    await client.query('DELETE FROM rollup_recheck WHERE id = ANY($1::bigint[])', [rows.map((row) => row.id)]);
    return rows.length;
  });
}

/** How often a recheck that failed (a replica still down) is logged. */
const RECHECK_PROBLEM_LOG_MS = 30_000;

export function startRollupBacklogPass(options: { pg: Pool; clickhouse: ClickHouseClient; logger: Logger }): PeriodicPass<number> {
  let lastRecheckProblem = 0;
  return runPeriodically(async () => {
    const recomputed = await recomputeLeftBacklog(options.pg, options.clickhouse);
    if (recomputed > 0) options.logger.info({ recomputed }, 'rollups left owing recomputed');
    // Its own failure (a replica still down, for as long as it is) does not hold the backlog up.
    const rechecked = await recheckRollups(options.pg, options.clickhouse).catch((error: unknown) => {
      if (Date.now() - lastRecheckProblem > RECHECK_PROBLEM_LOG_MS) {
        lastRecheckProblem = Date.now();
        options.logger.warn({ err: error }, 'rollups recomputed while a ClickHouse replica did not answer wait for every replica to answer');
      }
      return 0;
    });
    if (rechecked > 0) options.logger.info({ rechecked }, 'rollups recomputed while a replica did not answer recomputed from every replica');
    return recomputed;
  }, { intervalMs: BACKLOG_PASS_MS, logger: options.logger, name: 'rollup backlog' });
}
