/**
 * `npm run cluster`: the whole product on a ClickHouse cluster on this one machine, from Debian's
 * packages, with its data under .data/cluster/: a 3-node ZooKeeper ensemble, ClickHouse as 2 shards x 2
 * replicas (four clickhouse-server processes with their own configuration, ports, macros and data),
 * two apis behind a round-robin proxy, two ingest-workers, the audit-worker and the export-worker.
 * Ctrl-C stops them in order: proxy and apis, workers, ClickHouse, ZooKeeper.
 *
 * Each product process reaches ClickHouse through a failover forwarder of its own (the first server of
 * its list that answers /ping; the lists are rotated so the processes spread over the servers), which
 * stands in for the load balancer a real deployment puts in front of ClickHouse (docs/scale.md): any
 * server answers for the whole cluster through the Distributed tables.
 *
 * `npm run cluster -- --faults` runs the fault matrix (deploy/cluster/faults-cli.ts) on a cluster of its
 * own under .data/cluster-faults/ and stops. Ports: ZooKeeper 12181-12183 (peers 12888-12890, elections 13888-13890), ClickHouse HTTP
 * 18123-18126, native 19001-19004, interserver 19009-19012, ClickHouse forwarders 18131-18136, apis
 * 18201-18202, proxy 18200, the fault matrix's own Redis 18210; each plus CLUSTER_PORT_OFFSET when set.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDependencies } from './deps.mjs';
import { DATA_DIR, ROOT, ensureClickHouseInstalled, ensureServices, ensureZooKeeper, tcpReachable } from './services.mjs';
import { buildConsoleIfStale, nodeArguments, startProcesses } from './stack.mjs';

export const CLUSTER_NAME = 'bioprocess';
/**
 * CLUSTER_PORT_OFFSET (default 0) is added to every port below: a second cluster (another checkout, a
 * fault run beside a demo) runs beside the first with an offset of, say, 100.
 */
function portOffset() {
  const text = process.env.CLUSTER_PORT_OFFSET ?? '0';
  const offset = Number(text);
  if (!/^\d+$/.test(text) || offset > 40_000) throw new Error(`CLUSTER_PORT_OFFSET must be a whole number from 0 to 40000, not "${text}"`);
  return offset;
}
const OFFSET = portOffset();
export const ZOOKEEPER_NODES = [1, 2, 3].map((id) => ({
  id, clientPort: OFFSET + 12180 + id, peerPort: OFFSET + 12887 + id, electionPort: OFFSET + 13887 + id,
}));
export const CLICKHOUSE_NODES = [1, 2, 3, 4].map((n) => ({
  n, shard: Math.ceil(n / 2), replica: `r${n}`,
  httpPort: OFFSET + 18122 + n, tcpPort: OFFSET + 19000 + n, interserverPort: OFFSET + 19008 + n,
}));
export const API_PORTS = [OFFSET + 18201, OFFSET + 18202];
export const PROXY_PORT = OFFSET + 18200;
/** The fault matrix's own Redis, which it kills (deploy/cluster/fault-matrix.ts); `npm run cluster` uses the shared one. */
export const FAULTS_REDIS_PORT = OFFSET + 18210;
const FORWARDER_BASE_PORT = OFFSET + 18131;

const log = (message) => process.stdout.write(`[cluster] ${message}\n`);

function zooKeeperConfig(dir, node) {
  return [
    'tickTime=500', 'initLimit=20', 'syncLimit=10',
    `dataDir=${dir}`, `clientPort=${node.clientPort}`, 'clientPortAddress=127.0.0.1',
    'admin.enableServer=false', '4lw.commands.whitelist=mntr,ruok,srvr,stat',
    // Snapshots and logs of a test cluster are not worth keeping past the last few.
    'autopurge.snapRetainCount=3', 'autopurge.purgeInterval=1',
    ...ZOOKEEPER_NODES.map((peer) => `server.${peer.id}=127.0.0.1:${peer.peerPort}:${peer.electionPort}`),
    '',
  ].join('\n');
}

/**
 * A server's configuration for ClickHouse 18.16 (and current releases, which still read <yandex>):
 * modest caches (four servers share one machine), the cluster, ZooKeeper and its own macros.
 */
