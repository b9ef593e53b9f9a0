/**
 * The time-series benchmark, against the real services, with its own databases (dropped
 * at the end). Every figure is printed as one JSON line { name, value, unit, baseline, ratio, target,
 * pass }, measured against a baseline taken in the same run:
 *   - baseline: the same kind of points inserted straight into ClickHouse as a TSV stream (median of 3
 *     runs at the start; the bulk, CSV and backfill figures compare with runs made just around them);
 *   - bulk endpoint end to end (until queryable, ?wait=true) with concurrent clients: >= 0.4 x baseline;
 *     also, for information, many clients posting small batches (the worker writes them together);
 *   - CSV upload end to end, 1M rows x 10 columns: >= 0.6 x baseline;
 *   - peak RSS (VmHWM) of the api and the ingest-worker processes during a 1 GiB CSV upload: < 300 MB;
 *   - p95 of 50 downsampled reads (<= 2,000 points) of one instrument holding 10M points: < 100 ms;
 *   - p95 of a derived parameter (OUR, three inputs) over 14 days of 1 Hz readings, 2,000 values: < 300 ms;
 *   - a time-series export of 10M points (10 instruments) as CSV long in one streamed request:
 *     >= 1M points/s, and the api's peak RSS (fresh process) < 300 MB.
 *   - Analyze (deploy/bench/analysis.ts): p95 of an envelope over 20 unit operations x 14 days of 1 Hz
 *     readings (24M points), < 1 s; p95 of the deviation of one target over 30 parameters against a
 *     saved golden batch of those 20, < 2 s (and, for information, its first request, which computes
 *     the batch's statistics that later requests find kept).
 *   - feeds (deploy/bench/feeds.ts): feeds posting small batches often, interleaved posts sharing minutes,
 *     backfill and a fan-in of 1,000 feeds, each against VictoriaMetrics (the peer) given the same posts.
 *   - archive: the whole-organisation archive (ZIP) of the demo organisation, seeded by a fresh api
 *     (SEED_DEMO) through the ingest path, built by an export-worker: from the request to the
 *     downloaded file, signed in as the demo admin, < 30 s.
 *   - live (deploy/bench/live-step.ts): 20 live viewers (one event stream each) of 50 parameters that a
 *     feed posts every second: post-to-event latency at the viewers, p95 < 2 s, every post at every viewer once.
 *   - connector (deploy/bench/connector-step.ts): 1,000 tags published over MQTT (QoS 1, 50 tags per
 *     JSON message) read by the connector and delivered through the bulk endpoint: sustained points per
 *     second until every point is stored, and the connector's CPU seconds per 1,000 points.
 *   - cluster (not in the default steps; deploy/bench/cluster-step.ts): feeds and backfill on a local
 *     2 x 2 ClickHouse cluster with two apis and two ingest-workers beside this single-node stack, their
 *     ratio, and ZooKeeper transactions per insert.
 * BENCH_SCALE multiplies every size (default 1; for Analyze, the days; not the demo organisation);
 * BENCH_STEPS picks steps (default bulk,feeds,csv,read,derived,memory,export,analysis,live,archive,connector);
 * BENCH_PROFILE=<dir> writes V8 CPU profiles of the api and the ingest-worker there (open them in
 * Chrome DevTools) to see what limits a figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import JSZip from 'jszip';
import { apiEnvSchema, baseEnvSchema, parseEnv } from '@bioprocess/shared/server/config';
import { exportJobStatusSchema, isExportJobFinished, type ExportJobStatus } from '@bioprocess/shared/exports';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createPool, type Pool } from '@bioprocess/shared/server/postgres';
import { createClickHouse, createClickHouseAdmin } from '@bioprocess/shared/server/clickhouse';
import { INSTRUMENT_TYPES } from '@bioprocess/shared/enums';
import { migrateAll } from '../../api/src/db/migrate.ts';
import { DEMO_ORGANISATION_NAME, demoRuns } from '../../api/src/demo/demo-organisation.ts';
import { DATASETS_DIR } from '../../api/src/demo/seed.ts';
import type { ArchiveManifest } from '../../api/src/exports/archive.ts';
import { recomputeRollups } from '@bioprocess/ingest-worker';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import { rollupsStored, seedPlant, waitForMerges, type BenchPlant } from './fixtures.ts';
import { benchDerived } from './derived-step.ts';
import { benchFeeds } from './feeds.ts';
import { benchLive } from './live-step.ts';
import { benchCluster } from './cluster-step.ts';
import { benchConnector } from './connector-step.ts';
import { startVictoriaMetrics } from './peer.ts';
import { seedAnalysisPlant, timedPosts } from './analysis.ts';
import { apiProcessEnv } from '../local/allocator.mjs';
import { nodeArguments } from '../local/stack.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCALE = Number(process.env.BENCH_SCALE ?? '1');
if (!(SCALE > 0)) throw new Error('BENCH_SCALE must be a positive number');
const scaled = (value: number) => Math.max(1, Math.round(value * SCALE));

const BULK_POINTS = scaled(5_000_000);
/** Large posts (the target's workload) and small ones (feeds posting every few seconds). */
const BULK_LARGE: BulkShape = { points: BULK_POINTS, clients: 8, pointsPerPost: 50_000, instruments: 10, firstInstrument: 0 };
const BULK_SMALL: BulkShape = { points: scaled(500_000), clients: 32, pointsPerPost: 500, instruments: 2, firstInstrument: 30 };
const CSV_ROWS = scaled(1_000_000);
const CSV_COLUMNS = 10;
const BIG_CSV_BYTES = scaled(1024 ** 3);
const READ_POINTS = scaled(10_000_000);
const READ_REQUESTS = 50;
const EXPORT_POINTS = scaled(10_000_000);
const EXPORT_INSTRUMENTS = 10;
/** The echoed bulk run's instruments: after the export's, so no other step's data shares their keys. */
const ECHOED_FIRST_INSTRUMENT = 32 + EXPORT_INSTRUMENTS;
/** The instrument of the bulk step's untimed first post. */
const WARM_UP_INSTRUMENT = ECHOED_FIRST_INSTRUMENT + 10;
const ANALYSIS_REFERENCES = 20;
const ANALYSIS_DAYS = 14 * SCALE;
const ANALYSIS_REQUESTS = 20;
const PORT = Number(process.env.BENCH_PORT ?? 8390);
const STEPS = new Set((process.env.BENCH_STEPS ?? 'bulk,feeds,csv,read,derived,memory,export,analysis,live,archive,connector').split(',').map((step) => step.trim()));
const T0 = Date.UTC(2024, 0, 1);

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

