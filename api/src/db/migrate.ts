/**
 * Versioned schema migrations: PostgreSQL through node-pg-migrate (SQL files, recorded in
 * `pgmigrations`, under an advisory lock) and ClickHouse through a small runner that records applied
 * files in `schema_migrations`. Every ClickHouse statement is idempotent (IF NOT EXISTS, or an ADD
 * COLUMN whose "already exists" counts as done) so a crash between a statement and its record is
 * repaired by the next run. Applying twice is a no-op.
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

/**
 * The ClickHouse migrations of a layout: the files of migrations/clickhouse on one server; on a cluster
 * their variants of the same name in migrations/clickhouse/cluster, which run ON CLUSTER, with
 * `${cluster}` and `${database}` replaced (ClickHouse 18.16 has no {database} macro; the database in
 * every ZooKeeper path keeps test databases apart). Every single-node file needs its clustered variant.
 */
async function clickHouseMigrationFiles(cluster: string | undefined): Promise<Array<{ name: string; path: string }>> {
  const singleDir = path.join(MIGRATIONS_DIR, 'clickhouse');
  const names = (await readdir(singleDir)).filter((f) => f.endsWith('.sql')).sort();
  if (!cluster) return names.map((name) => ({ name, path: path.join(singleDir, name) }));
  const clusterDir = path.join(singleDir, 'cluster');
  const clustered = new Set((await readdir(clusterDir)).filter((f) => f.endsWith('.sql')));
  const missing = names.filter((name) => !clustered.has(name));
  if (missing.length > 0) throw new Error(`ClickHouse migrations without a clustered variant in migrations/clickhouse/cluster: ${missing.join(', ')}`);
  return names.map((name) => ({ name, path: path.join(clusterDir, name) }));
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `ALTER TABLE … ADD COLUMN …` of one column: ClickHouse 18.16 knows no ADD COLUMN IF NOT EXISTS. */
const ADD_ONE_COLUMN = /^ALTER TABLE\s+[\w.${}]+(?:\s+ON CLUSTER\s+\S+)?\s+ADD COLUMN\s+\w+\s[^,]*$/i;

/**
 * Runs a migration statement; an ADD COLUMN of a column that exists already (its file was cut short
 * after it, before the record) counts as done, which makes it as idempotent as IF NOT EXISTS. Only
 * one-column ALTERs get this: of several columns, the first existing would hide the others' absence.
 */
export async function runMigrationStatement(client: { command(params: { query: string }): Promise<unknown> }, statement: string): Promise<void> {
  try {
    await client.command({ query: statement });
  } catch (error) {
    if (ADD_ONE_COLUMN.test(statement) && /column with this name already exists/i.test((error as Error).message)) return;
    throw error;
  }
}

async function tableExists(client: ReturnType<typeof createClickHouse>, database: string, table: string): Promise<boolean> {
  const result = await client.query({
    query: `SELECT count() AS n FROM system.tables WHERE database = '${database}' AND name = '${table}'`, format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string | number }>())[0]?.n ?? 0) > 0;
}

/**
 * Applies the ClickHouse migrations not yet recorded in `schema_migrations`. Statements are idempotent
 * (IF NOT EXISTS, or runMigrationStatement's ADD COLUMN) and a file is recorded only after all of its statements succeeded, so a run killed
 * half-way is completed by the next. On a cluster the record is itself a replicated table shared by
 * every server, so any of them answers what ran; nothing ON CLUSTER is sent when nothing is missing,
 * as such a statement waits for every server and one down would hold up an api's start.
 */
export async function migrateClickHouse(url: string, database: string, logger: Logger, cluster?: string): Promise<string[]> {
  if (!IDENTIFIER.test(database) || (cluster !== undefined && !IDENTIFIER.test(cluster))) throw new Error('invalid ClickHouse database or cluster name');
  const onCluster = cluster ? ` ON CLUSTER ${cluster}` : '';
  const admin = createClickHouseAdmin(url);
  try {
    const known = await admin.query({ query: `SELECT count() AS n FROM system.databases WHERE name = '${database}'`, format: 'JSONEachRow' });
    if (Number((await known.json<{ n: string | number }>())[0]?.n ?? 0) === 0) {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${onCluster}` });
    }
  } finally {
    await admin.close();
  }
  const client = createClickHouse(url, database);
  try {
    if (!(await tableExists(client, database, 'schema_migrations'))) {
      await client.command({
        query: cluster
          ? `CREATE TABLE IF NOT EXISTS ${database}.schema_migrations${onCluster} (version String, applied_at DateTime)
              ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/${database}/schema_migrations', '{replica}') ORDER BY version`
          : 'CREATE TABLE IF NOT EXISTS schema_migrations (version String, applied_at DateTime) ENGINE = TinyLog',
      });
    }
    const result = await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' });
    const done = new Set((await result.json<{ version: string }>()).map((row) => row.version));
    const applied: string[] = [];
    for (const file of await clickHouseMigrationFiles(cluster)) {
      if (done.has(file.name)) continue;
      const sql = (await readFile(file.path, 'utf8')).replaceAll('${cluster}', cluster ?? '').replaceAll('${database}', database);
      for (const statement of splitStatements(sql)) await runMigrationStatement(client, statement);
      await client.insert({ table: 'schema_migrations', values: [{ version: file.name, applied_at: Math.floor(Date.now() / 1000) }], format: 'JSONEachRow' });
      logger.info({ migration: file.name, cluster }, 'clickhouse migration applied');
      applied.push(file.name);
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
  CLICKHOUSE_CLUSTER?: string | undefined;
}

export async function migrateAll(env: MigrationTargets, logger: Logger): Promise<void> {
  const postgres = await migratePostgres(env.DATABASE_URL, logger);
  const clickhouse = await migrateClickHouse(env.CLICKHOUSE_URL, env.CLICKHOUSE_DATABASE, logger, env.CLICKHOUSE_CLUSTER);
  logger.info({ postgres, clickhouse }, postgres.length + clickhouse.length ? 'migrations applied' : 'schema up to date');
}