function clickHouseConfig(dir, node) {
  const shards = [1, 2].map((shard) => `
      <shard>
        <internal_replication>true</internal_replication>
        ${CLICKHOUSE_NODES.filter((other) => other.shard === shard).map((other) =>
    `<replica><host>127.0.0.1</host><port>${other.tcpPort}</port></replica>`).join('\n        ')}
      </shard>`).join('');
  // The same servers, each a shard of its own: rollups are recomputed from every replica, and the
  // Distributed tables are altered on every server (docs/scale.md).
  const everyServer = CLICKHOUSE_NODES.map((other) => `
      <shard><replica><host>127.0.0.1</host><port>${other.tcpPort}</port></replica></shard>`).join('');
  // The first replica of each shard: replicated tables are altered there alone (docs/scale.md).
  const firstReplicas = [1, 2].map((shard) => CLICKHOUSE_NODES.find((other) => other.shard === shard)).map((other) => `
      <shard><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>${other.tcpPort}</port></replica></shard>`).join('');
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>${dir}/clickhouse.log</log>
    <errorlog>${dir}/clickhouse.err.log</errorlog>
    <size>100M</size>
    <count>2</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${node.httpPort}</http_port>
  <tcp_port>${node.tcpPort}</tcp_port>
  <interserver_http_port>${node.interserverPort}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <max_connections>1024</max_connections>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>100</max_concurrent_queries>
  <uncompressed_cache_size>0</uncompressed_cache_size>
  <mark_cache_size>268435456</mark_cache_size>
  <path>${dir}/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mlock_executable>false</mlock_executable>
  <remote_servers>
    <${CLUSTER_NAME}>${shards}
    </${CLUSTER_NAME}>
    <${CLUSTER_NAME}_replicas>${everyServer}
    </${CLUSTER_NAME}_replicas>
    <${CLUSTER_NAME}_shards>${firstReplicas}
    </${CLUSTER_NAME}_shards>
  </remote_servers>
  <zookeeper>
    ${ZOOKEEPER_NODES.map((zk) => `<node><host>127.0.0.1</host><port>${zk.clientPort}</port></node>`).join('\n    ')}
    <session_timeout_ms>10000</session_timeout_ms>
  </zookeeper>
  <macros>
    <shard>${node.shard}</shard>
    <replica>${node.replica}</replica>
  </macros>
  <distributed_ddl>
    <path>/clickhouse/task_queue/ddl</path>
  </distributed_ddl>
  <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
  <max_session_timeout>3600</max_session_timeout>
  <default_session_timeout>60</default_session_timeout>
</yandex>
`;
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
      <use_uncompressed_cache>0</use_uncompressed_cache>
      <load_balancing>random</load_balancing>
    </default>
    <readonly><readonly>1</readonly></readonly>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
`;

async function httpOk(url, timeoutMs = 1_000) {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })).ok;
  } catch {
    return false;
  }
}

/** Answers a ZooKeeper four-letter command (mntr, ruok); null when the node does not answer. */
export function zooKeeperCommand(port, command, timeoutMs = 1_500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (value) => { socket.destroy(); resolve(value); };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write(command));
    socket.on('data', (chunk) => { reply += chunk.toString('utf8'); });
    socket.once('end', () => done(reply));
  });
}

