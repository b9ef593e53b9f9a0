/**
 * A CSV upload's private staging table: a copy of `points` (same engine, partitioning and order) that
 * its rows are written to while the file is read and validated. Nothing in it is visible to readers;
 * once the whole file passed, its partitions are attached to `points` (ClickHouse links the parts,
 * no data is copied), so a rejected upload changes nothing and an accepted one appears at once.
 *
 * The organisation, the version shared by every row and is_deleted are column defaults, so a staged
 * row is only instrument_id, ts and value (plus version when rows need their own versions), in
 * RowBinary: ClickHouse 18.16 reads some decimal texts to a neighbouring double, binary is exact.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { int, version } from '@bioprocess/shared/points-sql';

export const STAGED_COLUMNS = ['instrument_id', 'ts', 'value'] as const;
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
  await clickhouse.command({ query: `CREATE TABLE IF NOT EXISTS ${table} AS points` });
  await clickhouse.command({
    query: `ALTER TABLE ${table}
      MODIFY COLUMN organization_id UInt64 DEFAULT toUInt64(${int(defaults.organizationId)}),
      MODIFY COLUMN version UInt64 DEFAULT toUInt64(${version(defaults.sharedVersion)}),
      MODIFY COLUMN is_deleted UInt8 DEFAULT toUInt8(0)`,
  });
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

/** Attaches every partition of the staging table to `points`; answers how many it attached. */
export async function attachStagedPartitions(clickhouse: ClickHouseClient, table: string): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT DISTINCT partition_id FROM system.parts WHERE database = currentDatabase() AND table = '${table}' AND active`,
    format: 'JSONCompact',
  });
  const partitions = (await result.json<[string]>()).data.map(([id]) => id);
  for (const partition of partitions) {
    if (!/^[0-9A-Za-z_-]+$/.test(partition)) throw new Error(`unexpected partition id ${partition}`);
    await clickhouse.command({ query: `ALTER TABLE points ATTACH PARTITION ID '${partition}' FROM ${table}` });
  }
  return partitions.length;
}
