/**
 * Makes PostgreSQL, Redis and ClickHouse reachable for `npm start` and `npm test` (one code path).
 * Order for each service: the URL given in the environment; the local default when it answers;
 * `docker compose` when a Docker engine answers; on Debian as root, apt-get install and start with
 * data under .data/; otherwise stop with a message saying what to install.
 * Plain Node with no dependencies: it runs before `npm install`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdirSync, chownSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DATA_DIR = path.join(ROOT, '.data');

const DEFAULTS = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bioprocess',
  REDIS_URL: 'redis://127.0.0.1:6379',
  CLICKHOUSE_URL: 'http://127.0.0.1:8123',
};

const log = (message) => process.stdout.write(`[services] ${message}\n`);

export function tcpReachable(host, port, timeoutMs = 1_000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function clickHouseAnswers(url) {
  try {
    // /ping needs no credentials, and fetch refuses a URL that carries them.
    const ping = new URL('/ping', url);
    ping.username = '';
    ping.password = '';
    const response = await fetch(ping, { signal: AbortSignal.timeout(1_500) });
    return response.ok;
  } catch {
    return false;
  }
}

function hostPort(url, defaultPort) {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}

async function answers(name, url) {
  if (name === 'CLICKHOUSE_URL') return clickHouseAnswers(url);
  const { host, port } = hostPort(url, name === 'DATABASE_URL' ? 5432 : 6379);
  return tcpReachable(host, port);
}

async function waitFor(name, url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answers(name, url)) return true;
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  return result.status === 0;
}

function commandExists(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

let dockerAnswered;
function dockerAnswers() {
  dockerAnswered ??= commandExists('docker') && spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 5_000 }).status === 0;
  return dockerAnswered;
}

const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');

/** Services of this project's docker-compose.yml that are running (started by an earlier run). */
function runningComposeServices() {
  if (!dockerAnswers()) return [];
  const result = spawnSync('docker', ['compose', '-f', COMPOSE_FILE, 'ps', '--status', 'running', '--services'], {
    encoding: 'utf8', timeout: 15_000,
  });
  return result.status === 0 ? result.stdout.split('\n').map((line) => line.trim()).filter(Boolean) : [];
}

function isDebianRoot() {
  return existsSync('/etc/debian_version') && typeof process.getuid === 'function' && process.getuid() === 0;
}

