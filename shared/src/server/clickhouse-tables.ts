/**
 * The names of the time-series tables, for every read and write of them. On one server they are the
 * tables themselves. On a cluster (CLICKHOUSE_CLUSTER) the same names are Distributed tables over the
 * shards' replicated tables (named with LOCAL_SUFFIX, which only the migrations and the cluster's own
 * checks name): reads gather every shard, and writes are sent synchronously to the shard that owns the
 * series (clusterSettings in clickhouse.ts), so one name serves both layouts.
 */
export const POINTS_TABLE = 'points';
export const ROLLUP_MINUTE_TABLE = 'points_rollup_1m';
export const ROLLUP_HOUR_TABLE = 'points_rollup_1h';

/** The suffix of a cluster's replicated table under a Distributed one of the same name without it. */
export const LOCAL_SUFFIX = '_local';

/**
 * The sharding key of every time-series table: one series (organisation and instrument) lives on one
 * shard, so a read of an instrument and the deduplication by version never cross shards.
 */
export const SERIES_SHARDING_KEY = 'cityHash64(organization_id, instrument_id)';

/** Partitions of the points tables: 30-day slices of the epoch milliseconds (as in the migrations). */
export const POINTS_PARTITION_KEY = 'intDiv(ts, 2592000000)';

interface TableEngineQuery {
  query(params: { query: string; format: 'JSONEachRow' }): Promise<{ json<T>(): Promise<T[]> }>;
}

/**
 * Whether `points` of the client's database is a Distributed table (a cluster's schema), read from the
 * schema itself so that a process can never disagree with the migrations that made it.
 */
export async function pointsAreDistributed(clickhouse: TableEngineQuery): Promise<boolean> {
  const result = await clickhouse.query({
    query: `SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = '${POINTS_TABLE}'`, format: 'JSONEachRow',
  });
  return (await result.json<{ engine: string }>())[0]?.engine === 'Distributed';
}