async function waitUntil(what, check, timeoutMs, failed = () => null) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    const why = failed();
    if (why) throw new Error(`${what}: ${why}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`${what} did not come up within ${Math.round(timeoutMs / 1000)} s`);
}

/**
 * A TCP forwarder: each connection goes to the first backend in `order()` that accepts it. `healthy`
 * (optional) skips backends known down without waiting for a refused connection.
 */
function startForwarder(port, backends, { roundRobin = false, healthy = () => true } = {}) {
  let next = 0;
  const sockets = new Set();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.pause();
    const start = roundRobin ? next++ % backends.length : 0;
    const order = backends.map((_, i) => backends[(start + i) % backends.length]);
    const candidates = [...order.filter((b) => healthy(b)), ...order.filter((b) => !healthy(b))];
    const attempt = (index) => {
      if (index >= candidates.length || client.destroyed) return client.destroy();
      const upstream = net.connect({ host: '127.0.0.1', port: candidates[index] });
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        sockets.add(upstream);
        upstream.once('close', () => sockets.delete(upstream));
        client.pipe(upstream).pipe(client);
        client.resume();
        client.once('error', () => upstream.destroy());
        upstream.once('error', () => client.destroy());
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
      });
      upstream.once('error', () => { if (!connected) attempt(index + 1); });
    };
    attempt(0);
  });
  server.listen(port, '127.0.0.1');
  return {
    port,
    close: () => new Promise((resolve) => { for (const socket of sockets) socket.destroy(); server.close(() => resolve()); }),
  };
}

/** Every service process started and not yet exited, for a stop that comes while they are starting. */
const spawnedServices = new Set();

/** Kills -9 whatever cluster service this process started and still runs (a Ctrl-C during the start). */
export function killSpawnedServices() {
  for (const child of spawnedServices) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

/**
 * Starts the services of the cluster (ZooKeeper, ClickHouse) under `dataDir`; answers a handle that
 * can kill and restart any of them (the fault tests) and stop all in order.
 */
export async function startClusterServices({ dataDir = path.join(DATA_DIR, 'cluster'), fresh = false } = {}) {
  const jar = ensureZooKeeper();
  ensureClickHouseInstalled();
  if (fresh && existsSync(dataDir)) {
    // Moved aside and removed in the background: four servers' parts are many small files, and
    // deleting them took minutes on a busy machine.
    const aside = `${dataDir}.removing-${process.pid}-${Date.now()}`;
    renameSync(dataDir, aside);
    spawn('rm', ['-rf', aside], { stdio: 'ignore', detached: true }).unref();
  }
  const busy = [];
  for (const port of [...ZOOKEEPER_NODES.map((z) => z.clientPort), ...CLICKHOUSE_NODES.map((c) => c.httpPort)]) {
    if (await tcpReachable('127.0.0.1', port, 300)) busy.push(port);
  }
  if (busy.length) throw new Error(`ports ${busy.join(', ')} are in use (another npm run cluster?)`);

  const children = new Map();
  const spawnService = (name, command, args, logFile) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'ignore'], detached: true });
    child.unref();
    spawnedServices.add(child);
    child.once('exit', () => spawnedServices.delete(child));
    const entry = { name, child, logFile, exited: false };
    child.once('exit', () => { entry.exited = true; });
    children.set(name, entry);
    return entry;
  };

  const startZooKeeper = (node) => {
    const dir = path.join(dataDir, `zk${node.id}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'myid'), `${node.id}\n`);
    writeFileSync(path.join(dir, 'zoo.cfg'), zooKeeperConfig(dir, node));
    return spawnService(`zk${node.id}`, 'java', [
      '-Xmx256m', `-Dzookeeper.log.dir=${dir}`, '-cp', `/etc/zookeeper/conf:${jar}`,
      'org.apache.zookeeper.server.quorum.QuorumPeerMain', path.join(dir, 'zoo.cfg'),
    ], path.join(dir, 'zookeeper.out'));
  };
  const startClickHouse = (node) => {
    const dir = path.join(dataDir, `ch${node.n}`);
    mkdirSync(path.join(dir, 'tmp'), { recursive: true });
    writeFileSync(path.join(dir, 'config.xml'), clickHouseConfig(dir, node));
    writeFileSync(path.join(dir, 'users.xml'), USERS_XML);
    return spawnService(`ch${node.n}`, 'clickhouse-server', [`--config-file=${path.join(dir, 'config.xml')}`], path.join(dir, 'clickhouse.err.log'));
  };

  const waitZooKeeper = (node) => waitUntil(`ZooKeeper ${node.id}`, async () => {
    const stat = await zooKeeperCommand(node.clientPort, 'srvr');
    return Boolean(stat && /Mode: (leader|follower)/.test(stat));
  }, 90_000, () => (children.get(`zk${node.id}`)?.exited ? `exited; see ${path.join(dataDir, `zk${node.id}`)}` : null));
  const waitClickHouse = (node) => waitUntil(`ClickHouse ${node.n}`, () => httpOk(`http://127.0.0.1:${node.httpPort}/ping`), 90_000,
    () => (children.get(`ch${node.n}`)?.exited ? `exited; see ${path.join(dataDir, `ch${node.n}`, 'clickhouse.err.log')}` : null));

  log(`starting a 3-node ZooKeeper ensemble (ports ${ZOOKEEPER_NODES.map((z) => z.clientPort).join(', ')})`);
  ZOOKEEPER_NODES.forEach(startZooKeeper);
  await Promise.all(ZOOKEEPER_NODES.map(waitZooKeeper));
  log(`starting ClickHouse as 2 shards x 2 replicas (HTTP ports ${CLICKHOUSE_NODES.map((c) => c.httpPort).join(', ')})`);
  CLICKHOUSE_NODES.forEach(startClickHouse);
  await Promise.all(CLICKHOUSE_NODES.map(waitClickHouse));

  /** Signals a service and resolves once it exited; one that outlives a SIGTERM by `graceMs` is killed. */
  const kill = (name, signal = 'SIGKILL', graceMs = 20_000) => {
    const entry = children.get(name);
    if (!entry || entry.exited) return Promise.resolve();
    return new Promise((resolve) => {
      // Not unref'd: a process whose only work left is this wait must not exit before the service did.
      const timer = setTimeout(() => { try { process.kill(-entry.child.pid, 'SIGKILL'); } catch { /* gone */ } }, graceMs);
      entry.child.once('exit', () => { clearTimeout(timer); resolve(); });
      try { process.kill(-entry.child.pid, signal); } catch { clearTimeout(timer); resolve(); }
    });
  };
  return {
    dataDir,
    /** kill -9 (default) a service by name: zk1..zk3, ch1..ch4. */
    kill,
    async restart(name) {
      const zk = ZOOKEEPER_NODES.find((z) => `zk${z.id}` === name);
      if (zk) { startZooKeeper(zk); return waitZooKeeper(zk); }
      const ch = CLICKHOUSE_NODES.find((c) => `ch${c.n}` === name);
      if (!ch) throw new Error(`no service ${name}`);
      startClickHouse(ch);
      return waitClickHouse(ch);
    },
    /** Stops ClickHouse, then ZooKeeper (which ClickHouse needs until it has stopped). */
    async stop() {
      await Promise.all(CLICKHOUSE_NODES.map((c) => kill(`ch${c.n}`, 'SIGTERM')));
      // ZooKeeper's log is synced before it answers: a node that does not stop at once loses nothing to a SIGKILL.
      await Promise.all(ZOOKEEPER_NODES.map((z) => kill(`zk${z.id}`, 'SIGTERM', 5_000)));
    },
  };
}

