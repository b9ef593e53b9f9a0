/**
 * The soak: feeds, CSV uploads, range deletions and audited edits for SOAK_MINUTES while Redis (the
 * soak's own, kept empty across restarts), the ingest-workers, the audit-worker and the api are killed
 * with -9 and restarted at random;
 * then every invariant is checked and printed as one JSON line: { invariant, pass, expected, actual }.
 *
 * Clients behave as careful clients do: a request that got no answer is sent again (with the same
 * Idempotency-Key where the endpoint takes one) until it is answered 2xx. So every request counts as
 * accepted in the end, and the check is exact: each accepted point is queryable exactly once, each
 * accepted deletion removed its range, every job finished and none failed, every minute's and hour's
 * rollup agrees with the points, and every change that committed has exactly one audit event (none for
 * a change that did not).
 *
 * Private PostgreSQL and ClickHouse databases (dropped at the end), a Redis of its own on
 * SOAK_REDIS_PORT and an api on SOAK_API_PORT: nothing shared is flushed or killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { baseEnvSchema, parseEnv } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { createClickHouse, createClickHouseAdmin } from '@bioprocess/shared/server/clickhouse';
import { migrateAll } from '../../api/src/db/migrate.ts';
import { OwnRedis } from '../../api/test/support/own-redis.ts';
import { seedPlant, type BenchPlant } from '../bench/fixtures.ts';
import { apiProcessEnv } from '../local/allocator.mjs';
import { nodeArguments } from '../local/stack.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const REDIS_PORT = Number(process.env.SOAK_REDIS_PORT ?? 6391);
const API_PORT = Number(process.env.SOAK_API_PORT ?? 8391);
const WORKERS = 2;
const FEEDS = 4;
const POINTS_PER_POST = 500;
/** Seconds between two faults, at random in this range. */
const FAULT_EVERY_S: [number, number] = [Number(process.env.SOAK_FAULT_MIN_S ?? 8), Number(process.env.SOAK_FAULT_MAX_S ?? 20)];
const T0 = Date.UTC(2025, 0, 1);

const log = (message: string) => process.stderr.write(`[soak] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = (low: number, high: number) => low + Math.random() * (high - low);

const id = randomBytes(4).toString('hex');
const databaseUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
databaseUrl.pathname = `/bp_soak_${id}`;
const workDir = mkdtempSync(path.join(os.tmpdir(), 'bp-soak-'));
const redis = new OwnRedis(REDIS_PORT);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: 'test',
  DATABASE_URL: databaseUrl.toString(),
  REDIS_URL: redis.url,
  CLICKHOUSE_DATABASE: `bp_soak_${id}`,
  QUEUE_PREFIX: `bp-soak-${id}`,
  UPLOAD_DIR: path.join(workDir, 'uploads'),
  PORT: String(API_PORT),
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'error',
  UPLOAD_RATE_LIMIT_PER_MINUTE: '1000',
  CONSOLE_DIST: path.join(workDir, 'no-console'),
  // Faults every few seconds: a killed worker's jobs and lost deliveries are taken up again quickly.
  INGEST_LOCK_MS: '5000',
  INGEST_RECONCILE_MS: '2000',
  INGEST_BACKOFF_MAX_MS: '2000',
  INGEST_SWEEP_MS: '10000',
};
const config = parseEnv(baseEnvSchema, env);
const base = `http://127.0.0.1:${API_PORT}`;

// --- processes -------------------------------------------------------------------------------------

function startProcess(entry: string, processEnv: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, nodeArguments(entry, true), { cwd: ROOT, env: processEnv, stdio: ['ignore', 'ignore', 'inherit'] });
}
const alive = (child: ChildProcess | null) => child !== null && child.exitCode === null && child.signalCode === null;
async function kill9(child: ChildProcess | null): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
  child!.kill('SIGKILL');
  await exited;
}
async function stopGently(child: ChildProcess | null): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
  child!.kill('SIGTERM');
  const timer = setTimeout(() => child!.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

let api: ChildProcess | null = null;
const workers: Array<ChildProcess | null> = Array.from({ length: WORKERS }, () => null);
const startApi = () => { api = startProcess('api/src/main.ts', apiProcessEnv(env)); };
const startWorkerAt = (index: number) => { workers[index] = startProcess('ingest-worker/src/main.ts', env); };
let auditWorker: ChildProcess | null = null;
const startAuditWorker = () => { auditWorker = startProcess('audit-worker/src/main.ts', env); };

const faults = { api_killed: 0, worker_killed: 0, audit_worker_killed: 0, redis_killed: 0, redis_flushed: 0 };

/** One fault at random: kill -9 the api or a worker (restarted a little later), or lose everything Redis held. */
async function injectFault(): Promise<void> {
  const choice = Math.floor(Math.random() * 5);
  if (choice === 4) {
    log('fault: kill -9 audit-worker');
    await kill9(auditWorker);
    faults.audit_worker_killed += 1;
    await sleep(random(500, 5_000));
    startAuditWorker();
    return;
  }
  if (choice === 0) {
    log('fault: kill -9 api');
    await kill9(api);
    faults.api_killed += 1;
    await sleep(random(500, 3_000));
    startApi();
  } else if (choice === 1) {
    const index = Math.floor(Math.random() * WORKERS);
    log(`fault: kill -9 ingest-worker ${index}`);
    await kill9(workers[index]!);
    faults.worker_killed += 1;
    await sleep(random(500, 5_000));
    startWorkerAt(index);
  } else if (choice === 2) {
    log('fault: kill -9 Redis, restarted empty');
    await redis.kill();
    faults.redis_killed += 1;
    await sleep(random(500, 5_000));
    await redis.start();
  } else {
    log('fault: Redis FLUSHALL');
    await redis.flushAll().catch(() => undefined);
    faults.redis_flushed += 1;
  }
}

// --- clients ---------------------------------------------------------------------------------------

const counts = { posts: 0, points: 0, uploads: 0, deletions: 0, audited_edits: 0, unanswered_retried: 0 };

/** Sends until answered 2xx; a 4xx is a bug in the soak or the api and stops it. */
async function untilAccepted(send: () => Promise<Response>, what: string): Promise<Response> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const response = await send();
      if (response.status >= 200 && response.status < 300) return response;
      const body = await response.text();
      if (response.status >= 400 && response.status < 500 && response.status !== 429) throw new Error(`${what} answered ${response.status}: ${body}`);
    } catch (error) {
      if ((error as Error).message.includes(' answered 4')) throw error;
    }
    counts.unanswered_retried += 1;
    await sleep(Math.min(2_000, 200 * 2 ** Math.min(attempt, 4)));
  }
}