interface Figure { name: string; value: number; unit: string; baseline: number | null; ratio: number | null; target: string; pass: boolean }
const figures: Figure[] = [];
function report(figure: Figure): void {
  figures.push(figure);
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

// --- environment and processes ---------------------------------------------------------------------

const id = randomBytes(4).toString('hex');
const databaseUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
databaseUrl.pathname = `/bp_bench_${id}`;
const workDir = mkdtempSync(path.join(os.tmpdir(), 'bp-bench-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: 'production',
  DATABASE_URL: databaseUrl.toString(),
  CLICKHOUSE_DATABASE: `bp_bench_${id}`,
  QUEUE_PREFIX: `bp-bench-${id}`,
  UPLOAD_DIR: path.join(workDir, 'uploads'),
  EXPORT_DIR: path.join(workDir, 'exports'),
  PORT: String(PORT),
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  UPLOAD_RATE_LIMIT_PER_MINUTE: '1000',
  CONSOLE_DIST: path.join(workDir, 'no-console'),
  WORKER_CONCURRENCY: '2',
  // The export step streams more than the default limit of one download in a single request.
  EXPORT_STREAM_MAX_POINTS: String(2 * EXPORT_POINTS),
};
const config = parseEnv(baseEnvSchema, env);
/** The demo admin's sign-in, as the api seeds it (DEMO_EMAIL, DEMO_PASSWORD: the environment's, else the defaults). */
const demoConfig = parseEnv(apiEnvSchema, env);
const base = `http://127.0.0.1:${PORT}`;

interface Stack { api: ChildProcess; worker: ChildProcess; exporter: ChildProcess | null }
/** seedDemo: the api seeds the demo organisation when it starts; exportWorker: an export-worker runs too. */
function startStack(options: { seedDemo?: boolean; exportWorker?: boolean } = {}): Stack {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_PROFILE)] : [];
  const start = (entry: string, processEnv: NodeJS.ProcessEnv) =>
    spawn(process.execPath, [...profile, ...nodeArguments(entry, true)], { cwd: ROOT, env: processEnv, stdio: ['ignore', 2, 'inherit'] });
  // Their log lines (warnings and errors at the bench's level) go to stderr, beside the bench's own.
  return {
    api: start('api/src/main.ts', apiProcessEnv(options.seedDemo ? { ...env, SEED_DEMO: 'true' } : env)),
    worker: start('ingest-worker/src/main.ts', env),
    exporter: options.exportWorker ? start('api/src/exports/worker-main.ts', env) : null,
  };
}
async function stopStack(stack: Stack): Promise<void> {
  const children = [stack.api, stack.worker, ...(stack.exporter ? [stack.exporter] : [])];
  await Promise.all(children.map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
  })));
}
async function waitHealthy(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/api/v1/health`)).ok) return;
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the api did not become healthy');
}
/** CPU seconds (user + system, all threads) of a process so far. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
}
function pidsOf(name: string): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith(name);
    } catch {
      return false;
    }
  }).map(Number);
}
/** Where the CPU went during a step: seconds per process group, logged to stderr (what limits a figure). */
function cpuMeter(stack: Stack, more: Record<string, () => number[]> = {}): () => string {
  const groups: Record<string, () => number[]> = {
    api: () => [stack.api.pid!], worker: () => [stack.worker.pid!],
    ...(stack.exporter ? { 'export-worker': () => [stack.exporter!.pid!] } : {}), clickhouse: () => pidsOf('clickhouse'),
    postgres: () => pidsOf('postgres'), redis: () => pidsOf('redis'), bench: () => [process.pid], ...more,
  };
  const sample = (): Map<number, number> => {
    const seconds = new Map<number, number>();
    for (const pids of Object.values(groups)) {
      for (const pid of pids()) {
        try {
          seconds.set(pid, cpuSecondsOf(pid));
        } catch { /* exited */ }
      }
    }
    return seconds;
  };
  const before = sample();
  return () => {
    const after = sample();
    // A process started during the step counts from zero; one that exited is left out.
    const used = (pid: number) => (after.get(pid) ?? before.get(pid) ?? 0) - (before.get(pid) ?? 0);
    return Object.entries(groups).map(([group, pids]) => {
      const total = [...new Set([...pids(), ...before.keys()].filter((pid) => pids().includes(pid)))].reduce((sum, pid) => sum + used(pid), 0);
      return `${group} ${total.toFixed(1)} s`;
    }).join(', ');
  };
}

function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

// --- workloads -------------------------------------------------------------------------------------

/** Baseline runs: their median is the reference (one run moves by a third on a shared machine). */
const BASELINE_RUNS = 3;

/** The baseline's points as TSV chunks, generated before the clock starts: the baseline is ClickHouse's own insert speed. */
function baselineTsv(): Buffer[] {
  const organization = 999_999_000;
  const chunks: Buffer[] = [];
  const batch = 100_000;
  for (let first = 0; first < BULK_POINTS; first += batch) {
    const lines: string[] = [];
    for (let index = first; index < Math.min(first + batch, BULK_POINTS); index += 1) {
      // Every column of a stored reading, as the worker writes them: no microseconds, no quality code, not historical.
      lines.push(`${organization}\t${1 + (index % 10)}\t${T0 + index * 1000}\t${index * 0.5}\t${pointVersion(1, index)}\t0\t0\t\\N\t0\n`);
    }
    chunks.push(Buffer.from(lines.join('')));
  }
  return chunks;
}

/** One baseline run, points/s: the chunks into a table of its own, as empty as any other run's. */
async function baselineRun(clickhouse: ReturnType<typeof createClickHouse>, chunks: Buffer[], run: number): Promise<number> {
  const table = `baseline_points_${run}`;
  await clickhouse.command({ query: `CREATE TABLE ${table} AS points` });
  const started = performance.now();
  await clickhouse.insert({ table, values: Readable.from(chunks, { objectMode: false }), format: 'TabSeparated' });
  const rate = BULK_POINTS / ((performance.now() - started) / 1000);
  await clickhouse.command({ query: `DROP TABLE ${table}` });
  await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
  return rate;
}

/** One baseline run now, its TSV made for it rather than held (a quarter of a gigabyte) between runs. */
const baselineNow = (clickhouse: ReturnType<typeof createClickHouse>) => baselineRun(clickhouse, baselineTsv(), BASELINE_RUNS);

/**
 * A step measured with raw ClickHouse just before and just after it, on a table not still merging the
 * step's parts: its ratio is to their mean. This machine's speed moves by a third within minutes (the
 * run's first baseline once fell from 2.08 M to 1.44 M points/s within its own three runs), and a
 * ratio to a baseline taken minutes earlier measured the machine, not the product.
 */
async function besideBaseline(clickhouse: ReturnType<typeof createClickHouse>, name: string, step: () => Promise<number>): Promise<{ rate: number; baseline: number }> {
  const before = await baselineNow(clickhouse);
  const rate = await step();
  await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
  const after = await baselineNow(clickhouse);
  log(`${name}: raw ClickHouse ${Math.round(before)} points/s before, ${Math.round(after)} after`);
  return { rate, baseline: (before + after) / 2 };
}

async function baselineInsert(clickhouse: ReturnType<typeof createClickHouse>): Promise<number> {
  const chunks = baselineTsv();
  const rates: number[] = [];
  for (let run = 0; run < BASELINE_RUNS; run += 1) rates.push(await baselineRun(clickhouse, chunks, run));
  log(`baseline runs: ${rates.map((rate) => Math.round(rate)).join(', ')} points/s`);
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)]!;
}

interface BulkShape {
  points: number;
  clients: number;
  pointsPerPost: number;
  /** Posts go to instruments firstInstrument .. firstInstrument + instruments - 1 of the plant in turn. */
  instruments: number;
  firstInstrument: number;
  /** Posts ask for an empty answer (`Prefer: return=minimal`), as a feed that does not read the echo does. */
  minimal?: boolean;
}

async function bulkEndToEnd(pool: Pool, plant: BenchPlant, stack: Stack, shape: BulkShape): Promise<number> {
  const batches = Math.ceil(shape.points / shape.pointsPerPost);
  // The bodies are written before the clock starts, as the baseline's TSV is: feeds send ready JSON.
  const bodies: Buffer[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const instrument = plant.instrumentIds[shape.firstInstrument + (batch % shape.instruments)]!;
    const first = batch * shape.pointsPerPost;
    const count = Math.min(shape.pointsPerPost, shape.points - first);
    const parts: string[] = new Array(count);
    for (let index = 0; index < count; index += 1) {
      parts[index] = `{"measured_at":${T0 + (first + index) * 1000},"instrument_id":${instrument},"float_value":${(first + index) * 0.25}}`;
    }
    bodies.push(Buffer.from(`{"data":[${parts.join(',')}]}`));
  }
  let next = 0;
  // node:http with keep-alive: the lightest client, so the clients take as little of the 2 cores as possible.
  const agent = new http.Agent({ keepAlive: true, maxSockets: shape.clients });
  const post = (body: Buffer) => new Promise<number>((resolve, reject) => {
    const request = http.request(`${base}/api/v1/time-series-data/bulk?wait=true`, {
      method: 'POST', agent,
      headers: {
        authorization: `Bearer ${plant.token}`, 'content-type': 'application/json', 'content-length': body.length,
        ...(shape.minimal ? { prefer: 'return=minimal' } : {}),
      },
    }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
  const client = async () => {
    for (;;) {
      const batch = next;
      next += 1;
      if (batch >= batches) return;
      const status = await post(bodies[batch]!);
      if (status !== 200) throw new Error(`bulk post answered ${status}`);
    }
  };
  const started = performance.now();
  const cpu = cpuMeter(stack);
  await Promise.all(Array.from({ length: shape.clients }, client));
  await rollupsStored(pool);
  log(`bulk: CPU time ${cpu()}`);
  agent.destroy();
  return shape.points / ((performance.now() - started) / 1000);
}

async function writeCsv(file: string, target: { rows?: number; bytes?: number }, columns: number): Promise<number> {
  const out = createWriteStream(file);
  out.write(`time,${Array.from({ length: columns }, (_, c) => `probe_${c}`).join(',')}\n`);
  let rows = 0;
  let bytes = 0;
  const done = () => (target.rows !== undefined ? rows >= target.rows : bytes >= target.bytes!);
  while (!done()) {
    let chunk = '';
    for (let line = 0; line < 10_000 && !done(); line += 1) {
      const values: string[] = new Array(columns);
      for (let c = 0; c < columns; c += 1) values[c] = (Math.sin(rows / 1000 + c) * 1000 + c).toFixed(6);
      const text = `${new Date(T0 + rows * 1000).toISOString()},${values.join(',')}\n`;
      chunk += text;
      bytes += text.length;
      rows += 1;
    }
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  return rows;
}

/** Streams a multipart upload (mapping field first, then the file) and waits for the job (?wait=true). */
function uploadCsv(plant: BenchPlant, file: string, instrumentIds: number[]): Promise<{ status: number; body: string }> {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const mapping = { timestamp_column: 'time', columns: instrumentIds.map((instrumentId, c) => ({ column: `probe_${c}`, instrument_id: instrumentId })) };
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\n${JSON.stringify(mapping)}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.csv"\r\nContent-Type: text/csv\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = statSync(file).size;
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}/api/v1/unit-operations/${plant.unitOperationId}/csv-uploads?wait=true`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${plant.token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + size + tail.length,
      },
      timeout: 0,
    }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.write(head);
    const stream = createReadStream(file);
    stream.on('error', reject);
    stream.on('end', () => request.end(tail));
    stream.pipe(request, { end: false });
  });
}

