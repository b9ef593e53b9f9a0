/**
 * Point inserts into ClickHouse, as streams: RowBinary from bulk posts and CSV staging, TSV from jobs
 * queued by older apis; each in its layout's columns (POINT_ROW_LAYOUTS). Tombstones and deletions are
 * in deletions.ts, rollups in rollups/.
 */
import { Readable } from 'node:stream';
import { POINT_ROW_LAYOUTS, type PointRowsLayout } from '@bioprocess/shared/point-rows';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { POINTS_TABLE } from '@bioprocess/shared/server/clickhouse-tables';

export type PointRowsFormat = 'RowBinary' | 'TabSeparated';
export type { PointRowsLayout };

export interface InsertOptions {
  /** Gives up (rejects) after this long; the rows may or may not be stored then. Default: the client's own timeout. */
  timeoutMs?: number;
}

/** Inserts rows of `table` written in `format`; resolves once ClickHouse stored them. */
export async function insertRows(clickhouse: ClickHouseClient, table: string, columns: readonly string[], format: PointRowsFormat, values: Readable, options: InsertOptions = {}): Promise<void> {
  // exec, not insert: the client's insert accepts text formats only.
  const { stream } = await clickhouse.exec({
    query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT ${format}`, values,
    abort_signal: options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
  });
  for await (const _ of stream) { /* the answer of an INSERT is empty */ }
}

/**
 * Inserts point rows of a layout: RowBinary (shared/src/point-rows.ts, with or without the source's
 * details) or TSV lines `organization_id\tinstrument_id\tts\tvalue\tversion\tis_deleted\n` (value `\N` for null).
 */
export async function insertPoints(clickhouse: ClickHouseClient, rows: string | Uint8Array | Readable, layout: PointRowsLayout, options: InsertOptions = {}): Promise<void> {
  const values = rows instanceof Readable ? rows : Readable.from([rows], { objectMode: false });
  const { clickhouseFormat, columns } = POINT_ROW_LAYOUTS[layout];
  await insertRows(clickhouse, POINTS_TABLE, columns, clickhouseFormat, values, options);
}

export type { RangeOnInstruments } from '@bioprocess/shared/ingest/requests';

