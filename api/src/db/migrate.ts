/**
 * Versioned schema migrations: PostgreSQL through node-pg-migrate (SQL files, recorded in
 * `pgmigrations`, under an advisory lock) and ClickHouse through a small runner that records applied
 * files in `schema_migrations`. Every ClickHouse statement is idempotent (IF NOT EXISTS) so a crash
 * between a statement and its record is repaired by the next run. Applying twice is a no-op.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createClickHouse, createClickHouseAdmin } from '@bioprocess/shared/server/clickhouse';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensurePostgresDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${quoteIdent(database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

export async function migratePostgres(databaseUrl: string, logger: Logger): Promise<string[]> {
  await ensurePostgresDatabase(databaseUrl);
  const applied = await runner({
    databaseUrl,
    dir: path.join(MIGRATIONS_DIR, 'postgres'),
    migrationsTable: 'pgmigrations',
    direction: 'up',
    checkOrder: true,
    log: (message: string) => logger.debug(message),
  });
  return applied.map((migration) => migration.name);
}

export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.replace(/^\s*--.*$/gm, '').trim())
    .filter((statement) => statement.length > 0);
}

export async function migrateClickHouse(url: string, database: string, logger: Logger): Promise<string[]> {
  const admin = createClickHouseAdmin(url);
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  } finally {
    await admin.close();
  }
  const client = createClickHouse(url, database);
  try {
    await client.command({
      query: 'CREATE TABLE IF NOT EXISTS schema_migrations (version String, applied_at DateTime) ENGINE = TinyLog',
    });
    const result = await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' });
    const done = new Set((await result.json<{ version: string }>()).map((row) => row.version));
    const files = (await readdir(path.join(MIGRATIONS_DIR, 'clickhouse'))).filter((f) => f.endsWith('.sql')).sort();
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(path.join(MIGRATIONS_DIR, 'clickhouse', file), 'utf8');
      for (const statement of splitStatements(sql)) await client.command({ query: statement });
      await client.insert({ table: 'schema_migrations', values: [{ version: file, applied_at: Math.floor(Date.now() / 1000) }], format: 'JSONEachRow' });
      logger.info({ migration: file }, 'clickhouse migration applied');
      applied.push(file);
    }
    return applied;
  } finally {
    await client.close();
  }
}

export interface MigrationTargets {
  DATABASE_URL: string;
  CLICKHOUSE_URL: string;
  CLICKHOUSE_DATABASE: string;
}

export async function migrateAll(env: MigrationTargets, logger: Logger): Promise<void> {
  const postgres = await migratePostgres(env.DATABASE_URL, logger);
  const clickhouse = await migrateClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger);
  logger.info({ postgres, clickhouse }, postgres.length + clickhouse.length ? 'migrations applied' : 'schema up to date');
}
