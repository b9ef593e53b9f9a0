/**
 * The backlog pass: the rollups completed bulk posts owe (PostgreSQL `rollup_backlog`, see
 * shared/src/server/owed-rollups.ts) are recomputed by whoever completed them. A row outlives that only
 * when its process (a worker, or the api for the small posts it writes itself) died, or its
 * recomputation failed (ClickHouse down): each ingest-worker's backlog pass recomputes rows left alone
 * for ROLLUP_BACKLOG_GRACE_MS, locking them so that several workers never take the same row, and
 * deletes them in the same transaction.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Logger } from '@bioprocess/shared/server/logger';
import { runPeriodically, type PeriodicPass } from '@bioprocess/shared/server/periodic-pass';
import { withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { recomputeRollupsTogether } from '@bioprocess/shared/server/rollups';

/** A row older than this has no flush coming (its worker died or its flush failed); a pass takes it. */
export const ROLLUP_BACKLOG_GRACE_MS = 5_000;
/** How often each worker looks for such rows. */
const ROLLUP_BACKLOG_PASS_MS = 1_000;
/** Rows one pass recomputes at most (one deduplicating pass per table, bounded by recomputeRollupsTogether). */
const ROWS_PER_PASS = 500;

/** Recomputes the rollups of backlog rows no flush took care of; answers how many. */
export async function recomputeLeftBacklog(pool: Pool, clickhouse: ClickHouseClient, graceMs = ROLLUP_BACKLOG_GRACE_MS): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; organization_id: string; instrument_ids: string[]; start_ms: string; end_ms: string }>(
      `SELECT id, organization_id, instrument_ids::text[] AS instrument_ids, start_ms, end_ms FROM rollup_backlog
        WHERE recorded_at < now() - $1 * interval '1 millisecond'
        ORDER BY id LIMIT ${ROWS_PER_PASS} FOR UPDATE SKIP LOCKED`,
      [graceMs],
    );
    if (rows.length === 0) return 0;
    // Exact whatever the rows share: recomputed from the deduplicated points, never from a post's figures.
    await recomputeRollupsTogether(clickhouse, pool, rows.map((row) => ({
      range: {
        organizationId: Number(row.organization_id),
        instrumentIds: row.instrument_ids.map(Number),
        startMs: Number(row.start_ms),
        endMs: Number(row.end_ms),
      },
    })));
    await client.query('DELETE FROM rollup_backlog WHERE id = ANY($1::bigint[])', [rows.map((row) => row.id)]);
    return rows.length;
  });
}

export function startRollupBacklogPass(options: { pg: Pool; clickhouse: ClickHouseClient; logger: Logger }): PeriodicPass<number> {
  return runPeriodically(async () => {
    const recomputed = await recomputeLeftBacklog(options.pg, options.clickhouse);
    if (recomputed > 0) options.logger.info({ recomputed }, 'rollups left owing recomputed');
    return recomputed;
  }, { intervalMs: ROLLUP_BACKLOG_PASS_MS, logger: options.logger, name: 'rollup backlog' });
}
