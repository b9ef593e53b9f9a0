/**
 * A CSV upload's private staging table: a copy of `points` (same engine, partitioning and order) that
 * its rows are written to while the file is read and validated. Nothing in it is visible to readers;
 * once the whole file passed, its partitions are attached to `points` (ClickHouse links the parts,
 * no data is copied), so a rejected upload changes nothing and an accepted one appears at once.
 *
 * The organisation, the version shared by every row and is_deleted are column defaults, so a staged
 * row is only instrument_id, ts, value and ts_micros (plus version when rows need their own versions), in
 * RowBinary: ClickHouse 18.16 reads some decimal texts to a neighbouring double, binary is exact.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { int, version } from '@bioprocess/shared/points-sql';
import { POINT_ROW_COLUMNS } from '@bioprocess/shared/point-rows';
import { LOCAL_SUFFIX, POINTS_PARTITION_KEY, POINTS_TABLE, pointsAreDistributed } from '@bioprocess/shared/server/clickhouse-tables';

/** A staged row's columns (the writer is csv/staging-reader.ts writeStagedPoint). */
export const STAGED_COLUMNS = ['instrument_id', 'ts', 'value', 'ts_micros'] as const;
export const STAGED_COLUMNS_WITH_VERSION = [...STAGED_COLUMNS, 'version'] as const;

/** The table name of a job (job ids are UUIDs: hex digits and dashes). */
export function stagingTableName(jobId: string): string {
  const hex = jobId.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a job id: ${jobId}`);
  return `points_staging_${hex.toLowerCase()}`;
}

export async function createStagingTable(
  clickhouse: ClickHouseClient,
  table: string,
  defaults: { organizationId: number; sharedVersion: string },
): Promise<void> {
  // On a cluster `points` is Distributed and its replicated table must not be copied (the copy would
  // join its replicas): the staging table is a plain one on the server this worker talks to.
  await clickhouse.command({
    query: await pointsAreDistributed(clickhouse)
      ? `CREATE TABLE IF NOT EXISTS ${table} AS ${POINTS_TABLE}${LOCAL_SUFFIX}
          ENGINE = ReplacingMergeTree(version) PARTITION BY ${POINTS_PARTITION_KEY} ORDER BY (organization_id, instrument_id, ts)`
      : `CREATE TABLE IF NOT EXISTS ${table} AS ${POINTS_TABLE}`,
  });
  await addColumnsAddedSince(clickhouse, table);
  await clickhouse.command({
    query: `ALTER TABLE ${table}
      MODIFY COLUMN organization_id UInt64 DEFAULT toUInt64(${int(defaults.organizationId)}),
      MODIFY COLUMN version UInt64 DEFAULT toUInt64(${version(defaults.sharedVersion)}),
      MODIFY COLUMN is_deleted UInt8 DEFAULT toUInt8(0)`,
  });
}

/**
 * Gives a staging table made before `points` gained columns (an upload resumed across a migration)
 * those columns, in the same order and with the same defaults: the staged rows name them, and a
 * partition attaches only between tables of one structure.
 */
async function addColumnsAddedSince(clickhouse: ClickHouseClient, table: string): Promise<void> {
  const source = await pointsAreDistributed(clickhouse) ? `${POINTS_TABLE}${LOCAL_SUFFIX}` : POINTS_TABLE;
  const result = await clickhouse.query({
    query: `SELECT table, name, type, default_kind, default_expression FROM system.columns
      WHERE database = currentDatabase() AND table IN ('${source}', '${table}')`,
    format: 'JSONEachRow',
  });
  const columns = await result.json<{ table: string; name: string; type: string; default_kind: string; default_expression: string }>();
  const staged = new Set(columns.filter((column) => column.table === table).map((column) => column.name));
  for (const column of columns) {
    if (column.table !== source || staged.has(column.name)) continue;
    const defaultClause = column.default_kind === 'DEFAULT' ? ` DEFAULT ${column.default_expression}` : '';
    await clickhouse.command({ query: `ALTER TABLE ${table} ADD COLUMN ${column.name} ${column.type}${defaultClause}` });
  }
}

export async function dropStagingTable(clickhouse: ClickHouseClient, table: string): Promise<void> {
  await clickhouse.command({ query: `DROP TABLE IF EXISTS ${table}` });
}

export async function insertStaged(clickhouse: ClickHouseClient, table: string, rows: Readable, withVersion: boolean): Promise<void> {
  const columns = withVersion ? STAGED_COLUMNS_WITH_VERSION : STAGED_COLUMNS;
  // exec, not insert: the client's insert accepts text formats only.
  const { stream } = await clickhouse.exec({ query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT RowBinary`, values: rows });
  for await (const _ of stream) { /* the answer of an INSERT is empty */ }
}