interface Expectation {
  /** Per instrument: first and last second of each accepted post (consecutive seconds). */
  spans: Map<number, Array<[number, number]>>;
  /** Per instrument: accepted deletions, as second ranges. */
  deleted: Map<number, Array<[number, number]>>;
}
const expectation: Expectation = { spans: new Map(), deleted: new Map() };
const valueAt = (second: number) => (second % 1_000) / 4;

function accept(instrumentId: number, from: number, to: number): void {
  if (!expectation.spans.has(instrumentId)) expectation.spans.set(instrumentId, []);
  expectation.spans.get(instrumentId)!.push([from, to]);
}

async function feed(plant: BenchPlant, instrumentId: number, until: number): Promise<void> {
  let second = 0;
  while (Date.now() < until) {
    const data = Array.from({ length: POINTS_PER_POST }, (_, index) => ({ measured_at: T0 + (second + index) * 1000, instrument_id: instrumentId, float_value: valueAt(second + index) }));
    const body = JSON.stringify({ data });
    const key = randomUUID();
    await untilAccepted(() => fetch(`${base}/api/v1/time-series-data/bulk`, {
      method: 'POST', body, signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${plant.token}`, 'content-type': 'application/json', 'idempotency-key': key },
    }), 'bulk post');
    accept(instrumentId, second, second + POINTS_PER_POST - 1);
    counts.posts += 1;
    counts.points += POINTS_PER_POST;
    second += POINTS_PER_POST;
    await sleep(random(100, 600));
  }
}

/** Deletes, now and then, a range of an instrument whose posts in it were all accepted already. */
async function deleter(plant: BenchPlant, instrumentId: number, until: number): Promise<void> {
  while (Date.now() < until) {
    await sleep(random(8_000, 15_000));
    const spans = expectation.spans.get(instrumentId) ?? [];
    if (spans.length < 2) continue;
    const last = spans[spans.length - 1]![1];
    const from = Math.floor(random(0, last - 200));
    const to = from + Math.floor(random(10, 200));
    const key = randomUUID();
    await untilAccepted(() => fetch(`${base}/api/v1/time-series-data`, {
      method: 'DELETE', signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${plant.token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ instrument_ids: [instrumentId], start_time: new Date(T0 + from * 1000).toISOString(), end_time: new Date(T0 + to * 1000).toISOString() }),
    }), 'range deletion');
    if (!expectation.deleted.has(instrumentId)) expectation.deleted.set(instrumentId, []);
    expectation.deleted.get(instrumentId)!.push([from, to]);
    counts.deletions += 1;
  }
}

/** CSV uploads of two columns, each upload its own time range. */
async function uploader(plant: BenchPlant, instrumentIds: [number, number], until: number): Promise<void> {
  const ROWS = 3_000;
  let second = 0;
  while (Date.now() < until) {
    await sleep(random(5_000, 12_000));
    const lines = ['time,a,b'];
    for (let row = 0; row < ROWS; row += 1) lines.push(`${new Date(T0 + (second + row) * 1000).toISOString()},${valueAt(second + row)},${valueAt(second + row)}`);
    const mapping = { timestamp_column: 'time', columns: [{ column: 'a', instrument_id: instrumentIds[0] }, { column: 'b', instrument_id: instrumentIds[1] }] };
    await untilAccepted(() => {
      const form = new FormData();
      form.append('mapping', JSON.stringify(mapping));
      form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'soak.csv');
      return fetch(`${base}/api/v1/unit-operations/${plant.unitOperationId}/csv-uploads`, {
        method: 'POST', body: form, signal: AbortSignal.timeout(60_000), headers: { authorization: `Bearer ${plant.token}` },
      });
    }, 'CSV upload');
    for (const instrumentId of instrumentIds) accept(instrumentId, second, second + ROWS - 1);
    counts.uploads += 1;
    second += ROWS;
  }
}

/** Names of the facilities whose creation was answered 2xx (a retried create may add a second one). */
const acknowledgedFacilities = new Set<string>();

/** Audited changes: facilities created one after another, each with a name of its own. */
async function auditedEditor(plant: BenchPlant, until: number): Promise<void> {
  for (let index = 0; Date.now() < until; index += 1) {
    const name = `soak-edit-${index}`;
    await untilAccepted(() => fetch(`${base}/api/v1/facilities`, {
      method: 'POST', signal: AbortSignal.timeout(30_000), body: JSON.stringify({ name, type: 'pilot plant' }),
      headers: { authorization: `Bearer ${plant.token}`, 'content-type': 'application/json' },
    }), 'facility create');
    acknowledgedFacilities.add(name);
    counts.audited_edits += 1;
    await sleep(random(200, 1_200));
  }
}

// --- invariants ------------------------------------------------------------------------------------

function report(invariant: string, pass: boolean, expected: unknown, actual: unknown): boolean {
  process.stdout.write(`${JSON.stringify({ invariant, pass, expected, actual })}\n`);
  return pass;
}

/** Expected visible keys per instrument: accepted seconds minus deleted ones (count, sum of seconds, sum of values). */
function expectedKeys(instrumentId: number, beforeSecond = Infinity): { keys: number; seconds: number; values: number } {
  const deleted = expectation.deleted.get(instrumentId) ?? [];
  const visible = new Set<number>();
  for (const [from, to] of expectation.spans.get(instrumentId) ?? []) for (let second = from; second <= Math.min(to, beforeSecond - 1); second += 1) visible.add(second);
  for (const [from, to] of deleted) for (let second = from; second <= to; second += 1) visible.delete(second);
  let seconds = 0;
  let values = 0;
  for (const second of visible) {
    seconds += second;
    values += valueAt(second);
  }
  return { keys: visible.size, seconds, values };
}

async function checkInvariants(plant: BenchPlant, pool: Pool, clickhouse: ReturnType<typeof createClickHouse>): Promise<boolean> {
  let ok = true;
  const { rows: states } = await pool.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM ingest_jobs GROUP BY state ORDER BY state');
  const byState = Object.fromEntries(states.map((row) => [row.state, Number(row.n)]));
  ok = report('every_job_finished', (byState.queued ?? 0) + (byState.running ?? 0) === 0, { queued: 0, running: 0 }, byState) && ok;
  ok = report('no_job_failed', (byState.failed ?? 0) === 0, 0, byState.failed ?? 0) && ok;
  // Posts are answered before their rollups: whatever a killed worker left owing, another's backlog pass stored.
  const { rows: [owed] } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM rollup_backlog');
  ok = report('no_rollups_owed', owed!.n === 0, 0, owed!.n) && ok;
  const instruments = [...expectation.spans.keys()].sort((a, b) => a - b);
  const result = await clickhouse.query({
    query: `SELECT instrument_id, count(), sum(ts), sum(v), max(c) FROM (
              SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d, count() AS c
                FROM points WHERE organization_id = ${plant.organizationId} GROUP BY instrument_id, ts)
             WHERE d = 0 GROUP BY instrument_id ORDER BY instrument_id`,
    format: 'JSONCompact',
  });
  const stored = new Map((await result.json<[string, string, string, number, string]>()).data.map((row) => [Number(row[0]), row]));
  for (const instrumentId of instruments) {
    const want = expectedKeys(instrumentId);
    const row = stored.get(instrumentId);
    const got = row
      ? { keys: Number(row[1]), seconds: Number((BigInt(row[2]) - BigInt(row[1]) * BigInt(T0)) / 1000n), values: row[3] }
      : { keys: 0, seconds: 0, values: 0 };
    ok = report(`points_exactly_once:instrument_${instrumentId}`, got.keys === want.keys && got.seconds === want.seconds && got.values === want.values, want, got) && ok;
  }
  // Long ranges are read from the rollups: each minute's and hour's newest row must say what the
  // deduplicated points say, whatever the kills, replays and deletions did in between.
  for (const [table, column, widthMs] of [['points_rollup_1m', 'minute', 60_000], ['points_rollup_1h', 'hour', 3_600_000]] as const) {
    const disagreeing = await rollupsDisagreeing(clickhouse, plant.organizationId, table, column, widthMs);
    ok = report(`rollups_agree_with_points:${table}`, disagreeing.periods.length === 0, { periods: disagreeing.compared, disagreeing: 0 },
      { periods: disagreeing.compared, disagreeing: disagreeing.periods.length, first: disagreeing.periods.slice(0, 5) }) && ok;
  }
  // Through the api: what a chart reads (a window small enough not to be bucketed) holds each accepted key once.
  const [first] = instruments;
  if (first !== undefined) {
    const WINDOW_S = 5_000;
    const want = expectedKeys(first, WINDOW_S).keys;
    const query = `instrument_id=${first}&start_time=${T0}&end_time=${T0 + (WINDOW_S - 1) * 1000}&limit=${WINDOW_S}`;
    const response = await fetch(`${base}/api/v1/time-series-data?${query}`, { headers: { authorization: `Bearer ${plant.token}` } });
    const readings = (await response.json()) as Array<{ ts: string }>;
    const distinct = new Set(readings.map((reading) => reading.ts)).size;
    ok = report('api_reads_each_point_once', readings.length === want && distinct === want, want, { readings: readings.length, distinct }) && ok;
  }
  // Finished bulk jobs' data goes about a second after they finish (job-data-purge.ts), or at the next
  // sweep when the worker that finished them was killed first: given one sweep interval and a little more.
  const storedData = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM ingest_job_data')).rows[0]!.n);
  const deadline = Date.now() + Number(env.INGEST_SWEEP_MS) + 5_000;
  let leftover = await storedData();
  while (leftover > 0 && Date.now() < deadline) {
    await sleep(1_000);
    leftover = await storedData();
  }
  ok = report('stored_request_data_removed', leftover === 0, 0, leftover) && ok;
  // Spooled uploads: none of a finished job is left (an upload the api was killed receiving, which no
  // job names, is removed by the sweeper once it has been left alone for a while).
  const spooled = readdirSync(env.UPLOAD_DIR!).filter((name) => name.endsWith('.csv')).map((name) => path.resolve(env.UPLOAD_DIR!, name));
  const { rows: named } = await pool.query<{ file: string }>(
    `SELECT request->>'file_path' AS file FROM ingest_jobs WHERE kind = 'csv' AND request->>'file_path' = ANY($1::text[])`, [spooled]);
  ok = report('spooled_files_of_finished_jobs_removed', named.length === 0, 0, { of_jobs: named.length, named_by_no_job: spooled.length - named.length }) && ok;
  return (await checkAuditInvariants(plant, pool)) && ok;
}

interface PeriodFigures { points: number; count: number; sum: number; min: number | null; max: number | null }

/**
 * The periods (instrument and start) where the newest rollup row differs from the aggregation of the
 * deduplicated points, either way: a period holding points without its row, or a row for no points.
 */
async function rollupsDisagreeing(
  clickhouse: ReturnType<typeof createClickHouse>, organizationId: number, table: string, column: string, widthMs: number,
): Promise<{ compared: number; periods: Array<{ at: string; rollup: PeriodFigures | null; points: PeriodFigures | null }> }> {
  const figures = async (query: string) => {
    const result = await clickhouse.query({ query, format: 'JSONCompact' });
    const rows = (await result.json<[string, string, string, string, number, number | null, number | null]>()).data;
    return new Map(rows.map(([instrumentId, at, points, count, sum, min, max]) =>
      [`${instrumentId}:${new Date(Number(at)).toISOString()}`, { points: Number(points), count: Number(count), sum, min, max }]));
  };
  const fromPoints = await figures(`
    SELECT instrument_id, intDiv(ts, ${widthMs}) * ${widthMs} AS at, count(), count(v), sum(ifNull(v, 0)), min(v), max(v)
      FROM (SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
              FROM points WHERE organization_id = ${organizationId} GROUP BY instrument_id, ts)
     WHERE d = 0 GROUP BY instrument_id, at`);
  const fromRollups = await figures(`
    SELECT instrument_id, ${column} AS at, argMax(points, version) AS p, argMax(value_count, version), argMax(value_sum, version),
           argMax(tuple(value_min), version).1, argMax(tuple(value_max), version).1
      FROM ${table} WHERE organization_id = ${organizationId} GROUP BY instrument_id, at HAVING p > 0`);
  const same = (a: PeriodFigures, b: PeriodFigures) => a.points === b.points && a.count === b.count && a.min === b.min && a.max === b.max
    && Math.abs(a.sum - b.sum) <= 1e-9 * Math.max(1, Math.abs(a.sum));
  const periods = [...new Set([...fromPoints.keys(), ...fromRollups.keys()])]
    .filter((at) => !fromPoints.has(at) || !fromRollups.has(at) || !same(fromPoints.get(at)!, fromRollups.get(at)!))
    .map((at) => ({ at, rollup: fromRollups.get(at) ?? null, points: fromPoints.get(at) ?? null }));
  return { compared: fromPoints.size, periods };
}

async function checkAuditInvariants(plant: BenchPlant, pool: Pool): Promise<boolean> {
  let ok = true;
  const { rows: facilities } = await pool.query<{ id: string; name: string }>(
    `SELECT id::text, name FROM facilities WHERE organization_id = $1 AND name LIKE 'soak-edit-%'`, [plant.organizationId]);
  const { rows: events } = await pool.query<{ resource_id: string; n: number }>(
    `SELECT resource_id, count(*)::int AS n FROM audit_logs
      WHERE organization_id = $1 AND resource_type = 'facility' AND action = 'create' GROUP BY resource_id`, [plant.organizationId]);
  const eventsOf = new Map(events.map((row) => [row.resource_id, row.n]));
  const committed = new Set(facilities.map((row) => row.id));
  const notOnce = facilities.filter((row) => eventsOf.get(row.id) !== 1).map((row) => ({ id: row.id, events: eventsOf.get(row.id) ?? 0 }));
  const withoutChange = events.filter((row) => !committed.has(row.resource_id)).map((row) => row.resource_id);
  ok = report('each_change_audited_once', notOnce.length === 0, { changes: facilities.length, events_each: 1 },
    { changes: facilities.length, not_once: notOnce.slice(0, 10) }) && ok;
  ok = report('no_event_without_its_change', withoutChange.length === 0, 0, withoutChange.slice(0, 10)) && ok;
  const names = new Set(facilities.map((row) => row.name));
  const lost = [...acknowledgedFacilities].filter((name) => !names.has(name));
  ok = report('acknowledged_changes_kept', lost.length === 0, acknowledgedFacilities.size, { missing: lost.slice(0, 10) }) && ok;
  // Uploads and deletions: each finished one has exactly one audit event (its id is the job's), and no
  // import or deletion event names a job that did not finish.
  const { rows: jobAudit } = await pool.query<{ finished: number; not_once: number; orphan_events: number }>(
    `SELECT (SELECT count(*)::int FROM ingest_jobs WHERE kind IN ('csv', 'deletion') AND state IN ('completed', 'failed')) AS finished,
            (SELECT count(*)::int FROM ingest_jobs j WHERE j.kind IN ('csv', 'deletion') AND j.state IN ('completed', 'failed')
                AND (SELECT count(*) FROM audit_logs a WHERE a.event_id = j.id) <> 1) AS not_once,
            (SELECT count(*)::int FROM audit_logs a WHERE a.action IN ('import', 'delete_readings')
                AND NOT EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.id = a.event_id AND j.state IN ('completed', 'failed'))) AS orphan_events`);
  const audited = jobAudit[0]!;
  ok = report('each_finished_ingest_job_audited_once', audited.not_once === 0 && audited.orphan_events === 0,
    { jobs: audited.finished, not_once: 0, events_without_finished_job: 0 },
    { jobs: audited.finished, not_once: audited.not_once, events_without_finished_job: audited.orphan_events }) && ok;
  const { rows: outbox } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_outbox');
  ok = report('audit_outbox_drained', outbox[0]!.n === 0, 0, outbox[0]!.n) && ok;
  return ok;
}

async function waitOutboxDrained(pool: Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_outbox');
    if (rows[0]!.n === 0 || Date.now() > deadline) return;
    await sleep(1_000);
  }
}

/** Every ingest job finished and every completed post's rollups stored (none left owing in rollup_backlog). */
async function waitAllFinished(pool: Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ingest_jobs WHERE state IN ('queued', 'running')) + (SELECT count(*) FROM rollup_backlog) AS n`);
    if (Number(rows[0]!.n) === 0 || Date.now() > deadline) return;
    await sleep(1_000);
  }
}

async function waitApiAnswers(): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      await fetch(`${base}/api/v1/health`, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch { /* not listening yet */ }
    await sleep(250);
  }
  throw new Error('the api did not start');
}