/** Per-process ClickHouse forwarders: each prefers another server, falls back on the others in turn. */
function startClickHouseForwarders(count) {
  const ports = CLICKHOUSE_NODES.map((c) => c.httpPort);
  // 1, 3, 2, 4: consecutive processes prefer servers of different shards.
  const preference = [0, 2, 1, 3];
  const up = new Map(ports.map((port) => [port, true]));
  const timer = setInterval(() => {
    for (const port of ports) void httpOk(`http://127.0.0.1:${port}/ping`, 400).then((ok) => up.set(port, ok));
  }, 500);
  timer.unref();
  const forwarders = Array.from({ length: count }, (_, i) => {
    const first = preference[i % preference.length];
    const order = ports.map((_, k) => ports[(first + k) % ports.length]);
    return startForwarder(FORWARDER_BASE_PORT + i, order, { healthy: (port) => up.get(port) !== false });
  });
  return {
    urls: forwarders.map((f) => `http://127.0.0.1:${f.port}`),
    close: async () => { clearInterval(timer); await Promise.all(forwarders.map((f) => f.close())); },
  };
}

/** Runs of the migrations before giving up: an ON CLUSTER statement can outlast a client's request timeout on a busy machine. */
const MIGRATION_RUNS = 3;

/**
 * The migrations (as `npm run migrate` applies them), in a child process awaited without blocking the
 * forwarders it connects through; run again when a run fails, which repeats nothing (docs/scale.md:
 * every statement is idempotent and a file is recorded once all of it ran).
 */
async function migrate(env, compiled) {
  for (let run = 1; ; run += 1) {
    const code = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, nodeArguments('api/src/migrate-cli.ts', compiled), { cwd: ROOT, stdio: 'inherit', env });
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code === 0) return;
    if (run === MIGRATION_RUNS) throw new Error(`migrations failed ${MIGRATION_RUNS} times; see the messages above`);
    log(`migrations failed (run ${run} of ${MIGRATION_RUNS}); running them again`);
  }
}

/** Resolves once the api on `port` answers its health route (any status: it is listening). */
const waitForApi = (port) => waitUntil(`api on ${port}`,
  () => fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(2_000) }).then(() => true, () => false), 180_000);

/** The environment of the product's processes on the cluster (PostgreSQL and Redis from ensureServices). */
export function clusterEnvironment(services, { database = 'bioprocess', queuePrefix = 'bioprocess-cluster', extra = {} } = {}) {
  const pg = new URL(services.DATABASE_URL);
  pg.pathname = `/${database}_cluster`;
  return {
    ...process.env,
    ...services,
    DATABASE_URL: pg.toString(),
    CLICKHOUSE_URL: `http://127.0.0.1:${CLICKHOUSE_NODES[0].httpPort}`,
    CLICKHOUSE_DATABASE: database,
    CLICKHOUSE_CLUSTER: CLUSTER_NAME,
    QUEUE_PREFIX: queuePrefix,
    UPLOAD_DIR: path.join(DATA_DIR, 'cluster', 'uploads'),
    EXPORT_DIR: path.join(DATA_DIR, 'cluster', 'exports'),
    ...extra,
  };
}

/**
 * The product on the cluster: migrations (ON CLUSTER), then apis, ingest-workers and the other workers,
 * each through its own ClickHouse forwarder. Answers a handle to kill and restart a process by name
 * (api1, api2, ingest1, ingest2, audit, export) and to stop everything in order.
 */
