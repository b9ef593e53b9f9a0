/**
 * The product's processes spawned for real for tests of what survives a fault (so they can be killed
 * with -9 or pointed at a proxy), feeds with known keys, CSV files, and counts of what was stored.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import net from 'node:net';
import type { TestContext } from './test-context.ts';
import { REPO_ROOT } from './ingest.ts';

export const T0 = Date.UTC(2024, 8, 1);

/** Every process spawned, so a file's afterAll can kill what is left. */
export const children: ChildProcess[] = [];

export function spawnProcess(ctx: TestContext, entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: ctx.env.DATABASE_URL, REDIS_URL: ctx.env.REDIS_URL, CLICKHOUSE_URL: ctx.env.CLICKHOUSE_URL,
      CLICKHOUSE_DATABASE: ctx.env.CLICKHOUSE_DATABASE, QUEUE_PREFIX: ctx.env.QUEUE_PREFIX, UPLOAD_DIR: ctx.env.UPLOAD_DIR,
      LOG_LEVEL: 'error', NODE_ENV: 'test', INGEST_LOCK_MS: '2000', INGEST_RECONCILE_MS: '500', INGEST_BACKOFF_MAX_MS: '1000',
      ...env,
    },
  });
  children.push(child);
  return child;
}

export const exited = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve();
  else child.once('exit', () => resolve());
});

export async function killHard(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  await exited(child);
}

export async function stopGently(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await exited(child);
}

/** Distinct keys per post (instrument, second), values that sum to a known total. */
export function feedPoints(instrumentId: number, firstSecond: number, count: number): Array<{ measured_at: number; instrument_id: number; float_value: number }> {
  return Array.from({ length: count }, (_, index) => ({ measured_at: T0 + (firstSecond + index) * 1000, instrument_id: instrumentId, float_value: (firstSecond + index) % 97 }));
}

/** Keys visible after deduplication, and rows stored (a row stored twice shows in `rows`). */
export async function storedCounts(ctx: TestContext, organizationId: number): Promise<{ keys: number; rows: number }> {
  const result = await ctx.deps.clickhouse.query({
    query: `SELECT count(), (SELECT count() FROM points WHERE organization_id = ${organizationId} AND is_deleted = 0) FROM (
              SELECT instrument_id, ts, argMax(is_deleted, version) AS d
                FROM points WHERE organization_id = ${organizationId} GROUP BY instrument_id, ts) WHERE d = 0`,
    format: 'JSONCompact',
  });
  const [row] = (await result.json<[string, string]>()).data;
  return { keys: Number(row![0]), rows: Number(row![1]) };
}

export async function unfinishedJobs(ctx: TestContext, organizationId: number): Promise<number> {
  const { rows } = await ctx.deps.pg.query<{ n: string }>(`SELECT count(*) AS n FROM ingest_jobs WHERE organization_id = $1 AND state IN ('queued', 'running')`, [organizationId]);
  return Number(rows[0]!.n);
}

/** Rollups that completed bulk posts of the organisation still owe (rollup_backlog rows). */
export async function owedRollups(ctx: TestContext, organizationId: number): Promise<number> {
  const { rows } = await ctx.deps.pg.query<{ n: string }>('SELECT count(*) AS n FROM rollup_backlog WHERE organization_id = $1', [organizationId]);
  return Number(rows[0]!.n);
}

/** Every ingest job of the organisation finished and the rollups of its posts stored. */
export async function waitAllFinished(ctx: TestContext, organizationId: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await unfinishedJobs(ctx, organizationId)) > 0 || (await owedRollups(ctx, organizationId)) > 0) {
    if (Date.now() > deadline) throw new Error('ingest jobs still unfinished');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type Figures = Record<string, { points: number; count: number; sum: number; min: number | null; max: number | null }>;

async function figures(ctx: TestContext, query: string): Promise<Figures> {
  const result = await ctx.deps.clickhouse.query({ query, format: 'JSONEachRow' });
  const rows = await result.json<{ instrument_id: string; at: string; p: string; n: string; s: number; lo: number | null; hi: number | null }>();
  return Object.fromEntries(rows.map((row) => [`${row.instrument_id}@${row.at}`, { points: Number(row.p), count: Number(row.n), sum: row.s, min: row.lo, max: row.hi }]));
}

/**
 * The organisation's minute and hour figures (points, values, sum, min, max per instrument and period)
 * as the deduplicated points give them and as the rollup tables hold them: the two must be equal.
 */
export async function rollupFigures(ctx: TestContext, organizationId: number): Promise<Record<'minutes' | 'hours', { fromPoints: Figures; fromRollups: Figures }>> {
  const deduplicated = `SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d FROM points
    WHERE organization_id = ${organizationId} GROUP BY instrument_id, ts`;
  const fromPoints = (width: number) => figures(ctx, `SELECT instrument_id, intDiv(ts, ${width}) * ${width} AS at, count() AS p, count(v) AS n,
      sum(ifNull(v, 0)) AS s, min(v) AS lo, max(v) AS hi FROM (${deduplicated}) WHERE d = 0 GROUP BY instrument_id, at`);
  const fromRollups = (table: string, column: string) => figures(ctx, `SELECT instrument_id, at, p, n, s, lo, hi FROM (
      SELECT instrument_id, ${column} AS at, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
             argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
        FROM ${table} WHERE organization_id = ${organizationId} GROUP BY instrument_id, at) WHERE p > 0`);
  return {
    minutes: { fromPoints: await fromPoints(60_000), fromRollups: await fromRollups('points_rollup_1m', 'minute') },
    hours: { fromPoints: await fromPoints(3_600_000), fromRollups: await fromRollups('points_rollup_1h', 'hour') },
  };
}

export async function jobStates(ctx: TestContext, organizationId: number): Promise<Record<string, number>> {
  const { rows } = await ctx.deps.pg.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM ingest_jobs WHERE organization_id = $1 GROUP BY state', [organizationId]);
  return Object.fromEntries(rows.map((row) => [row.state, Number(row.n)]));
}

/** A wide CSV file of one row per second from firstMs, columns c0, c1, ..., each cell value(row, column). */
export async function writeCsv(file: string, rows: number, columns: number, firstMs: number, value = (row: number, column: number) => row + column): Promise<void> {
  const out = createWriteStream(file);
  out.write(`time,${Array.from({ length: columns }, (_, c) => `c${c}`).join(',')}\n`);
  let buffer = '';
  for (let row = 0; row < rows; row += 1) {
    buffer += `${new Date(firstMs + row * 1000).toISOString()},${Array.from({ length: columns }, (_, c) => value(row, c)).join(',')}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.end(buffer);
  await new Promise<void>((resolve) => out.once('finish', () => resolve()));
}

/** A TCP port nobody listens on right now, for a process the test spawns. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Kills every process a test file spawned and has not stopped. */
export async function killChildren(): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) await killHard(child);
}

/** Waits until the spawned api at `base` answers health (whatever its status). */
export async function waitForApi(base: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/v1/health`)).status > 0) return;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error('api did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