let aptUpdated = false;
export function aptInstall(packages) {
  if (!aptUpdated) {
    log('apt-get update');
    run('apt-get', ['update', '-qq']);
    aptUpdated = true;
  }
  log(`apt-get install ${packages.join(' ')}`);
  return run('apt-get', ['install', '-y', '-qq', ...packages], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Services this process started, each with how to stop it; emptied by stopStartedServices(). */
const started = [];

/**
 * Detached (own process group) so that a Ctrl-C reaches it only through stopStartedServices(),
 * after the api and workers using it have stopped. An early exit is remembered for a clear message.
 * `afterStop` runs once it was told to stop (ClickHouse's volume is then unmounted).
 */
function startDetached(name, command, args, logFile, afterStop = () => undefined) {
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.unref();
  const entry = {
    name, logFile, exited: false,
    stop: () => {
      process.kill(-child.pid, 'SIGTERM');
      afterStop();
    },
  };
  child.once('exit', () => { entry.exited = true; });
  child.once('error', () => { entry.exited = true; });
  started.push(entry);
  return child;
}

/**
 * ClickHouse writes each part as a folder of about twenty files and deletes the folders a merge
 * replaced. On ext4 without a journal (the root filesystem of some virtual machines), creating a file
 * scans past the inodes freed recently, one cache lookup each: measured on such a machine, 20,000
 * files took 1 to 10 s depending on what was deleted before, against 0.5 s on a journaled ext4, and a
 * one-row ClickHouse insert 15-18 ms. Every ClickHouse figure then swung twofold from run to run. So
 * when .data sits on ext4 without a journal and we run as root, ClickHouse keeps its data on a
 * journaled ext4 filesystem in a sparse image file beside it, mounted while the server runs.
 */
const CLICKHOUSE_IMAGE = path.join(DATA_DIR, 'clickhouse.ext4');
const CLICKHOUSE_VOLUME = path.join(DATA_DIR, 'clickhouse-volume');
/** The image's apparent size; it takes on disk only what ClickHouse stores. */
const CLICKHOUSE_IMAGE_BYTES = 64 * 2 ** 30;

const capture = (command, args) => {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
};

/** Whether `dir` lies on ext4 without a journal (a journaled ext4 device shows up in /proc/fs/jbd2). */
function onExt4WithoutJournal(dir) {
  const found = capture('findmnt', ['-n', '-o', 'FSTYPE,SOURCE', '-T', dir]);
  if (!found) return false;
  const [type, source] = found.split(/\s+/);
  if (type !== 'ext4' || !source?.startsWith('/dev/')) return false;
  const device = path.basename(source);
  const journals = existsSync('/proc/fs/jbd2') ? readdirSync('/proc/fs/jbd2') : [];
  return !journals.some((entry) => entry.startsWith(`${device}-`));
}

/**
 * Mounts the journaled image for ClickHouse's data (made on first use) and answers its folder, or null
 * when the plain .data/clickhouse is to be used: a journaled filesystem already, not root, data kept
 * there by an earlier version, or the image cannot be made or mounted (said why).
 */
function journaledClickHouseVolume() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const made = !existsSync(CLICKHOUSE_IMAGE);
  if (made && !onExt4WithoutJournal(DATA_DIR)) return null;
  // An image this run made and could not use is removed: the next run does not try it again.
  const giveUp = (why) => {
    log(`${why}: ClickHouse keeps its data in .data/clickhouse`);
    if (made) rmSync(CLICKHOUSE_IMAGE, { force: true });
    return null;
  };
  if (made) {
    if (existsSync(path.join(DATA_DIR, 'clickhouse', 'metadata'))) {
      return giveUp('.data/clickhouse holds data on ext4 without a journal (slow to create files; delete it to move to a journaled image)');
    }
    log(`making a journaled ext4 image for ClickHouse's data: ${CLICKHOUSE_IMAGE}`);
    const fd = openSync(CLICKHOUSE_IMAGE, 'w');
    try { ftruncateSync(fd, CLICKHOUSE_IMAGE_BYTES); } finally { closeSync(fd); }
    // A new sparse file reads as zeros: its inode tables and journal need no zeroing now or later.
    if (!run('mkfs.ext4', ['-q', '-F', '-L', 'bp-clickhouse', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard', CLICKHOUSE_IMAGE])) {
      return giveUp('mkfs.ext4 failed');
    }
  }
  if (capture('findmnt', ['-n', '-o', 'SOURCE', '--mountpoint', CLICKHOUSE_VOLUME])) return CLICKHOUSE_VOLUME;
  // A loop device still holding the image (a server stopping elsewhere) must not be mounted twice.
  if (capture('losetup', ['-j', CLICKHOUSE_IMAGE])) return giveUp(`${CLICKHOUSE_IMAGE} is attached to a loop device but not mounted`);
  mkdirSync(CLICKHOUSE_VOLUME, { recursive: true });
  // discard: what ClickHouse deletes is given back to the disk, not kept in the image.
  if (!run('mount', ['-o', 'loop,discard,noinit_itable', CLICKHOUSE_IMAGE, CLICKHOUSE_VOLUME])) return giveUp('the image could not be mounted');
  return CLICKHOUSE_VOLUME;
}

/**
 * Unmounts a volume once the server stopping on it has closed its files (at most 30 s; then lazily,
 * when they are closed). Never mounted twice meanwhile: a later start finds it still mounted and uses it.
 */
function unmountWhenFree(volume) {
  spawnSync('sh', ['-c', 'for i in $(seq 300); do umount "$1" 2>/dev/null && exit 0; sleep 0.1; done; umount -l "$1"', 'sh', volume], { stdio: 'ignore' });
}

function startClickHouse() {
  if (!commandExists('clickhouse-server') && !aptInstall(['clickhouse-server', 'clickhouse-client'])) return false;
  const volume = journaledClickHouseVolume();
  const dir = volume ?? path.join(DATA_DIR, 'clickhouse');
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  log(`starting clickhouse-server with data in ${dir}`);
  // Every folder ClickHouse writes to lives under .data, so a clean clone needs nothing outside the
  // project and several clones never share data.
  startDetached('clickhouse', 'clickhouse-server', [
    '--config-file=/etc/clickhouse-server/config.xml', '--',
    `--path=${dir}/`, `--tmp_path=${dir}/tmp/`,
    `--user_files_path=${dir}/user_files/`, `--format_schema_path=${dir}/format_schemas/`,
    `--logger.log=${dir}/clickhouse.log`, `--logger.errorlog=${dir}/clickhouse.err.log`,
    '--listen_host=127.0.0.1', '--http_port=8123', '--tcp_port=9000',
  ], path.join(dir, 'clickhouse.err.log'), () => { if (volume) unmountWhenFree(volume); });
  return true;
}

/**
 * The project's own Redis: append-only persistence (queued jobs survive a restart) and noeviction (a
 * full Redis refuses writes rather than dropping job keys), data under .data/redis.
 */
function startRedis(port = 6379) {
  if (!commandExists('redis-server') && !(isDebianRoot() && aptInstall(['redis-server']))) return false;
  const dir = path.join(DATA_DIR, 'redis');
  mkdirSync(dir, { recursive: true });
  log(`starting redis-server on port ${port} with data in ${dir}`);
  startDetached('redis', 'redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
    '--appendonly', 'yes', '--maxmemory-policy', 'noeviction', '--logfile', path.join(dir, 'redis.log')],
  path.join(dir, 'redis.log'));
  return true;
}

/** Where the project's own Redis listens when the one on the default port is not fit for queues. */
const PROJECT_REDIS_PORT = Number(process.env.PROJECT_REDIS_PORT || 6380);

/** Answers `CONFIG GET <name>` of a Redis without a client library (this runs before npm install); null if it cannot tell. */
function redisConfig(url, name) {
  const { host, port } = hostPort(url, 6379);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (value) => { socket.destroy(); resolve(value); };
    socket.setTimeout(1_500, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write(`*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$${name.length}\r\n${name}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.startsWith('-')) return done(null);
      // *2 $len name $len value
      const match = /^\*2\r\n\$\d+\r\n[^\r]*\r\n\$(\d+)\r\n/.exec(reply);
      if (!match) return reply.startsWith('*0') ? done(null) : undefined;
      const start = match[0].length;
      if (reply.length >= start + Number(match[1])) done(reply.slice(start, start + Number(match[1])));
    });
  });
}

/** A Redis fit for queues keeps its data on disk (append-only) and never evicts keys. */
export async function redisFitness(url) {
  const [appendonly, policy] = await Promise.all([redisConfig(url, 'appendonly'), redisConfig(url, 'maxmemory-policy')]);
  return { fit: appendonly === 'yes' && policy === 'noeviction', appendonly, policy };
}

/**
 * Redis for the queues: the one on the default URL when it is fit; else the project's own on
 * PROJECT_REDIS_PORT (reused when an earlier run left it answering).
 */
async function fitRedisUrl() {
  const fitness = await redisFitness(DEFAULTS.REDIS_URL);
  if (fitness.fit) return DEFAULTS.REDIS_URL;
  const ownUrl = `redis://127.0.0.1:${PROJECT_REDIS_PORT}`;
  log(`the Redis on ${DEFAULTS.REDIS_URL} is not fit for queues (appendonly ${fitness.appendonly ?? 'unknown'}, maxmemory-policy ${fitness.policy ?? 'unknown'}): using the project's own on port ${PROJECT_REDIS_PORT}`);
  if (await answers('REDIS_URL', ownUrl)) {
    if ((await redisFitness(ownUrl)).fit) return ownUrl;
    throw new Error(`Port ${PROJECT_REDIS_PORT} is taken by a Redis without append-only persistence and noeviction. Free it, set PROJECT_REDIS_PORT, or set REDIS_URL.`);
  }
  if (!startRedis(PROJECT_REDIS_PORT)) {
    throw new Error('redis-server is not installed and cannot be installed here: install Redis 6+ or set REDIS_URL to a Redis with appendonly yes and maxmemory-policy noeviction.');
  }
  if (!(await waitForStarted('REDIS_URL', ownUrl, 30_000))) throw new Error(`the project's redis-server on port ${PROJECT_REDIS_PORT} did not come up; see .data/redis/redis.log`);
  return ownUrl;
}

function findPgBin() {
  const result = spawnSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], { encoding: 'utf8' });
  return result.stdout.trim();
}

function startPostgres() {
  let bin = findPgBin();
  if (!bin) {
    if (!aptInstall(['postgresql'])) return false;
    bin = findPgBin();
  }
  const dir = path.join(DATA_DIR, 'postgres');
  const asPostgres = (args) => run('su', ['postgres', '-s', '/bin/sh', '-c', args]);
  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    mkdirSync(dir, { recursive: true });
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
    log(`initialising PostgreSQL in ${dir}`);
    if (!asPostgres(`${bin}/initdb -D '${dir}' --auth=trust -U postgres >/dev/null`)) return false;
  }
  log(`starting PostgreSQL with data in ${dir}`);
  // pg_ctl daemonises the server, so it is stopped through pg_ctl as well.
  const ok = asPostgres(`${bin}/pg_ctl -D '${dir}' -l '${dir}/server.log' -o "-c listen_addresses=127.0.0.1 -p 5432 -k /tmp" start >/dev/null`);
  if (ok) {
    started.push({
      name: 'postgres', logFile: path.join(dir, 'server.log'), exited: false,
      stop: () => asPostgres(`${bin}/pg_ctl -D '${dir}' -m fast stop >/dev/null`),
    });
  }
  return ok;
}

const STARTERS = { DATABASE_URL: startPostgres, REDIS_URL: startRedis, CLICKHOUSE_URL: startClickHouse };
const STARTED_NAME = { DATABASE_URL: 'postgres', REDIS_URL: 'redis', CLICKHOUSE_URL: 'clickhouse' };
const COMPOSE_SERVICE = { DATABASE_URL: 'postgres', REDIS_URL: 'redis', CLICKHOUSE_URL: 'clickhouse' };

/**
 * How the services of docker-compose.yml answer from this host: its published ports and its
 * credentials (the same variables and defaults as the compose file).
 */
function composeUrls() {
  const env = process.env;
  const pgUser = encodeURIComponent(env.POSTGRES_USER || 'bioprocess');
  const pgPassword = encodeURIComponent(env.POSTGRES_PASSWORD || 'bioprocess');
  const chUser = encodeURIComponent(env.CLICKHOUSE_USER || 'bioprocess');
  const chPassword = encodeURIComponent(env.CLICKHOUSE_PASSWORD || 'bioprocess');
  return {
    DATABASE_URL: `postgres://${pgUser}:${pgPassword}@127.0.0.1:${env.POSTGRES_HOST_PORT || 5432}/${env.POSTGRES_DB || 'bioprocess'}`,
    REDIS_URL: `redis://127.0.0.1:${env.REDIS_HOST_PORT || 6379}`,
    CLICKHOUSE_URL: `http://${chUser}:${chPassword}@127.0.0.1:${env.CLICKHOUSE_HOST_PORT || 8123}`,
  };
}

function startedEarlyExit(name) {
  const entry = started.find((service) => service.name === STARTED_NAME[name]);
  return entry && entry.exited ? entry : null;
}

/** Like waitFor, but gives up as soon as a server this process started has exited. */
async function waitForStarted(name, url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answers(name, url)) return true;
    const failed = startedEarlyExit(name);
    if (failed) {
      throw new Error(`${failed.name} exited right after starting; see ${failed.logFile ?? 'its log'}.`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return false;
}
const WHAT_TO_INSTALL = {
  DATABASE_URL: 'PostgreSQL 14+ (or set DATABASE_URL)',
  REDIS_URL: 'Redis 6+ (or set REDIS_URL)',
  CLICKHOUSE_URL: 'ClickHouse (or set CLICKHOUSE_URL)',
};

/**
 * Returns the environment (DATABASE_URL, REDIS_URL, CLICKHOUSE_URL) of reachable services; `names`
 * limits it to some of them (the soak brings its own Redis).
 */
export async function ensureServices(names = Object.keys(DEFAULTS)) {
  const env = {};
  const missing = [];
  // Compose services publish the default ports but need their credentials: recognise them first.
  const fromCompose = names.some((name) => !process.env[name]) ? runningComposeServices() : [];
  for (const name of names) {
    const given = process.env[name];
    if (given) {
      if (!(await waitFor(name, given, 10_000))) {
        throw new Error(`${name} is set but nothing answers at it. Start that service or unset ${name}.`);
      }
      env[name] = given;
    } else if (fromCompose.includes(COMPOSE_SERVICE[name]) && await answers(name, composeUrls()[name])) {
      env[name] = composeUrls()[name];
    } else if (await answers(name, DEFAULTS[name])) {
      env[name] = name === 'REDIS_URL' ? await fitRedisUrl() : DEFAULTS[name];
    } else {
      missing.push(name);
    }
  }
  if (missing.length === 0) return env;

  const urls = { ...DEFAULTS };
  if (dockerAnswers()) {
    // Compose, not testcontainers: docker-compose.yml already defines these images and their settings
    // (noeviction, credentials) for the whole product, its volumes keep `npm start`'s data from run to
    // run where testcontainers' reaper removes its containers at exit, and this file runs before
    // npm install. testcontainers 12 fails to load on Node 20 (its undici needs 22.19); 11.14 would add
    // 173 packages (49 MB) for this one branch.
    const services = missing.map((name) => COMPOSE_SERVICE[name]);
    log(`starting ${services.join(', ')} with docker compose`);
    if (!run('docker', ['compose', '-f', COMPOSE_FILE, 'up', '-d', '--wait', ...services])) {
      throw new Error(`docker compose could not start ${services.join(', ')}; see the messages above.`);
    }
    // Stopped (not removed) like any service this run started; the data stays in the volumes.
    started.push({
      name: services.join(', '), logFile: null, exited: false,
      stop: () => run('docker', ['compose', '-f', COMPOSE_FILE, 'stop', ...services]),
    });
    Object.assign(urls, composeUrls());
  } else if (isDebianRoot()) {
    for (const name of missing) {
      // A package's own init script may have started the service already (then ours cannot bind).
      if (!STARTERS[name]() && !(await answers(name, DEFAULTS[name]))) {
        throw new Error(`${name}: could not install or start it here. Install ${WHAT_TO_INSTALL[name]} and try again.`);
      }
    }
  } else {
    throw new Error(`These services are not reachable: ${missing.map((n) => WHAT_TO_INSTALL[n]).join(', ')}. ` +
      'Install them, start Docker, or run as root on Debian so they can be installed automatically.');
  }
  for (const name of missing) {
    if (!(await waitForStarted(name, urls[name], 90_000))) {
      throw new Error(`${name}: the service did not come up within 90 s. Install ${WHAT_TO_INSTALL[name]} and try again.`);
    }
    env[name] = urls[name];
  }
  return env;
}

/** Stops the services this process started (not those that were already running). */
export function stopStartedServices() {
  for (const service of started.splice(0)) {
    if (service.exited) continue;
    log(`stopping ${service.name}`);
    try { service.stop(); } catch { /* already gone */ }
  }
}

/** ZooKeeper's jar (Debian's `zookeeper` package, 3.8) for the local cluster; installed on demand like ClickHouse. */
export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
export function ensureZooKeeper() {
  if (existsSync(ZOOKEEPER_JAR)) return ZOOKEEPER_JAR;
  if (!isDebianRoot() || !aptInstall(['zookeeper'])) {
    throw new Error('ZooKeeper is missing: install Debian\'s zookeeper package (apt-get install zookeeper).');
  }
  return ZOOKEEPER_JAR;
}

/** Debian's clickhouse-server, installed when missing (for servers started with their own configuration). */
export function ensureClickHouseInstalled() {
  if (commandExists('clickhouse-server')) return;
  if (!isDebianRoot() || !aptInstall(['clickhouse-server', 'clickhouse-client'])) {
    throw new Error('ClickHouse is missing: install Debian\'s clickhouse-server package.');
  }
}

/** Debian's Chromium for the end-to-end tests; never a browser downloaded by a test tool. */
export function ensureChromium() {
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  if (!isDebianRoot() || !aptInstall(['chromium'])) {
    throw new Error('Chromium is missing: install Debian\'s chromium package (apt-get install chromium).');
  }
  return '/usr/bin/chromium';
}

export function writeDataReadme() {
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(path.join(DATA_DIR, 'README'), 'Local service data created by npm start / npm test. Safe to delete when stopped'
    + ' (when clickhouse-volume is still mounted, `umount .data/clickhouse-volume` first).\n');
}
