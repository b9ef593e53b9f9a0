/**
 * The ClickHouse migration runner against the real server: a run cut short after some statements of a
 * file (before its record) is completed by the next run, also for ADD COLUMN, which ClickHouse 18.16
 * cannot make IF NOT EXISTS; a complete schema is left alone.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createClickHouse, createClickHouseAdmin } from '@bioprocess/shared/server/clickhouse';
import { createLogger } from '@bioprocess/shared/server/logger';
import { migrateClickHouse, runMigrationStatement } from '../../src/db/migrate.ts';

const URL = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
const DATABASE = `bp_test_migrations_${randomBytes(5).toString('hex')}`;
const logger = createLogger('migrations-test', 'silent');

describe('ClickHouse migrations', () => {
  const clickhouse = createClickHouse(URL, DATABASE);
  afterAll(async () => {
    await clickhouse.close();
    const admin = createClickHouseAdmin(URL);
    await admin.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` }).finally(() => admin.close());
  });

  const pointColumns = async () => {
    const result = await clickhouse.query({ query: `SELECT name FROM system.columns WHERE database = '${DATABASE}' AND table = 'points'`, format: 'JSONEachRow' });
    return (await result.json<{ name: string }>()).map((row) => row.name);
  };

  it('completes a file whose ADD COLUMNs ran before its record was written, and leaves a complete schema alone', async () => {
    const applied = await migrateClickHouse(URL, DATABASE, logger);
    expect(applied).toContain('0102_points_source_details.sql');
    const columns = await pointColumns();
    expect(columns.slice(-3)).toEqual(['ts_micros', 'quality', 'historical']);

    // A run killed after the columns were added, before the file was recorded: the record forgets it.
    const recorded = applied.filter((name) => name !== '0102_points_source_details.sql');
    await clickhouse.command({ query: 'DROP TABLE schema_migrations' });
    await clickhouse.command({ query: 'CREATE TABLE schema_migrations (version String, applied_at DateTime) ENGINE = TinyLog' });
    await clickhouse.insert({ table: 'schema_migrations', values: recorded.map((version) => ({ version, applied_at: Math.floor(Date.now() / 1000) })), format: 'JSONEachRow' });

    expect(await migrateClickHouse(URL, DATABASE, logger)).toEqual(['0102_points_source_details.sql']);
    expect(await pointColumns()).toEqual(columns);
    expect(await migrateClickHouse(URL, DATABASE, logger)).toEqual([]);
  });

  it('still fails on any other error, and on a column that exists when a statement adds several', async () => {
    await expect(runMigrationStatement(clickhouse, 'ALTER TABLE points ADD COLUMN ts_micros UInt16 DEFAULT 0')).resolves.toBeUndefined();
    await expect(runMigrationStatement(clickhouse, 'ALTER TABLE points ADD COLUMN ts_micros UInt16 DEFAULT 0, ADD COLUMN other UInt8')).rejects.toThrow(/already exists/);
    await expect(runMigrationStatement(clickhouse, 'ALTER TABLE no_such_table ADD COLUMN x UInt8')).rejects.toThrow();
  });
});