export async function startClusterProduct(env, { compiled = false, apis = 2, ingestWorkers = 2, others = true } = {}) {
  const names = [
    ...API_PORTS.slice(0, apis).map((_, i) => `api${i + 1}`),
    ...Array.from({ length: ingestWorkers }, (_, i) => `ingest${i + 1}`),
    ...(others ? ['audit', 'export'] : []),
  ];
  const forwarders = startClickHouseForwarders(names.length);
  const clickhouseUrl = Object.fromEntries(names.map((name, i) => [name, forwarders.urls[i]]));
  await migrate({ ...env, CLICKHOUSE_URL: clickhouseUrl[names[0]] }, compiled);

  const running = new Map();
  const start = (name) => {
    const kind = name.startsWith('api') ? 'api' : name.startsWith('ingest') ? 'ingest-worker' : name === 'audit' ? 'audit-worker' : 'export-worker';
    const own = { ...env, CLICKHOUSE_URL: clickhouseUrl[name] };
    if (kind === 'api') own.PORT = String(API_PORTS[Number(name.slice(3)) - 1]);
    // The first api seeds the demo organisation (when asked to); a second doing it at once would race it.
    if (name !== 'api1') own.SEED_DEMO = 'false';
    const stack = startProcesses(own, { only: [kind], compiled });
    running.set(name, stack);
    return stack;
  };
  // The first api alone until it answers: it applies what the migrations left and seeds; then the rest.
  start(names[0]);
  await waitForApi(API_PORTS[0]);
  for (const name of names.slice(1)) start(name);
  const proxy = startForwarder(PROXY_PORT, API_PORTS.slice(0, apis), { roundRobin: true });
  for (const port of API_PORTS.slice(1, apis)) await waitForApi(port);
  return {
    names,
    proxyUrl: `http://127.0.0.1:${PROXY_PORT}`,
    apiUrls: API_PORTS.slice(0, apis).map((port) => `http://127.0.0.1:${port}`),
    /** kill -9 a product process by name. */
    async kill(name) {
      await running.get(name)?.stop('SIGKILL');
    },
    async restart(name) {
      start(name);
      if (name.startsWith('api')) {
        await waitForApi(API_PORTS[Number(name.slice(3)) - 1]);
      }
    },
    /** Proxy and apis first (nothing new is accepted), then the workers, then the forwarders. */
    async stop() {
      await proxy.close();
      await Promise.all(names.filter((n) => n.startsWith('api')).map((n) => running.get(n)?.stop()));
      await Promise.all(names.filter((n) => !n.startsWith('api')).map((n) => running.get(n)?.stop()));
      await forwarders.close();
    },
  };
}

/** `--faults`: the fault matrix in its own process (TypeScript, through tsx), on a cluster of its own. */
function runFaults() {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'deploy', 'cluster', 'faults-cli.ts')], { cwd: ROOT, stdio: 'inherit' });
  process.on('SIGINT', () => child.kill('SIGINT'));
  child.once('exit', (code) => process.exit(code ?? 1));
}

async function main() {
  const services = await ensureServices(['DATABASE_URL', 'REDIS_URL']);
  const env = clusterEnvironment(services, {
    extra: { HOST: '127.0.0.1', SUPERUSER_EMAIL: 'admin@bioprocess.local', SUPERUSER_PASSWORD: 'Admin-Bioprocess1!', SEED_DEMO: 'true',
      DEMO_EMAIL: 'scientist@demo.bioprocess.local', DEMO_PASSWORD: 'Demo-Bioprocess1!', DEV_OUTBOX: 'true', PUBLIC_URL: `http://127.0.0.1:${PROXY_PORT}` },
  });
  let cluster = null;
  let product = null;
  let stopping = false;
  const shutdown = async (code) => {
    if (stopping) process.exit(code);
    stopping = true;
    log('stopping: apis, workers, ClickHouse, ZooKeeper');
    await product?.stop();
    if (cluster) await cluster.stop();
    else killSpawnedServices();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(130));
  process.on('SIGTERM', () => void shutdown(143));
  try {
    buildConsoleIfStale(env);
    cluster = await startClusterServices();
    product = await startClusterProduct(env);
    log(`ready: http://127.0.0.1:${PROXY_PORT} (apis ${product.apiUrls.join(', ')}); Ctrl-C stops everything`);
  } catch (error) {
    process.stderr.write(`[cluster] ${error instanceof Error ? error.message : String(error)}\n`);
    await shutdown(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureDependencies();
  if (process.argv.includes('--faults')) runFaults();
  else await main();
}