async function dropDatabases(): Promise<void> {
  const admin = new pg.Client({ connectionString: Object.assign(new URL(config.DATABASE_URL), { pathname: '/postgres' }).toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "bp_soak_${id}" WITH (FORCE)`).finally(() => admin.end());
  const chAdmin = createClickHouseAdmin(config.CLICKHOUSE_URL);
  // A busy ClickHouse can take a while to drop the tables the soak filled.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await chAdmin.command({ query: `DROP DATABASE IF EXISTS bp_soak_${id}` });
      break;
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(5_000);
    }
  }
  await chAdmin.close();
}

// --- main ------------------------------------------------------------------------------------------

async function main(): Promise<boolean> {
  log(`${MINUTES} minutes; databases bp_soak_${id}; Redis on ${REDIS_PORT}; api on ${API_PORT}`);
  await migrateAll(config, createLogger('soak', 'warn'));
  const pool = createPool(config.DATABASE_URL, 4);
  const clickhouse = createClickHouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  await redis.start();
  try {
    const plant = await seedPlant(pool, FEEDS + 2);
    startApi();
    for (let index = 0; index < WORKERS; index += 1) startWorkerAt(index);
    startAuditWorker();
    await waitApiAnswers();
    const started = Date.now();
    const until = started + MINUTES * 60_000;
    const feedInstruments = plant.instrumentIds.slice(0, FEEDS);
    const clients = [
      ...feedInstruments.map((instrumentId) => feed(plant, instrumentId, until)),
      deleter(plant, feedInstruments[0]!, until),
      deleter(plant, feedInstruments[1]!, until),
      uploader(plant, [plant.instrumentIds[FEEDS]!, plant.instrumentIds[FEEDS + 1]!], until),
      auditedEditor(plant, until),
    ];
    const chaos = (async () => {
      while (Date.now() < until) {
        await sleep(random(FAULT_EVERY_S[0], FAULT_EVERY_S[1]) * 1000);
        if (Date.now() >= until) break;
        await injectFault();
      }
    })();
    await Promise.all([...clients, chaos]);
    log(`load over after ${((Date.now() - started) / 60_000).toFixed(1)} minutes: ${JSON.stringify({ ...counts, faults })}`);
    if (!alive(api)) startApi();
    for (let index = 0; index < WORKERS; index += 1) if (!alive(workers[index]!)) startWorkerAt(index);
    if (!alive(auditWorker)) startAuditWorker();
    await waitApiAnswers();
    await waitAllFinished(pool, 5 * 60_000);
    await waitOutboxDrained(pool, 2 * 60_000);
    process.stdout.write(`${JSON.stringify({ soak: { minutes: MINUTES, ...counts, faults } })}\n`);
    return await checkInvariants(plant, pool, clickhouse);
  } finally {
    await Promise.all([stopGently(api), stopGently(auditWorker), ...workers.map((worker) => stopGently(worker))]);
    await pool.end();
    await clickhouse.close();
    await redis.close();
    await dropDatabases().catch((error: unknown) => log(`could not drop the soak's databases bp_soak_${id}: ${(error as Error).message}`));
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().then((ok) => process.exit(ok ? 0 : 1), (error: unknown) => {
  process.stderr.write(`soak failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