/**
 * Attaches every partition of the staging table to `points`; answers how many it attached. On a
 * cluster, where parts cannot move between servers, each partition is copied instead, by an insert
 * into the Distributed table that reaches every shard before it answers; an interrupted copy is
 * completed by the job's retry, whose rows carry the same versions.
 */
export async function attachStagedPartitions(clickhouse: ClickHouseClient, table: string): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT DISTINCT partition_id FROM system.parts WHERE database = currentDatabase() AND table = '${table}' AND active`,
    format: 'JSONCompact',
  });
  const partitions = (await result.json<[string]>()).data.map(([id]) => id);
  const distributed = partitions.length > 0 && await pointsAreDistributed(clickhouse);
  for (const partition of partitions) {
    if (!/^[0-9A-Za-z_-]+$/.test(partition)) throw new Error(`unexpected partition id ${partition}`);
    if (distributed) {
      if (!/^-?\d+$/.test(partition)) throw new Error(`unexpected partition id ${partition}`);
      await clickhouse.command({
        query: `INSERT INTO ${POINTS_TABLE} (${POINT_ROW_COLUMNS.join(', ')})
          SELECT ${POINT_ROW_COLUMNS.join(', ')} FROM ${table} WHERE ${POINTS_PARTITION_KEY} = ${partition}`,
      });
    } else {
      await clickhouse.command({ query: `ALTER TABLE ${POINTS_TABLE} ATTACH PARTITION ID '${partition}' FROM ${table}` });
    }
  }
  return partitions.length;
}

/** Past this much memory, the duplicate count's GROUP BY spills to disk: a 1 GiB upload's keys never need more. */
const DUPLICATE_COUNT_MEMORY_BYTES = 256 * 1024 * 1024;

/** Stored keys that several rows of the file landed on, and the one that comes first in the file. */
export interface StagedDuplicates {
  keys: number;
  /** Rows beyond the first of each such key: what keeping one row per key leaves out. */
  extraRows: number;
  first: { instrumentId: number; ts: number; firstVersion: bigint; lastVersion: bigint; rows: number } | null;
}

/**
 * Counts the staged keys (instrument, ts) that hold rows of more than one version, i.e. of more than
 * one row of the file (a resumed pass may stage a row twice, with its one version). Rows are versioned
 * by line, so the versions name the lines; `firstWins` says versions fall as lines grow (keep-first).
 * One GROUP BY in ClickHouse: linear in the staged rows, its memory bounded by spilling to disk.
 */
export async function countStagedDuplicates(clickhouse: ClickHouseClient, table: string, firstWins: boolean): Promise<StagedDuplicates> {
  // Ties (one row feeding several instruments) go to the lowest instrument id, so the answer is the same on every run.
  const pick = firstWins ? 'argMax' : 'argMin';
  const order = firstWins ? 'tuple(high, 0 - toInt64(instrument_id))' : 'tuple(low, instrument_id)';
  const result = await clickhouse.query({
    query: `SELECT count() AS keys, sum(rows - 1) AS extra, ${pick}(instrument_id, ${order}) AS instrument, ${pick}(ts, ${order}) AS at,
        ${pick}(low, ${order}) AS low_version, ${pick}(high, ${order}) AS high_version, ${pick}(rows, ${order}) AS key_rows
      FROM (
        SELECT instrument_id, ts, uniqExact(version) AS rows, min(version) AS low, max(version) AS high
        FROM ${table} GROUP BY instrument_id, ts HAVING rows > 1
      )`,
    format: 'JSONEachRow',
    clickhouse_settings: { max_bytes_before_external_group_by: String(DUPLICATE_COUNT_MEMORY_BYTES) },
  });
  const [row] = await result.json<{
    keys: string | number; extra: string | number; instrument: string | number; at: string | number; low_version: string; high_version: string; key_rows: string | number;
  }>();
  const keys = Number(row?.keys ?? 0);
  if (!row || keys === 0) return { keys: 0, extraRows: 0, first: null };
  const low = BigInt(row.low_version);
  const high = BigInt(row.high_version);
  return {
    keys,
    extraRows: Number(row.extra),
    first: {
      instrumentId: Number(row.instrument), ts: Number(row.at), rows: Number(row.key_rows),
      firstVersion: firstWins ? high : low, lastVersion: firstWins ? low : high,
    },
  };
}

