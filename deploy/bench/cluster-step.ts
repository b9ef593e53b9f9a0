/**
 * The `cluster` bench step: the same feeds and backfill posts to the single-node stack the bench runs
 * and to the local cluster (deploy/local/cluster.mjs: 2 shards x 2 replicas, 3 ZooKeeper nodes, two
 * apis behind the proxy, two ingest-workers), one after the other in the same run. Reported:
 *   - each workload's points/s until queryable on the cluster and its ratio to the single node (on one
 *     machine the cluster does more work on the same cores: the figure is the cost, not a speed-up);
 *   - ZooKeeper transactions per insert and per post: ClickHouse's own counters (system.events
 *     ZooKeeperTransactions and InsertQuery, summed over the four servers) around each workload. An
 *     insert here is every INSERT a server ran: the ingest-worker's into a Distributed table and the
 *     per-shard inserts it becomes.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { CLICKHOUSE_NODES, clusterEnvironment, startClusterProduct, startClusterServices } from '../local/cluster.mjs';
import { rollupsStored, seedPlant } from './fixtures.ts';

export interface ClusterFigure { name: string; value: number; unit: string; baseline: number | null; ratio: number | null; target: string; pass: boolean }

export interface ClusterStepOptions {
  /** The single-node stack's api, and its PostgreSQL. */
  base: string;
  pool: Pool;
  scale: number;
  dataDir: string;
  log: (message: string) => void;
  report: (figure: ClusterFigure) => void;
}

interface Workload { name: string; clients: number; posts: (instrumentIds: number[]) => string[]; points: number }

const T0 = Date.UTC(2026, 0, 1);
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Feeds: each post 5 s of 1 Hz readings of 10 instruments (50 points); backfill: 50,000 points a post. */
function workloads(scale: number): Workload[] {
  const scaled = (value: number) => Math.max(1, Math.round(value * scale));
  const feedPosts = scaled(2_000);
  const backfillPosts = scaled(40);
  const body = (instrumentIds: number[], firstSecond: number, seconds: number) => JSON.stringify({
    data: instrumentIds.flatMap((instrumentId) => Array.from({ length: seconds }, (_, i) => ({
      measured_at: T0 + (firstSecond + i) * 1000, instrument_id: instrumentId, float_value: ((firstSecond + i) % 1000) / 8,
    }))),
  });
  return [
    {
      name: 'feeds', clients: 32, points: feedPosts * 50,
      // 200 feeds of 10 instruments each, every feed posting its next 5 seconds in turn.
      posts: (ids) => Array.from({ length: feedPosts }, (_, n) => body(ids.slice((n % 200) * 10, (n % 200) * 10 + 10), Math.floor(n / 200) * 5, 5)),
    },
    {
      name: 'backfill', clients: 8, points: backfillPosts * 50_000,
      posts: (ids) => Array.from({ length: backfillPosts }, (_, n) => body(ids.slice(2_000, 2_010), 1_000_000 + n * 5_000, 5_000)),
    },
  ];
}

/** An organisation with 2,010 instruments and an editor's API key (feeds post with keys). */
async function seedFeeds(pool: Pool): Promise<{ apiKey: string; instrumentIds: number[] }> {
  const plant = await seedPlant(pool, 0);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO instruments (organization_id, equipment_id, name, type)
     SELECT $1, $2, 'Feed probe ' || n, 'temperature' FROM generate_series(1, 2010) AS n RETURNING id`,
    [plant.organizationId, plant.equipmentId]);
  const apiKey = `bpk_${randomBytes(32).toString('base64url')}`;
  await pool.query(`INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, 'Bench cluster', $2, $3, 'editor')`,
    [plant.organizationId, createHash('sha256').update(apiKey).digest('hex'), apiKey.slice(0, 12)]);
  return { apiKey, instrumentIds: rows.map((row) => Number(row.id)).sort((a, b) => a - b) };
}

/** Sends every post with ?wait=true from `clients` concurrent clients; answers the seconds until all are stored and their rollups too. */
async function postAll(base: string, apiKey: string, bodies: string[], clients: number, pool: Pool): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const url = new URL(`${base}/api/v1/time-series-data/bulk?wait=true`);
  const send = (body: string) => new Promise<void>((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST', agent,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', prefer: 'return=minimal', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume();
      response.once('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`a post answered ${response.statusCode}`))));
    });
    request.once('error', reject);
    request.end(body);
  });
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < bodies.length) await send(bodies[next++]!);
  }));
  await rollupsStored(pool);
  agent.destroy();
  return (performance.now() - started) / 1000;
}

/** ClickHouse's ZooKeeper and insert counters, summed over the cluster's servers. */
async function clusterCounters(): Promise<{ transactions: number; writes: number; inserts: number }> {
  const totals = { transactions: 0, writes: 0, inserts: 0 };
  const query = encodeURIComponent(
    "SELECT event, value FROM system.events WHERE event IN ('ZooKeeperTransactions', 'ZooKeeperCreate', 'ZooKeeperSet', 'ZooKeeperRemove', 'ZooKeeperMulti', 'InsertQuery') FORMAT TSV");
  // A fresh connection each time, tried again: a kept-alive one may have been closed by the server meanwhile.
  const read = async (port: number): Promise<string> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await (await fetch(`http://127.0.0.1:${port}/?query=${query}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(30_000) })).text();
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
  for (const node of CLICKHOUSE_NODES) {
    for (const line of (await read(node.httpPort)).trim().split('\n')) {
      const [event, value] = line.split('\t');
      const n = Number(value);
      if (event === 'ZooKeeperTransactions') totals.transactions += n;
      else if (event === 'InsertQuery') totals.inserts += n;
      else if (event) totals.writes += n;
    }
  }
  return totals;
}

