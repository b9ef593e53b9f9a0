/**
 * The rollup backlog (PostgreSQL `rollup_backlog`): bulk posts that completed before their rollups were
 * recomputed. The statement that completes a post records its range here (job-store.ts
 * markBulkCompleted); the worker's rollup flush deletes the row once the rollups are stored
 * (bulk-writes.ts). Reads of rollups wait for the rows recorded before them
 * (api/src/timeseries/rollup-backlog.ts), so a post's answer need not wait for its rollups while every
 * read still sees them.
 *
 * A row outlives its flush only when the worker died or its flush failed (ClickHouse down): each
 * ingest-worker's backlog pass recomputes rows left alone for ROLLUP_BACKLOG_GRACE_MS, locking them so
 * that several workers never take the same row, and deletes them in the same transaction.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Logger } from '@bioprocess/shared/server/logger';
import { runPeriodically, type PeriodicPass } from '@bioprocess/shared/server/periodic-pass';
import { withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { recomputeRollupsTogether } from './rollups.ts';

/** A row older than this has no flush coming (its worker died or its flush failed); a pass takes it. */
export const ROLLUP_BACKLOG_GRACE_MS = 5_000;
/** How often each worker looks for such rows. */
const ROLLUP_BACKLOG_PASS_MS = 1_000;
/** Rows one pass recomputes at most (one deduplicating pass per table, bounded by recomputeRollupsTogether). */
const ROWS_PER_PASS = 500;

/** Deletes the backlog rows of posts whose rollups were just stored. */
export async function clearRollupBacklog(pool: Pool, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await pool.query('DELETE FROM rollup_backlog WHERE job_id = ANY($1::uuid[])', [jobIds]);
}

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
