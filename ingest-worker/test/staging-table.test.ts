/**
 * A CSV upload's staging table made before `points` gained columns (an upload resumed across the
 * migration) is given them, with their defaults, so its rows (which name ts_micros) are staged and its
 * partitions attach to `points`; against the real ClickHouse.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '@bioprocess/api/test-support';
import { attachStagedPartitions, createStagingTable, dropStagingTable, insertStaged, stagingTableName } from '../src/staging-table.ts';

const T0 = Date.UTC(2025, 4, 2, 7, 12, 51, 123);

describe('staging table', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('gives a table staged before the source columns existed those columns, and attaches its rows with their microseconds', async () => {
    const table = stagingTableName(randomUUID());
    // The table as a job started before the migration made it: the points table's columns of then.
    await ctx.deps.clickhouse.command({
      query: `CREATE TABLE ${table} (organization_id UInt64, instrument_id UInt64, ts Int64, value Nullable(Float64), version UInt64, is_deleted UInt8)
        ENGINE = ReplacingMergeTree(version) PARTITION BY intDiv(ts, 2592000000) ORDER BY (organization_id, instrument_id, ts)`,
    });
    try {
      await createStagingTable(ctx.deps.clickhouse, table, { organizationId: 77, sharedVersion: '5' });
      const columns = await ctx.deps.clickhouse.query({ query: `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = '${table}'`, format: 'JSONEachRow' });
      expect((await columns.json<{ name: string }>()).map((column) => column.name).slice(-3)).toEqual(['ts_micros', 'quality', 'historical']);
      // One staged row: instrument UInt64, ts Int64, Nullable(Float64), ts_micros UInt16.
      const row = Buffer.alloc(27);
      row.writeBigUInt64LE(9n, 0);
      row.writeBigInt64LE(BigInt(T0), 8);
      row[16] = 0;
      row.writeDoubleLE(1.25, 17);
      row.writeUInt16LE(456, 25);
      await insertStaged(ctx.deps.clickhouse, table, Readable.from([row]), false);
      expect(await attachStagedPartitions(ctx.deps.clickhouse, table)).toBe(1);
      const stored = await ctx.deps.clickhouse.query({
        query: 'SELECT organization_id, ts, value, ts_micros, quality, historical, version FROM points WHERE organization_id = 77', format: 'JSONEachRow',
      });
      expect(await stored.json()).toEqual([{ organization_id: '77', ts: String(T0), value: 1.25, ts_micros: 456, quality: null, historical: 0, version: '5' }]);
    } finally {
      await dropStagingTable(ctx.deps.clickhouse, table);
    }
  });
});
