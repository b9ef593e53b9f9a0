/**
 * Point inserts of the ingest-worker, as streams: RowBinary from bulk posts and CSV staging, TSV from
 * jobs queued by older apis. Tombstones and deletions are in deletions.ts, rollups in rollups.ts.
 */
import { Readable } from 'node:stream';
import { POINT_ROW_COLUMNS } from '@bioprocess/shared/point-rows';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';

export type PointRowsFormat = 'RowBinary' | 'TabSeparated';

/** Inserts rows of `table` written in `format`; resolves once ClickHouse stored them. */
export async function insertRows(clickhouse: ClickHouseClient, table: string, columns: readonly string[], format: PointRowsFormat, values: Readable): Promise<void> {
  // exec, not insert: the client's insert accepts text formats only.
  const { stream } = await clickhouse.exec({ query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT ${format}`, values });
  for await (const _ of stream) { /* the answer of an INSERT is empty */ }
}

/** Inserts point rows: RowBinary (shared/src/point-rows.ts) or TSV lines `organization_id\tinstrument_id\tts\tvalue\tversion\tis_deleted\n` (value `\N` for null). */
export async function insertPoints(clickhouse: ClickHouseClient, rows: string | Uint8Array | Readable, format: PointRowsFormat): Promise<void> {
  const values = rows instanceof Readable ? rows : Readable.from([rows], { objectMode: false });
  await insertRows(clickhouse, 'points', POINT_ROW_COLUMNS, format, values);
}

export interface RangeOnInstruments {
  organizationId: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

