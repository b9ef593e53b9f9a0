/**
 * Faults on the local cluster (deploy/local/cluster.mjs) during a steady feed: feeders post points
 * through the round-robin proxy in front of the two apis, sending a post again (same Idempotency-Key)
 * until it is answered 2xx; meanwhile each step kills -9 one or two processes (ClickHouse servers,
 * ZooKeeper nodes, apis, ingest-workers, the Redis of the run's own, which comes back empty), checks
 * that a read through the api answers while they are down, and starts them again. Then every
 * invariant is checked and reported:
 * - each accepted point stored exactly once (count, sum of times and sum of values per instrument);
 * - each minute's and hour's rollup equal to the deduplicated points;
 * - every job finished, none failed, no rollups owed or waiting for a recheck;
 * - each shard's two replicas hold the same rows once the killed servers are back (caught up).
 *
 * Work is counted, never timed: a step waits for a number of accepted posts, not for seconds.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createClickHouse, type ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { OwnRedis } from '../../api/test/support/own-redis.ts';
import { seedPlant } from '../bench/fixtures.ts';
import {
  CLICKHOUSE_NODES, FAULTS_REDIS_PORT, clusterEnvironment, startClusterProduct, startClusterServices, type ClusterProduct, type ClusterServices,
} from '../local/cluster.mjs';

/**
 * Processes killed together in one step: zk1..zk3, ch1..ch4 (ch1, ch2 shard 1; ch3, ch4 shard 2), api1,
 * api2, ingest1, ingest2, and redis (kill -9, started again empty: every queue entry and lock is lost).
 */
export type FaultStep = readonly string[];

/** One at a time: any ClickHouse server, any ZooKeeper node, an api, an ingest-worker. */
export const SINGLE_FAULTS: FaultStep[] = [['ch1'], ['ch4'], ['zk1'], ['zk3'], ['api1'], ['ingest1'], ['redis']];
/**
 * In pairs where a replica of each shard and a ZooKeeper majority survive; Redis lost with an
 * ingest-worker mid-job, so the jobs both workers held are found again from PostgreSQL alone.
 */
export const PAIRED_FAULTS: FaultStep[] = [
  ['ch1', 'ch3'], ['ch2', 'zk2'], ['api2', 'ingest2'], ['ch1', 'ingest1'], ['zk1', 'api1'], ['ingest2', 'redis'],
];

export interface FaultReport { invariant: string; pass: boolean; expected: unknown; actual: unknown }

export interface FaultRunOptions {
  steps: FaultStep[];
  /** Accepted posts before each kill, while the processes are down, and after they are back. */
  postsPerPhase?: number;
  feeds?: number;
  pointsPerPost?: number;
  dataDir?: string;
  /** Port of the run's own Redis (the one the `redis` fault kills); default FAULTS_REDIS_PORT of cluster.mjs. */
  redisPort?: number;
  /** CLICKHOUSE_INSERT_QUORUM of the product's processes (default 0, the product's; docs/scale.md weighs 2). */
  insertQuorum?: number;
  report?: (line: FaultReport) => void;
  log?: (message: string) => void;
}