/** EXPORT_POINTS points spread over instruments, one per second each, with their rollups. */
async function seedExportSeries(clickhouse: ReturnType<typeof createClickHouse>, pool: pg.Pool, plant: BenchPlant, instrumentIds: number[]): Promise<number> {
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_version_seq')::text AS v");
  const versionSeq = Number(rows[0]!.v);
  const perInstrument = Math.ceil(EXPORT_POINTS / instrumentIds.length);
  // In slices of a million rows: one statement of ten million can outlast the client's timeout on a busy machine.
  for (let first = 0; first < EXPORT_POINTS; first += 1_000_000) {
    await clickhouse.command({
      query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
        SELECT ${plant.organizationId}, [${instrumentIds.join(',')}][(number % ${instrumentIds.length}) + 1],
               ${T0} + toInt64(intDiv(number, ${instrumentIds.length})) * 1000, sin(number / 3600) * 10 + 37,
               toUInt64('${versionSeq}0000000000') + number + 1, 0
          FROM system.numbers WHERE number >= ${first} LIMIT ${Math.min(1_000_000, EXPORT_POINTS - first)}`,
    });
  }
  const endMs = T0 + (perInstrument - 1) * 1000;
  await recomputeRollups(clickhouse, pool, [{ range: { organizationId: plant.organizationId, instrumentIds, startMs: T0, endMs } }]);
  return endMs;
}

/** One streamed export request: bytes and CSV lines received, read as fast as the client can. */
async function streamedExport(url: string, token: string): Promise<{ status: number; bytes: number; lines: number }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      let bytes = 0;
      let lines = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) lines += 1;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, lines }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

async function seedReadSeries(clickhouse: ReturnType<typeof createClickHouse>, pool: pg.Pool, plant: BenchPlant, instrumentId: number): Promise<void> {
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_version_seq')::text AS v");
  const versionSeq = Number(rows[0]!.v);
  await clickhouse.command({
    query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
      SELECT ${plant.organizationId}, ${instrumentId}, ${T0} + toInt64(number) * 1000, sin(number / 3600) * 10 + 37,
             toUInt64('${versionSeq}0000000000') + number + 1, 0
        FROM system.numbers LIMIT ${READ_POINTS}`,
  });
  await recomputeRollups(clickhouse, pool, [{ range: { organizationId: plant.organizationId, instrumentIds: [instrumentId], startMs: T0, endMs: T0 + (READ_POINTS - 1) * 1000 } }]);
}

async function timedReads(url: string, token: string): Promise<{ p95: number; points: number }> {
  const timings: number[] = [];
  let points = 0;
  for (let request = 0; request < READ_REQUESTS; request += 1) {
    const started = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as unknown[];
    timings.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`read answered ${response.status}`);
    points = Math.max(points, body.length);
  }
  timings.sort((a, b) => a - b);
  return { p95: timings[Math.ceil(timings.length * 0.95) - 1]!, points };
}