export async function benchCluster(options: ClusterStepOptions): Promise<void> {
  const { log, report } = options;
  const id = randomBytes(4).toString('hex');
  const database = `bp_bench_cluster_${id}`;
  const env = clusterEnvironment({
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6380',
  }, {
    database, queuePrefix: `bp-bench-cluster-${id}`,
    extra: { NODE_ENV: 'production', HOST: '127.0.0.1', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', CONSOLE_DIST: '/nonexistent' },
  });
  const single = await seedFeeds(options.pool);
  log('cluster: starting 3 ZooKeeper nodes, 2 x 2 ClickHouse servers, 2 apis and 2 ingest-workers');
  const services = await startClusterServices({ dataDir: options.dataDir, fresh: true });
  let product: Awaited<ReturnType<typeof startClusterProduct>> | null = null;
  const pool = createPool(env.DATABASE_URL, 4);
  try {
    product = await startClusterProduct(env, { compiled: true, others: false });
    const clustered = await seedFeeds(pool);
    for (const workload of workloads(options.scale)) {
      log(`cluster: ${workload.name}, ${workload.points} points, ${workload.clients} clients: single node`);
      const singleSeconds = await postAll(options.base, single.apiKey, workload.posts(single.instrumentIds), workload.clients, options.pool);
      log(`cluster: ${workload.name}: cluster`);
      const posts = workload.posts(clustered.instrumentIds);
      const before = await clusterCounters();
      const clusterSeconds = await postAll(product.proxyUrl, clustered.apiKey, posts, workload.clients, pool);
      const after = await clusterCounters();
      const singleRate = workload.points / singleSeconds;
      const clusterRate = workload.points / clusterSeconds;
      const inserts = Math.max(1, after.inserts - before.inserts);
      log(`cluster: ${workload.name}: single node ${Math.round(singleRate)} points/s, cluster ${Math.round(clusterRate)} points/s; `
        + `ZooKeeper ${after.transactions - before.transactions} transactions (${after.writes - before.writes} writes) for ${inserts} inserts and ${posts.length} posts`);
      report({
        name: `cluster_${workload.name}_points_per_s`, value: Math.round(clusterRate), unit: 'points/s', baseline: Math.round(singleRate),
        ratio: round(clusterRate / singleRate), target: 'information (2 x 2 cluster on the same machine / single node)', pass: true,
      });
      report({
        name: `cluster_${workload.name}_zookeeper_transactions_per_insert`, value: round((after.transactions - before.transactions) / inserts, 1),
        unit: 'transactions', baseline: null, ratio: null, target: 'information', pass: true,
      });
      report({
        name: `cluster_${workload.name}_zookeeper_writes_per_insert`, value: round((after.writes - before.writes) / inserts, 1),
        unit: 'writes', baseline: null, ratio: null, target: 'information', pass: true,
      });
      report({
        name: `cluster_${workload.name}_zookeeper_transactions_per_post`, value: round((after.transactions - before.transactions) / posts.length, 2),
        unit: 'transactions', baseline: null, ratio: null, target: 'information', pass: true,
      });
    }
  } finally {
    await pool.end();
    await product?.stop();
    await services.stop();
    const admin = new pg.Client({ connectionString: Object.assign(new URL(env.DATABASE_URL), { pathname: '/postgres' }).toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${path.basename(new URL(env.DATABASE_URL).pathname)}" WITH (FORCE)`).finally(() => admin.end());
  }
}