const T0 = Date.UTC(2025, 0, 1);
const valueAt = (second: number) => (second % 1_000) / 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the cluster and the product in fresh databases, runs the steps, checks, stops; answers whether every invariant held. */
export async function runFaultMatrix(options: FaultRunOptions): Promise<{ ok: boolean; reports: FaultReport[]; counts: Record<string, number> }> {
  const log = options.log ?? ((message: string) => process.stderr.write(`[faults] ${message}\n`));
  const reports: FaultReport[] = [];
  const report = (invariant: string, pass: boolean, expected: unknown, actual: unknown) => {
    const line = { invariant, pass, expected, actual };
    reports.push(line);
    options.report?.(line);
    return pass;
  };
  const postsPerPhase = options.postsPerPhase ?? 6;
  const feeds = options.feeds ?? 4;
  const pointsPerPost = options.pointsPerPost ?? 200;
  const id = randomBytes(4).toString('hex');
  const database = `bp_faults_${id}`;
  // A Redis of the run's own: the `redis` fault kills it, and nothing of anyone else's is lost.
  const redis = new OwnRedis(options.redisPort ?? FAULTS_REDIS_PORT);
  const env = clusterEnvironment({
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    REDIS_URL: redis.url,
  }, {
    database, queuePrefix: `bp-faults-${id}`,
    extra: {
      NODE_ENV: 'test', HOST: '127.0.0.1', CLICKHOUSE_INSERT_QUORUM: String(options.insertQuorum ?? 0), LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'error', CONSOLE_DIST: '/nonexistent',
      // Killed workers' jobs and lost deliveries are taken up again within seconds.
      INGEST_LOCK_MS: '5000', INGEST_RECONCILE_MS: '2000', INGEST_BACKOFF_MAX_MS: '2000', INGEST_SWEEP_MS: '10000',
    },
  });
  const counts = { posts: 0, points: 0, retried: 0, reads: 0, reads_failed_then_answered: 0, rollup_ranges_rechecked: 0 };
  let services: ClusterServices | null = null;
  let product: ClusterProduct | null = null;
  let pool: Pool | null = null;
  let clickhouse: ClickHouseClient | null = null;
  /** kill -9 one process of a step; `restart` starts it again (Redis empty). */
  const kill = (name: string) => (name === 'redis' ? redis.kill()
    : name.startsWith('ch') || name.startsWith('zk') ? services!.kill(name) : product!.kill(name));
  const restart = (name: string) => (name === 'redis' ? redis.start()
    : name.startsWith('ch') || name.startsWith('zk') ? services!.restart(name) : product!.restart(name));
  try {
    await redis.start();
    services = await startClusterServices({ dataDir: options.dataDir, fresh: true });
    product = await startClusterProduct(env, { others: false });
    pool = createPool(env.DATABASE_URL, 4);
    clickhouse = createClickHouse(`http://127.0.0.1:${CLICKHOUSE_NODES[1]!.httpPort}`, database, undefined, 60_000, env);
    const plant = await seedPlant(pool, feeds);
    const base = product.proxyUrl;
    const accepted = new Map<number, Array<[number, number]>>();

    let feeding = true;
    const untilAccepted = async (send: () => Promise<Response>, what: string) => {
      for (let attempt = 0; ; attempt += 1) {
        try {
          const response = await send();
          if (response.ok) return response;
          const body = await response.text();
          if (response.status >= 400 && response.status < 500 && response.status !== 429) throw new Error(`${what} answered ${response.status}: ${body}`);
        } catch (error) {
          if ((error as Error).message.includes(' answered 4')) throw error;
        }
        counts.retried += 1;
        await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 4)));
      }
    };
    const feed = async (instrumentId: number) => {
      let second = 0;
      while (feeding) {
        const data = Array.from({ length: pointsPerPost }, (_, i) => ({ measured_at: T0 + (second + i) * 1000, instrument_id: instrumentId, float_value: valueAt(second + i) }));
        const body = JSON.stringify({ data });
        const key = randomUUID();
        await untilAccepted(() => fetch(`${base}/api/v1/time-series-data/bulk`, {
          method: 'POST', body, signal: AbortSignal.timeout(30_000),
          headers: { authorization: `Bearer ${plant.token}`, 'content-type': 'application/json', 'idempotency-key': key },
        }), 'bulk post');
        if (!accepted.has(instrumentId)) accepted.set(instrumentId, []);
        accepted.get(instrumentId)!.push([second, second + pointsPerPost - 1]);
        counts.posts += 1;
        counts.points += pointsPerPost;
        second += pointsPerPost;
        await sleep(100);
      }
    };
    const untilPosts = async (more: number) => {
      const target = counts.posts + more;
      while (counts.posts < target) await sleep(100);
    };
    /** A chart's read through the proxy answers (a request cut by a kill is sent again, and counted). */
    const readAnswers = async () => {
      counts.reads += 1;
      const query = `instrument_id=${plant.instrumentIds[0]}&start_time=${T0}&end_time=${T0 + 999_000}&limit=1000`;
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const status = await fetch(`${base}/api/v1/time-series-data?${query}`, {
          headers: { authorization: `Bearer ${plant.token}` }, signal: AbortSignal.timeout(30_000),
        }).then((response) => response.status, () => 0);
        if (status === 200) return { answered: true, statuses };
        statuses.push(status);
        if (attempt === 0) counts.reads_failed_then_answered += 1;
        await sleep(500);
      }
      counts.reads_failed_then_answered -= 1;
      return { answered: false, statuses };
    };

    const feeders = plant.instrumentIds.map((instrumentId) => feed(instrumentId));
    let readsOk = true;
    for (const step of options.steps) {
      await untilPosts(postsPerPhase);
      log(`kill -9 ${step.join(' and ')}`);
      await Promise.all(step.map(kill));
      await untilPosts(postsPerPhase);
      const { answered, statuses } = await readAnswers();
      readsOk &&= answered;
      // Statuses before the answer (0: no answer): a read cut by the kill is sent again.
      report(`reads_answer_while_down:${step.join('+')}`, answered, 200, { answered, before: [...new Set(statuses)] });
      await Promise.all(step.map(restart));
      log(`${step.join(' and ')} back`);
    }
    await untilPosts(postsPerPhase);
    feeding = false;
    await Promise.all(feeders);
    log(`feed over: ${JSON.stringify(counts)}`);

    await waitAllFinished(pool, 4 * 60_000);
    const { rows: states } = await pool.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM ingest_jobs GROUP BY state');
    const byState = Object.fromEntries(states.map((row) => [row.state, Number(row.n)]));
    report('every_job_finished', (byState.queued ?? 0) + (byState.running ?? 0) === 0, { queued: 0, running: 0 }, byState);
    report('no_job_failed', (byState.failed ?? 0) === 0, 0, byState.failed ?? 0);
    const { rows: [owed] } = await pool.query<{ n: number; recheck: number }>(
      'SELECT (SELECT count(*) FROM rollup_backlog)::int AS n, (SELECT count(*) FROM rollup_recheck)::int AS recheck');
    report('no_rollups_owed', owed!.n === 0, 0, owed!.n);
    // Ranges recomputed while a replica did not answer, rechecked from every replica once all answer.
    report('no_rollups_to_recheck', owed!.recheck === 0, 0, owed!.recheck);
    const { rows: [recorded] } = await pool.query<{ n: string }>(
      'SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS n FROM rollup_recheck_id_seq');
    counts.rollup_ranges_rechecked = Number(recorded!.n);

    const stored = await queryRows<[string, string, string, number, string]>(clickhouse, `
      SELECT instrument_id, count(), sum(ts), sum(v), max(c) FROM (
        SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d, count() AS c
          FROM points WHERE organization_id = ${plant.organizationId} GROUP BY instrument_id, ts)
       WHERE d = 0 GROUP BY instrument_id`);
    const byInstrument = new Map(stored.map((row) => [Number(row[0]), row]));
    for (const instrumentId of plant.instrumentIds) {
      let keys = 0; let seconds = 0; let values = 0;
      for (const [from, to] of accepted.get(instrumentId) ?? []) {
        for (let second = from; second <= to; second += 1) { keys += 1; seconds += second; values += valueAt(second); }
      }
      const row = byInstrument.get(instrumentId);
      const got = row ? { keys: Number(row[1]), seconds: Number((BigInt(row[2]) - BigInt(row[1]) * BigInt(T0)) / 1000n), values: row[3] } : { keys: 0, seconds: 0, values: 0 };
      const want = { keys, seconds, values };
      report(`points_exactly_once:instrument_${instrumentId}`, got.keys === want.keys && got.seconds === want.seconds && got.values === want.values, want, got);
    }
    for (const [table, column, widthMs] of [['points_rollup_1m', 'minute', 60_000], ['points_rollup_1h', 'hour', 3_600_000]] as const) {
      const disagreeing = await rollupsDisagreeing(clickhouse, plant.organizationId, table, column, widthMs);
      report(`rollups_agree_with_points:${table}`, disagreeing.count === 0, { periods: disagreeing.compared, disagreeing: 0 }, disagreeing);
    }
    const caughtUp = await replicasCaughtUp(database, 2 * 60_000);
    const rowsOf = (replica: string) => Number(/points=(\d+)\//.exec(replica)?.[1] ?? 0);
    report('every_shard_written', caughtUp.every((shard) => rowsOf(shard.replicas[0]!) > 0), 'points on both shards',
      caughtUp.map((shard) => ({ shard: shard.shard, points: rowsOf(shard.replicas[0]!) })));
    report('replicas_caught_up', caughtUp.every((shard) => shard.same), 'both replicas of each shard hold the same rows', caughtUp);
    report('reads_answered_through_every_fault', readsOk, true, readsOk);
    return { ok: reports.every((line) => line.pass), reports, counts };
  } finally {
    await clickhouse?.close();
    await pool?.end();
    await product?.stop();
    await services?.stop();
    await redis.close();
    await dropPostgresDatabase(env.DATABASE_URL).catch(() => undefined);
  }
}