/**
 * Waits until the api's start-up seeding of the demo organisation is done: its time series go through the
 * ingest path in the background (bulk posts first, then one CSV upload per public dataset), so it is done
 * once every dataset's upload job exists and none of the organisation's ingest jobs is queued or running.
 */
async function waitForDemoSeed(pool: pg.Pool): Promise<{ organizationId: number; jobs: number; points: number; seconds: number }> {
  const started = performance.now();
  const { rows: [organization] } = await pool.query<{ id: string }>('SELECT id FROM organizations WHERE name = $1', [DEMO_ORGANISATION_NAME]);
  if (!organization) throw new Error(`the api did not seed the demo organisation (${DEMO_ORGANISATION_NAME})`);
  const organizationId = Number(organization.id);
  // The seed skips a dataset whose file is missing, so only those present are waited for.
  const uploads = demoRuns().filter((run) => run.dataset && existsSync(path.join(DATASETS_DIR, run.dataset.file)))
    .reduce((sum, run) => sum + run.unitOperations.length, 0);
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { rows: [jobs] } = await pool.query<{ total: number; csv: number; unfinished: number; failed: number; points: string }>(
      `SELECT count(*)::int AS total, (count(*) FILTER (WHERE kind = 'csv'))::int AS csv,
              (count(*) FILTER (WHERE state IN ('queued', 'running')))::int AS unfinished,
              (count(*) FILTER (WHERE state = 'failed'))::int AS failed,
              COALESCE(sum((progress->>'points_written')::bigint), 0)::text AS points
         FROM ingest_jobs WHERE organization_id = $1`, [organizationId]);
    if (jobs!.failed > 0) throw new Error(`${jobs!.failed} ingest jobs of the demo organisation failed`);
    if (jobs!.csv >= uploads && jobs!.unfinished === 0) {
      return { organizationId, jobs: jobs!.total, points: Number(jobs!.points), seconds: (performance.now() - started) / 1000 };
    }
    if (Date.now() > deadline) throw new Error(`the demo seed did not finish: ${jobs!.csv} of ${uploads} dataset uploads, ${jobs!.unfinished} jobs unfinished`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function signIn(email: string, password: string): Promise<string> {
  const response = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`sign-in as ${email} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

/** The export job's status until it finishes, read every POLL_MS. */
async function pollExportJob(token: string, jobId: string): Promise<ExportJobStatus> {
  const POLL_MS = 200;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const response = await fetch(`${base}/api/v1/export-jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
    if (response.status !== 200) throw new Error(`export job status answered ${response.status}: ${await response.text()}`);
    const status = exportJobStatusSchema.parse(await response.json());
    if (isExportJobFinished(status.state)) return status;
    if (Date.now() > deadline) throw new Error(`the export job is still ${status.state} after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The demo organisation's archive as its admin asks for it: request, wait for the job, download. */
async function archiveOfDemo(token: string): Promise<{ zip: Buffer; status: ExportJobStatus; jobSeconds: number; seconds: number }> {
  const started = performance.now();
  const accepted = await fetch(`${base}/api/v1/exports/organization-archive`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  if (accepted.status !== 202) throw new Error(`the archive request answered ${accepted.status}: ${await accepted.text()}`);
  const status = await pollExportJob(token, exportJobStatusSchema.parse(await accepted.json()).id);
  if (status.state !== 'completed' || !status.download_url) throw new Error(`the archive job ended ${status.state}: ${status.error ?? ''}`);
  const jobSeconds = (performance.now() - started) / 1000;
  const download = await fetch(`${base}${status.download_url}`, { headers: { authorization: `Bearer ${token}` } });
  if (download.status !== 200) throw new Error(`the archive download answered ${download.status}`);
  const zip = Buffer.from(await download.arrayBuffer());
  return { zip, status, jobSeconds, seconds: (performance.now() - started) / 1000 };
}

/** Checks that the bytes are a ZIP holding a manifest.json and every file it lists; answers the manifest. */
async function checkedArchive(zip: Buffer, organizationId: number): Promise<ArchiveManifest> {
  if (zip.length < 4 || zip.readUInt32LE(0) !== 0x04034b50) throw new Error(`the archive (${zip.length} bytes) is not a ZIP`);
  const archive = await JSZip.loadAsync(zip);
  const manifestFile = archive.file('manifest.json');
  if (!manifestFile) throw new Error('the archive holds no manifest.json');
  const manifest = JSON.parse(await manifestFile.async('string')) as ArchiveManifest;
  if (manifest.organization_id !== organizationId) throw new Error(`the manifest is of organisation ${manifest.organization_id}, not ${organizationId}`);
  const missing = manifest.files.filter((file) => !archive.file(file.path)).map((file) => file.path);
  if (missing.length) throw new Error(`the archive lacks files its manifest lists: ${missing.join(', ')}`);
  return manifest;
}

// --- main ------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const logger = createLogger('bench', 'warn');
  log(`scale ${SCALE}: databases bp_bench_${id}`);
  await migrateAll(config, logger);
  const pool = createPool(config.DATABASE_URL, 4);
  // Seeding recomputes the rollups of 10 M points in one statement: on a slow or busy machine that
  // outlasts the services' 30 s, and the bench would stop before measuring anything.
  const clickhouse = createClickHouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE, undefined, 300_000);
  let stack: Stack | null = null;
  try {
    const plant = await seedPlant(pool, WARM_UP_INSTRUMENT + 1);
    // The baseline runs before the api and worker start, so nothing else competes for the 2 cores.
    log(`baseline: ${BULK_POINTS} points as a TSV stream straight into ClickHouse`);
    const baseline = await baselineInsert(clickhouse);
    report({ name: 'baseline_tsv_insert', value: Math.round(baseline), unit: 'points/s', baseline: null, ratio: 1, target: 'reference', pass: true });
    stack = startStack();
    await waitHealthy();
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // the worker finishes starting too

    if (STEPS.has('bulk')) {
      const describe = (shape: BulkShape) => `${shape.points} points, ${shape.clients} clients, ${shape.pointsPerPost} points per post, until queryable${shape.minimal ? ', Prefer: return=minimal' : ''}`;
      // One untimed post first: the api loads its parsing thread on the first large post after a start.
      await bulkEndToEnd(pool, plant, stack, { points: BULK_LARGE.pointsPerPost, clients: 1, pointsPerPost: BULK_LARGE.pointsPerPost, instruments: 1, firstInstrument: WARM_UP_INSTRUMENT });
      log(`bulk endpoint: ${describe({ ...BULK_LARGE, minimal: true })}`);
      const running = stack;
      const bulk = await besideBaseline(clickhouse, 'bulk endpoint', () => bulkEndToEnd(pool, plant, running, { ...BULK_LARGE, minimal: true }));
      report({
        name: 'bulk_endpoint_end_to_end', value: Math.round(bulk.rate), unit: 'points/s', baseline: Math.round(bulk.baseline),
        ratio: round(bulk.rate / bulk.baseline), target: '>= 0.4 x baseline', pass: bulk.rate / bulk.baseline >= 0.4,
      });
      // The same posts answered with the accepted readings (the default answer), for information.
      log(`bulk endpoint, readings echoed: ${describe(BULK_LARGE)}`);
      const echoed = await bulkEndToEnd(pool, plant, stack, { ...BULK_LARGE, firstInstrument: ECHOED_FIRST_INSTRUMENT });
      report({ name: 'bulk_endpoint_readings_echoed', value: Math.round(echoed), unit: 'points/s', baseline: Math.round(baseline), ratio: round(echoed / baseline), target: 'information', pass: true });
      log(`bulk endpoint, small posts: ${describe(BULK_SMALL)}`);
      const small = await bulkEndToEnd(pool, plant, stack, BULK_SMALL);
      report({ name: 'bulk_endpoint_small_posts', value: Math.round(small), unit: 'points/s', baseline: Math.round(baseline), ratio: round(small / baseline), target: 'information', pass: true });
    }
    if (STEPS.has('feeds')) {
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
      const peer = await startVictoriaMetrics(path.join(workDir, 'victoria-metrics'), log);
      try {
        const running = stack;
        await benchFeeds({
          base, pool, clickhouse, peer, scale: SCALE, baseline, log, report,
          baselineNow: () => baselineNow(clickhouse),
          cpuMeter: () => cpuMeter(running, { peer: () => [peer.pid] }),
        });
      } finally {
        await peer.stop();
      }
    }
    if (STEPS.has('csv')) {
      const csvFile = path.join(workDir, 'upload.csv');
      await writeCsv(csvFile, { rows: CSV_ROWS }, CSV_COLUMNS);
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE); // as for the baseline, a table that is not still merging the last step's parts
      log(`CSV upload: ${CSV_ROWS} rows x ${CSV_COLUMNS} columns (${Math.round(statSync(csvFile).size / 1e6)} MB), until queryable`);
      const running = stack;
      const csv = await besideBaseline(clickhouse, 'CSV upload', async () => {
        const started = performance.now();
        const cpu = cpuMeter(running);
        const upload = await uploadCsv(plant, csvFile, plant.instrumentIds.slice(10, 20));
        log(`CSV upload: CPU time ${cpu()}`);
        if (upload.status !== 200) throw new Error(`CSV upload answered ${upload.status}: ${upload.body}`);
        return (CSV_ROWS * CSV_COLUMNS) / ((performance.now() - started) / 1000);
      });
      report({
        name: 'csv_upload_end_to_end', value: Math.round(csv.rate), unit: 'points/s', baseline: Math.round(csv.baseline),
        ratio: round(csv.rate / csv.baseline), target: '>= 0.6 x baseline', pass: csv.rate / csv.baseline >= 0.6,
      });
      rmSync(csvFile, { force: true });
    }
    if (STEPS.has('read')) {
      const readInstrument = plant.instrumentIds[31]!;
      log(`downsampled reads: ${READ_POINTS} stored points of one instrument, ${READ_REQUESTS} requests`);
      await seedReadSeries(clickhouse, pool, plant, readInstrument);
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
      const rawBaseline = await timedReads(
        `${base}/api/v1/time-series-data?instrument_id=${readInstrument}&start_time=${T0}&end_time=${T0 + 1_999_000}&limit=2000`, plant.token);
      const downsampled = await timedReads(`${base}/api/v1/time-series-data?instrument_id=${readInstrument}&limit=2000`, plant.token);
      if (downsampled.points > 2000) throw new Error(`the downsampled read returned ${downsampled.points} points`);
      report({ name: 'downsampled_read_p95_10m_points', value: round(downsampled.p95, 1), unit: 'ms', baseline: round(rawBaseline.p95, 1), ratio: round(downsampled.p95 / rawBaseline.p95), target: '< 100 ms', pass: downsampled.p95 < 100 });
    }
    if (STEPS.has('derived')) {
      // After the read step's 10 M points: its own 14 days start where nothing else is stored.
      const derived = await benchDerived({ pool, clickhouse, base, plant, scale: SCALE, startMs: Date.UTC(2023, 0, 1), log });
      log(`derived: OUR over 14 days of three 1 Hz inputs, ${derived.points} values`);
      report({ name: 'derived_series_p95_14d_three_inputs', value: round(derived.p95, 1), unit: 'ms', baseline: round(derived.baselineP95, 1), ratio: round(derived.p95 / derived.baselineP95), target: '< 300 ms', pass: derived.p95 < 300 });
    }
    if (STEPS.has('analysis')) {
      log(`analysis: ${ANALYSIS_REFERENCES} references + 1 target x ${round(ANALYSIS_DAYS, 2)} days, 30 parameters`);
      const analysis = await seedAnalysisPlant(pool, clickhouse, { references: ANALYSIS_REFERENCES, days: ANALYSIS_DAYS }, T0 + 400 * 86_400_000, log);
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
      const envelope = await timedPosts(`${base}/api/v1/analysis/envelope`, analysis.token,
        { reference_unit_operation_ids: analysis.referenceIds, parameter: INSTRUMENT_TYPES[0] }, ANALYSIS_REQUESTS);
      const envelopePoints = (envelope.last as { points: unknown[] }).points.length;
      log(`analysis: envelope of ${envelopePoints} grid times`);
      report({ name: 'envelope_p95_20_runs_14_days_1hz', value: round(envelope.p95, 1), unit: 'ms', baseline: null, ratio: null, target: '< 1000 ms', pass: envelope.p95 < 1000 });
      const batch = await timedPosts(`${base}/api/v1/golden-batches`, analysis.token, {
        name: 'Bench golden batch', unit_operation_type: 'fermentation', reference_unit_operation_ids: analysis.referenceIds, parameters: [...INSTRUMENT_TYPES],
      }, 1);
      const deviationBody = { golden_batch_id: (batch.last as { id: number }).id, target_unit_operation_ids: [analysis.targetId] };
      // The first request computes the batch's envelope statistics, which later ones find kept (envelope-cache.ts).
      const first = await timedPosts(`${base}/api/v1/analysis/deviation`, analysis.token, deviationBody, 1);
      report({ name: 'deviation_first_request_30_parameters', value: round(first.p95, 1), unit: 'ms', baseline: null, ratio: null, target: 'information', pass: true });
      const deviation = await timedPosts(`${base}/api/v1/analysis/deviation`, analysis.token, deviationBody, ANALYSIS_REQUESTS);
      const ranked = (deviation.last as { ranking: unknown[] }).ranking.length;
      if (ranked !== INSTRUMENT_TYPES.length) throw new Error(`the deviation ranked ${ranked} parameters`);
      report({ name: 'deviation_p95_30_parameters', value: round(deviation.p95, 1), unit: 'ms', baseline: null, ratio: null, target: '< 2000 ms', pass: deviation.p95 < 2000 });
    }
    if (STEPS.has('memory')) {
      // Fresh processes, so the peak resident set reflects this upload alone.
      await stopStack(stack);
      stack = startStack();
      await waitHealthy();
      const idleApi = memoryOf(stack.api.pid!);
      const idleWorker = memoryOf(stack.worker.pid!);
      const bigFile = path.join(workDir, 'big.csv');
      const bigRows = await writeCsv(bigFile, { bytes: BIG_CSV_BYTES }, CSV_COLUMNS);
      log(`peak memory: ${Math.round(statSync(bigFile).size / 2 ** 20)} MiB CSV (${bigRows} rows x ${CSV_COLUMNS} columns)`);
      const big = await uploadCsv(plant, bigFile, plant.instrumentIds.slice(20, 30));
      if (big.status !== 200) throw new Error(`large CSV upload answered ${big.status}: ${big.body}`);
      const peakApi = memoryOf(stack.api.pid!).peakMb;
      const peakWorker = memoryOf(stack.worker.pid!).peakMb;
      rmSync(bigFile, { force: true });
      report({ name: 'peak_rss_api_1gib_csv', value: Math.round(peakApi), unit: 'MB', baseline: Math.round(idleApi.rssMb), ratio: round(peakApi / idleApi.rssMb), target: '< 300 MB', pass: peakApi < 300 });
      report({ name: 'peak_rss_ingest_worker_1gib_csv', value: Math.round(peakWorker), unit: 'MB', baseline: Math.round(idleWorker.rssMb), ratio: round(peakWorker / idleWorker.rssMb), target: '< 300 MB', pass: peakWorker < 300 });
    }
    if (STEPS.has('export')) {
      const instruments = plant.instrumentIds.slice(32, 32 + EXPORT_INSTRUMENTS);
      log(`export: ${EXPORT_POINTS} points of ${instruments.length} instruments as CSV long in one streamed request`);
      const endMs = await seedExportSeries(clickhouse, pool, plant, instruments);
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
      // A fresh api, so its peak resident set is this export's.
      await stopStack(stack);
      stack = startStack();
      await waitHealthy();
      const idleApi = memoryOf(stack.api.pid!);
      const cpu = cpuMeter(stack);
      const started = performance.now();
      const result = await streamedExport(
        `${base}/api/v1/exports/time-series?instrument_ids=${instruments.join(',')}&start_time=${T0}&end_time=${endMs}&format=csv-long`, plant.token);
      const seconds = (performance.now() - started) / 1000;
      log(`export: ${result.lines - 1} rows, ${Math.round(result.bytes / 2 ** 20)} MiB in ${seconds.toFixed(1)} s; CPU time ${cpu()}`);
      if (result.status !== 200) throw new Error(`export answered ${result.status}`);
      if (result.lines - 1 !== EXPORT_POINTS) throw new Error(`export held ${result.lines - 1} rows, not ${EXPORT_POINTS}`);
      const rate = EXPORT_POINTS / seconds;
      const peakApi = memoryOf(stack.api.pid!).peakMb;
      report({ name: 'export_csv_long_10m_points', value: Math.round(rate), unit: 'points/s', baseline: null, ratio: null, target: '>= 1000000 points/s', pass: rate >= 1_000_000 });
      report({ name: 'peak_rss_api_export_10m_points', value: Math.round(peakApi), unit: 'MB', baseline: Math.round(idleApi.rssMb), ratio: round(peakApi / idleApi.rssMb), target: '< 300 MB', pass: peakApi < 300 });
    }
    if (STEPS.has('cluster')) {
      // Beside the single-node stack running now: the same posts to a local 2 x 2 cluster (docs/scale.md).
      await benchCluster({ base, pool, scale: SCALE, dataDir: path.join(ROOT, '.data', 'cluster-bench'), log, report });
    }
    if (STEPS.has('live')) {
      const live = await benchLive({ base, plant, log, firstMs: Date.UTC(2030, 0, 1) });
      log(`live: ${live.samples} post-to-event latencies, p50 ${live.p50.toFixed(0)} ms, max ${live.max.toFixed(0)} ms; viewers missing or doubling a post: ${live.mismatched}`);
      report({
        name: 'live_post_to_event_p95_20_viewers_50_parameters', value: round(live.p95, 1), unit: 'ms', baseline: null, ratio: null,
        target: '< 2000 ms, every post at every viewer once', pass: live.p95 < 2000 && live.mismatched === 0,
      });
    }
    if (STEPS.has('connector')) {
      const connector = await benchConnector({
        base, pool, clickhouse, plant, env, workDir, root: ROOT, nodeArguments, log, seconds: Number(process.env.BENCH_CONNECTOR_SECONDS ?? scaled(120)),
      });
      report({ name: 'connector_mqtt_sustained_1000_tags', value: Math.round(connector.pointsPerSecond), unit: 'points/s', baseline: null, ratio: null, target: '>= 1000 points/s (1,000 tags at 1 Hz)', pass: connector.pointsPerSecond >= 1000 });
      report({ name: 'connector_cpu_per_1000_points', value: round(connector.cpuSecondsPer1000Points * 1000, 1), unit: 'ms', baseline: null, ratio: null, target: 'information', pass: true });
    }
    if (STEPS.has('archive')) {
      // A fresh api seeds the demo organisation (through the ingest path, as `npm start` does), beside an export-worker.
      await stopStack(stack);
      stack = startStack({ seedDemo: true, exportWorker: true });
      await waitHealthy();
      const seeded = await waitForDemoSeed(pool);
      log(`archive: demo organisation ${seeded.organizationId} seeded in ${seeded.seconds.toFixed(1)} s after the api listened: ${seeded.jobs} ingest jobs, ${seeded.points} points`);
      await waitForMerges(clickhouse, config.CLICKHOUSE_DATABASE);
      const token = await signIn(demoConfig.DEMO_EMAIL, demoConfig.DEMO_PASSWORD);
      const cpu = cpuMeter(stack);
      const archive = await archiveOfDemo(token);
      const used = cpu();
      const manifest = await checkedArchive(archive.zip, seeded.organizationId);
      const points = manifest.files.filter((file) => file.path.startsWith('time-series/')).reduce((sum, file) => sum + file.rows, 0);
      log(`archive: ${(archive.zip.length / 2 ** 20).toFixed(1)} MiB ZIP, ${manifest.files.length} files + manifest.json (${points} readings), `
        + `job ready in ${archive.jobSeconds.toFixed(1)} s, downloaded at ${archive.seconds.toFixed(1)} s; CPU time ${used}`);
      report({ name: 'archive_demo_organization_seconds', value: round(archive.seconds, 2), unit: 's', baseline: null, ratio: null, target: '< 30 s', pass: archive.seconds < 30 });
    }
  } finally {
    if (stack) await stopStack(stack);
    await pool.end();
    await clickhouse.close();
    const admin = new pg.Client({ connectionString: Object.assign(new URL(config.DATABASE_URL), { pathname: '/postgres' }).toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "bp_bench_${id}" WITH (FORCE)`).finally(() => admin.end());
    const chAdmin = createClickHouseAdmin(config.CLICKHOUSE_URL);
    await chAdmin.command({ query: `DROP DATABASE IF EXISTS bp_bench_${id}` }).finally(() => chAdmin.close());
    rmSync(workDir, { recursive: true, force: true });
  }
  const failed = figures.filter((figure) => !figure.pass).map((figure) => figure.name);
  log(failed.length ? `targets missed: ${failed.join(', ')}` : 'every target met');
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
