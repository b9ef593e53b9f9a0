/**
 * Where a recomputation reads the rows it aggregates.
 *
 * On one server: the tables. On a cluster the Distributed tables read one replica per shard, and
 * replication is asynchronous: a part another process wrote to the shard's other replica a moment ago
 * (its server's connection to the first replica had failed, or the first replica was down) is not
 * there yet, and a minute recomputed from that replica comes out short, for good. So a cluster's
 * recomputation reads every replica of the shard (the `<cluster>_replicas` cluster of the servers'
 * configuration: each server of the cluster listed as a shard of its own) and takes per key the row
 * of the highest version: every acknowledged row is on the replica that acknowledged it, so while all
 * replicas answer the recomputation sees every row written before it, whichever replica took it.
 * Rows come once per replica holding them, so every minute goes through the per-key deduplication
 * (the single server's shortcut for minutes whose keys each have one row would count them twice).
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { LOCAL_SUFFIX, POINTS_TABLE, ROLLUP_HOUR_TABLE, ROLLUP_MINUTE_TABLE } from '@bioprocess/shared/server/clickhouse-tables';

/** The cluster listing every server of cluster `name` as a shard of its own, in the servers' configuration. */
export const replicasClusterOf = (name: string) => `${name}_replicas`;

export interface RollupSources {
  points: string;
  minuteRollups: string;
  hourRollups: string;
  /** Rows may come once per replica: every minute is deduplicated per key. */
  rowsRepeat: boolean;
}

/** The tables themselves: one server, or a cluster's Distributed tables (one replica per shard). */
export const TABLE_SOURCES: RollupSources = {
  points: POINTS_TABLE, minuteRollups: ROLLUP_MINUTE_TABLE, hourRollups: ROLLUP_HOUR_TABLE, rowsRepeat: false,
};

export type RollupLayout =
  | { cluster: null }
  | { cluster: string; replicasCluster: string; everyReplica: RollupSources };

interface LayoutQuery {
  query(params: { query: string; format: 'JSONEachRow' }): Promise<{ json<T>(): Promise<T[]> }>;
}

const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * Reads the layout from the schema and the servers' configuration (so a process cannot disagree with
 * the migrations); null while `points` does not exist yet.
 */
async function readLayout(clickhouse: LayoutQuery): Promise<RollupLayout | null> {
  const tables = await (await clickhouse.query({
    query: `SELECT engine_full, currentDatabase() AS database FROM system.tables WHERE database = currentDatabase() AND name = '${POINTS_TABLE}'`,
    format: 'JSONEachRow',
  })).json<{ engine_full: string; database: string }>();
  if (!tables[0]) return null;
  const cluster = /^Distributed\(\s*'?(\w+)'?\s*,/.exec(tables[0].engine_full)?.[1];
  if (!cluster) return { cluster: null };
  const replicasCluster = replicasClusterOf(cluster);
  const servers = await (await clickhouse.query({
    query: `SELECT cluster, count() AS servers, uniqExact(shard_num) AS shards FROM system.clusters
             WHERE cluster IN (${quoted(cluster)}, ${quoted(replicasCluster)}) GROUP BY cluster`,
    format: 'JSONEachRow',
  })).json<{ cluster: string; servers: string; shards: string }>();
  const of = (name: string) => servers.find((row) => row.cluster === name);
  const all = of(cluster);
  const each = of(replicasCluster);
  if (!all || !each || Number(each.shards) !== Number(each.servers) || Number(each.servers) !== Number(all.servers)) {
    throw new Error(`the ClickHouse servers' configuration has no cluster '${replicasCluster}' listing each of the ${all?.servers ?? '?'} servers of '${cluster}' as a shard of its own; rollups on a cluster are recomputed from every replica (docs/scale.md)`);
  }
  const everyReplica = (table: string) => `cluster(${quoted(replicasCluster)}, ${quoted(tables[0]!.database)}, ${quoted(`${table}${LOCAL_SUFFIX}`)})`;
  return {
    cluster,
    replicasCluster,
    everyReplica: {
      points: everyReplica(POINTS_TABLE), minuteRollups: everyReplica(ROLLUP_MINUTE_TABLE), hourRollups: everyReplica(ROLLUP_HOUR_TABLE), rowsRepeat: true,
    },
  };
}

const layouts = new WeakMap<object, Promise<RollupLayout | null>>();

/** The client's layout, read once per client (a failed read, or one before the migrations, is not kept). */
export async function rollupLayout(clickhouse: ClickHouseClient | LayoutQuery): Promise<RollupLayout> {
  let layout = layouts.get(clickhouse);
  if (!layout) {
    layout = readLayout(clickhouse);
    layouts.set(clickhouse, layout);
    layout.then((known) => { if (!known) layouts.delete(clickhouse); }, () => layouts.delete(clickhouse));
  }
  return (await layout) ?? { cluster: null };
}

/**
 * Whether a statement over every replica failed because a server did not answer (refused, reset, timed
 * out, or cut while it ran: ClickHouse's NETWORK_ERROR, SOCKET_TIMEOUT, ALL_CONNECTION_TRIES_FAILED,
 * ATTEMPT_TO_READ_AFTER_EOF, as a server reports them about another). 18.16 has no per-server error
 * counts to ask instead, and the cluster() table function cannot even probe a cluster whose first
 * server is down (it reads the table's structure from that one).
 */
export function serverDidNotAnswer(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /\bCode: (?:32|209|210|279)\b|NetException|Connection refused|Connection reset/.test(message);
}