async function queryRows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  const result = await clickhouse.query({ query, format: 'JSONCompact' });
  return (await result.json<T>()).data;
}

async function waitAllFinished(pool: Pool, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ingest_jobs WHERE state IN ('queued', 'running')) + (SELECT count(*) FROM rollup_backlog)
              + (SELECT count(*) FROM rollup_recheck) AS n`);
    if (Number(rows[0]!.n) === 0 || Date.now() > deadline) return;
    await sleep(1_000);
  }
}

/** Periods where the newest rollup row and the aggregation of the deduplicated points differ, either way. */
async function rollupsDisagreeing(clickhouse: ClickHouseClient, organizationId: number, table: string, column: string, widthMs: number) {
  const figures = async (query: string) => new Map((await queryRows<[string, string, string, string, number, number | null, number | null]>(clickhouse, query))
    .map(([instrumentId, at, points, count, sum, min, max]) => [`${instrumentId}:${at}`, `${points}/${count}/${sum.toFixed(6)}/${min}/${max}`]));
  const fromPoints = await figures(`
    SELECT instrument_id, intDiv(ts, ${widthMs}) * ${widthMs} AS at, count(), count(v), sum(ifNull(v, 0)), min(v), max(v)
      FROM (SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
              FROM points WHERE organization_id = ${organizationId} GROUP BY instrument_id, ts)
     WHERE d = 0 GROUP BY instrument_id, at`);
  const fromRollups = await figures(`
    SELECT instrument_id, ${column} AS at, argMax(points, version) AS p, argMax(value_count, version), argMax(value_sum, version),
           argMax(tuple(value_min), version).1, argMax(tuple(value_max), version).1
      FROM ${table} WHERE organization_id = ${organizationId} GROUP BY instrument_id, at HAVING p > 0`);
  const differing = [...new Set([...fromPoints.keys(), ...fromRollups.keys()])].filter((at) => fromPoints.get(at) !== fromRollups.get(at));
  return { compared: fromPoints.size, count: differing.length, first: differing.slice(0, 5).map((at) => ({ at, points: fromPoints.get(at), rollup: fromRollups.get(at) })) };
}

/** Polls each shard's replicas directly until they hold the same rows of every table (or the deadline passes). */
async function replicasCaughtUp(database: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const digest = async (port: number) => {
    const client = createClickHouse(`http://127.0.0.1:${port}`, database);
    try {
      const rows = await queryRows<[string, string]>(client, ['points', 'points_rollup_1m', 'points_rollup_1h'].map((table) =>
        `SELECT '${table}', concat(toString(count()), '/', toString(sum(cityHash64(organization_id, instrument_id, version)))) FROM ${table}_local`).join(' UNION ALL '));
      return rows.map(([table, value]) => `${table}=${value}`).sort().join(' ');
    } finally {
      await client.close();
    }
  };
  for (;;) {
    const shards = [];
    for (const shard of [1, 2]) {
      const [a, b] = CLICKHOUSE_NODES.filter((node) => node.shard === shard);
      const [first, second] = await Promise.all([digest(a!.httpPort), digest(b!.httpPort)]).catch(() => ['unreachable', 'unreachable']);
      shards.push({ shard, same: first === second && first !== 'unreachable', replicas: [first, second] });
    }
    if (shards.every((shard) => shard.same) || Date.now() > deadline) return shards;
    await sleep(1_000);
  }
}

async function dropPostgresDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`).finally(() => admin.end());
}
