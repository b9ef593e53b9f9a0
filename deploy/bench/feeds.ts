/**
 * The `feeds` bench step: instrument feeds posting to the bulk endpoint with ?wait=true, against the same
 * points in the same posts sent by the same number of clients to the peer (VictoriaMetrics, peer.ts),
 * counted back through its query API. Every figure is a ratio to the peer (or the ClickHouse baseline)
 * measured in the same run:
 *   - feeds: 200 feeds x 10 instruments, each post 5 s of 1 Hz readings (50 points), 32 clients:
 *     points/s until queryable >= 0.5 x the peer; p95 wait < 500 ms (p50, p99 for information);
 *   - interleaved: 500-point posts spanning 20 instruments (25 s of each), 32 clients: >= 0.5 x the peer;
 *   - backfill: 100 posts of 50,000 points (10 instruments, each post's edge minutes shared with the
 *     next), 8 clients: >= 0.4 x the TSV baseline (the peer for information);
 *   - fan-in: 1,000 feeds each posting one reading per second (1,000 posts/s offered) for a minute
 *     (x BENCH_SCALE): kept up with (every post answered within a second of the schedule's end), p95
 *     wait < 1 s.
 * Feeds, interleaved and backfill run in rounds (BENCH_ROUNDS, default 5), the product's and the peer's
 * alternating; each side's figure is its median round. Each workload and round writes its own time range,
 * so none shares a minute with another. BENCH_FEEDS (a comma list, default all:
 * feeds,interleaved,backfill,fan-in) runs some of them, for profiling one.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { rollupsStored, seedPlant, waitForMerges } from './fixtures.ts';
import { peerCount, type Peer } from './peer.ts';

export interface FeedsFigure { name: string; value: number; unit: string; baseline: number | null; ratio: number | null; target: string; pass: boolean }

export interface FeedsOptions {
  base: string;
  pool: Pool;
  clickhouse: ClickHouseClient;
  peer: Peer;
  scale: number;
  /** The TSV insert straight into ClickHouse, points/s, measured in the same run. */
  baseline: number;
  /**
   * One more such insert, now (points/s): the backfill's ratio compares each round with a baseline run
   * just before it, as this machine's speed drifts within minutes.
   */
  baselineNow: () => Promise<number>;
  log: (message: string) => void;
  report: (figure: FeedsFigure) => void;
  /** Starts a CPU meter over the stack (and the peer); the returned function describes the seconds used. */
  cpuMeter: () => () => string;
}

/** One post, as the product and the peer receive it. */
interface Post {
  product: Buffer;
  peer: Buffer;
  points: number;
}

interface Workload {
  name: string;
  posts: Post[];
  points: number;
  startMs: number;
  endMs: number;
  instrumentIds: number[];
}

/** Rounds of the feeds, interleaved and backfill workloads, alternating between the product and the peer. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '5');
if (!(Number.isInteger(ROUNDS) && ROUNDS > 0)) throw new Error('BENCH_ROUNDS must be a positive integer');
const DAY_MS = 86_400_000;

/** ClickHouse's counters (system.events) that tell where its share of a workload went. */
const CLICKHOUSE_EVENTS = {
  inserts: 'InsertQuery', selects: 'SelectQuery', parts: 'MergeTreeDataWriterBlocks', 'merged rows': 'MergedRows',
  'query user s': 'UserTimeMicroseconds', 'query system s': 'SystemTimeMicroseconds',
} as const;

async function clickhouseEvents(clickhouse: ClickHouseClient): Promise<Map<string, number>> {
  const result = await clickhouse.query({
    query: `SELECT event, value FROM system.events WHERE event IN (${Object.values(CLICKHOUSE_EVENTS).map((event) => `'${event}'`).join(',')})`,
    format: 'JSONCompact',
  });
  return new Map((await result.json<[string, string]>()).data.map(([event, value]) => [event, Number(value)]));
}

/**
 * Starts counting what ClickHouse does (statements, parts written, rows merged, its queries' CPU);
 * the returned function describes it. The counters are server-wide: the bench runs alone.
 */
async function clickhouseMeter(clickhouse: ClickHouseClient): Promise<() => Promise<string>> {
  const before = await clickhouseEvents(clickhouse);
  return async () => {
    const after = await clickhouseEvents(clickhouse);
    return Object.entries(CLICKHOUSE_EVENTS).map(([label, event]) => {
      const delta = (after.get(event) ?? 0) - (before.get(event) ?? 0);
      return `${label} ${event.endsWith('Microseconds') ? (delta / 1e6).toFixed(1) : delta}`;
    }).join(', ');
  };
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
/** The middle value (the mean of the two middle ones for an even count). */
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))] ?? Number.NaN;

/** A reading's value: varies with time and instrument like a process parameter. */
const valueOf = (instrumentId: number, ts: number) => round(37 + Math.sin(ts / 600_000 + instrumentId) * 5, 4);

/** Builds a post from readings [instrumentId, ts] in the order a controller sends them. */
function makePost(step: string, readings: ReadonlyArray<[number, number]>): Post {
  const json: string[] = new Array(readings.length);
  const lines: string[] = new Array(readings.length);
  readings.forEach(([instrumentId, ts], index) => {
    const value = valueOf(instrumentId, ts);
    json[index] = `{"measured_at":${ts},"instrument_id":${instrumentId},"float_value":${value}}`;
    lines[index] = `bp,step=${step},instrument=${instrumentId} value=${value} ${ts}`;
  });
  return { product: Buffer.from(`{"data":[${json.join(',')}]}`), peer: Buffer.from(`${lines.join('\n')}\n`), points: readings.length };
}

/**
 * Feeds of `perFeed` instruments, each post `seconds` of 1 Hz readings of all its instruments (second by
 * second), `windows` consecutive posts per feed; posts ordered window by window across the feeds.
 */
function feedWorkload(name: string, instrumentIds: number[], perFeed: number, seconds: number, windows: number, startMs: number): Workload {
  const feeds = Math.floor(instrumentIds.length / perFeed);
  const posts: Post[] = [];
  for (let window = 0; window < windows; window += 1) {
    for (let feed = 0; feed < feeds; feed += 1) {
      const readings: Array<[number, number]> = [];
      for (let second = 0; second < seconds; second += 1) {
        const ts = startMs + (window * seconds + second) * 1000;
        for (let i = 0; i < perFeed; i += 1) readings.push([instrumentIds[feed * perFeed + i]!, ts]);
      }
      posts.push(makePost(name, readings));
    }
  }
  const used = instrumentIds.slice(0, feeds * perFeed);
  return { name, posts, points: posts.reduce((sum, post) => sum + post.points, 0), startMs, endMs: startMs + (windows * seconds - 1) * 1000, instrumentIds: used };
}

/** Answers of one sender: status and how long the post took (ms). */
type Send = (body: Buffer) => Promise<{ status: number; ms: number }>;

function sender(url: string, headers: Record<string, string>, agent: http.Agent): Send {
  const attempt = (body: Buffer, mayRetry: boolean) => new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const started = performance.now();
    const request = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
      response.on('error', reject);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed while this process was busy (building the next
      // workload) fails on its first write, before any answer: the post goes again, once, on a new one,
      // as Node's documentation advises for reused sockets.
      if (mayRetry && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) attempt(body, false).then(resolve, reject);
      else reject(error);
    });
    request.end(body);
  });
  return (body) => attempt(body, true);
}

interface Run {
  /** Milliseconds from the first post sent until every point was queryable. */
  elapsedMs: number;
  waits: number[];
}

/** `clients` clients each sending the next post as soon as its last was answered. */
async function closedLoop(bodies: Buffer[], clients: number, send: Send, ok: (status: number) => boolean): Promise<{ waits: number[] }> {
  let next = 0;
  const waits: number[] = [];
  const client = async () => {
    for (;;) {
      const index = next;
      next += 1;
      if (index >= bodies.length) return;
      const { status, ms } = await send(bodies[index]!);
      if (!ok(status)) throw new Error(`post answered ${status}`);
      waits.push(ms);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return { waits };
}

/** Polls the peer until it counts `points` (its writes are searchable a moment after they are answered). */
async function peerQueryable(peer: Peer, workload: Workload): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const counted = await peerCount(peer, workload.name, workload.startMs, workload.endMs);
    if (counted === workload.points) return;
    if (counted > workload.points || Date.now() > deadline) throw new Error(`the peer counts ${counted} points of ${workload.name}, not ${workload.points}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Distinct keys the product stores in the workload's range (reads keep one row per key). */
async function productCount(clickhouse: ClickHouseClient, organizationId: number, workload: Workload): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() FROM (SELECT instrument_id, ts FROM points
      WHERE organization_id = ${organizationId} AND instrument_id IN (${workload.instrumentIds.join(',')})
        AND ts >= ${workload.startMs} AND ts <= ${workload.endMs} AND is_deleted = 0 GROUP BY instrument_id, ts)`,
    format: 'JSONCompact',
  });
  return Number((await result.json<[string]>()).data[0]?.[0] ?? 0);
}

export async function benchFeeds(options: FeedsOptions): Promise<void> {
  const { base, pool, clickhouse, peer, scale, baseline, log, report } = options;
  const scaled = (value: number) => Math.max(1, Math.round(value * scale));
  const plant = await seedPlant(pool, 0);
  // 2,000 instruments in one statement (the fixture adds them one by one).
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO instruments (organization_id, equipment_id, name, type)
     SELECT $1, $2, 'Feed probe ' || n, 'temperature' FROM generate_series(1, 2000) AS n RETURNING id`,
    [plant.organizationId, plant.equipmentId]);
  const instrumentIds = rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  // Feeds post with an API key (an editor's), as instrument gateways do, not with a person's session,
  // and ask for an empty answer (Prefer: return=minimal): the peer answers 204 without a body too.
  const apiKey = `bpk_${randomBytes(32).toString('base64url')}`;
  await pool.query(`INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, 'Bench feeds', $2, $3, 'editor')`,
    [plant.organizationId, createHash('sha256').update(apiKey).digest('hex'), apiKey.slice(0, 12)]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2_000 });
  const product = sender(`${base}/api/v1/time-series-data/bulk?wait=true`, { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', prefer: 'return=minimal' }, agent);
  const toPeer = sender(`${peer.base}/write?precision=ms`, { 'content-type': 'text/plain' }, agent);

  /**
   * Sends each round's workload to the product, then to the peer, round after round; answers the runs.
   * Each side first takes the untimed posts of `warmUp` (the same shape, its own time range): the
   * figures are of the steady state, not of the first posts after a start. One round of posts was not
   * enough: in four runs of the feeds workload in a row, the api's CPU time went from 2.1 s to 1.6, 1.3
   * and 1.4 s as V8 optimised the paths of small posts, so the first run measured mostly the api warming
   * up. The rounds alternate because this machine's speed drifts by up to twice within a minute (the
   * api's CPU time for the same posts ranged 1.2-2.6 s): one product run beside one peer run, seconds
   * apart, measured the drift as often as either side.
   */
  const both = async (
    rounds: ReadonlyArray<() => Workload>, clients: number, warmUp: Workload, beforeEachRound?: () => Promise<void>,
  ): Promise<Array<{ product: Run; peer: Run; points: number }>> => {
    const warmUpBodies = (side: 'product' | 'peer') => warmUp.posts.map((post) => post[side]);
    await closedLoop(warmUpBodies('product'), clients, product, (status) => status === 200);
    await closedLoop(warmUpBodies('peer'), clients, toPeer, (status) => status === 204);
    const runs: Array<{ product: Run; peer: Run; points: number }> = [];
    for (const round of rounds) {
      await beforeEachRound?.();
      // Built just before it runs: five backfill rounds at once held 2.5 GB of bodies, and building one
      // takes long enough for idle connections to close.
      const workload = round();
      const bodies = (side: 'product' | 'peer') => workload.posts.map((post) => post[side]);
      await waitForMerges(clickhouse);
      let cpu = options.cpuMeter();
      const clickhouseWork = await clickhouseMeter(clickhouse);
      let started = performance.now();
      const productRun = await closedLoop(bodies('product'), clients, product, (status) => status === 200);
      await rollupsStored(pool);
      const productMs = performance.now() - started;
      log(`${workload.name}: product ${Math.round(workload.points / (productMs / 1000))} points/s until queryable; CPU time ${cpu()}; ClickHouse ${await clickhouseWork()}`);
      const stored = await productCount(clickhouse, plant.organizationId, workload);
      if (stored !== workload.points) throw new Error(`the product stores ${stored} points of ${workload.name}, not ${workload.points}`);
      // ClickHouse merging the parts the product just wrote would take the peer's cores.
      await waitForMerges(clickhouse);
      cpu = options.cpuMeter();
      started = performance.now();
      const peerRun = await closedLoop(bodies('peer'), clients, toPeer, (status) => status === 204);
      const peerWrittenMs = performance.now() - started;
      await peerQueryable(peer, workload);
      const peerMs = performance.now() - started;
      log(`${workload.name}: peer ${Math.round(workload.points / (peerMs / 1000))} points/s, wrote in ${Math.round(peerWrittenMs)} ms, queryable after ${Math.round(peerMs)} ms; CPU time ${cpu()}`);
      runs.push({ product: { elapsedMs: productMs, waits: productRun.waits }, peer: { elapsedMs: peerMs, waits: peerRun.waits }, points: workload.points });
    }
    return runs;
  };

  /**
   * Each side's figure is its median round: not its best, as the peer's time is mostly the wait for its
   * next flush of written rows (about every second), and the best of several rounds was its luckiest
   * (57,000 to 221,000 points/s for the same posts). The waits are those of every round, so a slow round
   * shows in them.
   */
  const reportRates = (name: string, runs: ReadonlyArray<{ product: Run; peer: Run; points: number }>, targetRatio: number, waitTargetMs: number | null) => {
    const rate = median(runs.map((run) => run.points / (run.product.elapsedMs / 1000)));
    const peerRate = median(runs.map((run) => run.points / (run.peer.elapsedMs / 1000)));
    const waits = runs.flatMap((run) => run.product.waits).sort((a, b) => a - b);
    const peerWaits = runs.flatMap((run) => run.peer.waits).sort((a, b) => a - b);
    log(`${name}: product ${Math.round(rate)} points/s, wait p50/p95/p99 ${[0.5, 0.95, 0.99].map((q) => Math.round(quantile(waits, q))).join('/')} ms; `
      + `peer ${Math.round(peerRate)} points/s, write p50/p95/p99 ${[0.5, 0.95, 0.99].map((q) => Math.round(quantile(peerWaits, q))).join('/')} ms (median of ${runs.length} rounds each)`);
    report({ name: `${name}_points_per_s`, value: Math.round(rate), unit: 'points/s', baseline: Math.round(peerRate), ratio: round(rate / peerRate), target: `>= ${targetRatio} x peer`, pass: rate / peerRate >= targetRatio });
    report({ name: `${name}_wait_p50`, value: round(quantile(waits, 0.5), 1), unit: 'ms', baseline: round(quantile(peerWaits, 0.5), 1), ratio: null, target: 'information', pass: true });
    const p95 = quantile(waits, 0.95);
    report({ name: `${name}_wait_p95`, value: round(p95, 1), unit: 'ms', baseline: round(quantile(peerWaits, 0.95), 1), ratio: null,
      target: waitTargetMs === null ? 'information' : `< ${waitTargetMs} ms`, pass: waitTargetMs === null || p95 < waitTargetMs });
    report({ name: `${name}_wait_p99`, value: round(quantile(waits, 0.99), 1), unit: 'ms', baseline: round(quantile(peerWaits, 0.99), 1), ratio: null, target: 'information', pass: true });
    return rate;
  };

  /**
   * Builders of a workload's rounds (BENCH_ROUNDS, default 5): the same posts, each round `spacingDays`
   * later in time and under its own name, so that the peer indexes new series each round as in the first.
   */
  const rounds = (name: string, make: (name: string, startMs: number) => Workload, startMs: number, spacingDays: number) =>
    Array.from({ length: ROUNDS }, (_, index) => () => make(index === 0 ? name : `${name}-${index + 1}`, startMs + index * spacingDays * DAY_MS));

  const chosen = new Set((process.env.BENCH_FEEDS ?? 'feeds,interleaved,backfill,fan-in').split(',').map((name) => name.trim()));

  // Feeds: 200 feeds of 10 instruments, 5 s of 1 Hz readings per post.
  if (chosen.has('feeds')) {
    const feeds = rounds('feeds', (name, startMs) => feedWorkload(name, instrumentIds.slice(0, 2_000), 10, 5, scaled(12), startMs), Date.UTC(2025, 0, 1), 1);
    log(`feeds: ${200 * scaled(12)} posts of 50 points (200 feeds x 10 instruments, 5 s each), 32 clients, ?wait=true, ${ROUNDS} rounds`);
    // As many posts again to warm up.
    reportRates('feeds', await both(feeds, 32, feedWorkload('warm-up', instrumentIds.slice(0, 2_000), 10, 5, scaled(12), Date.UTC(2024, 6, 1))), 0.5, 500);
  }

  // Interleaved: 16 feeds of 20 instruments, 25 s per post (500 points); a feed's next post shares its minute.
  if (chosen.has('interleaved')) {
    const interleaved = rounds('interleaved', (name, startMs) => feedWorkload(name, instrumentIds.slice(0, 320), 20, 25, scaled(25), startMs), Date.UTC(2025, 1, 1), 1);
    log(`interleaved: ${16 * scaled(25)} posts of 500 points (16 feeds x 20 instruments, 25 s each), 32 clients, ?wait=true, ${ROUNDS} rounds`);
    reportRates('interleaved', await both(interleaved, 32, feedWorkload('warm-up', instrumentIds.slice(0, 320), 20, 25, scaled(25), Date.UTC(2024, 7, 1))), 0.5, 500);
  }

  // Backfill: 50,000-point posts of 10 instruments (5,000 s of each), 8 clients, 5 M points as the bulk
  // step's (with 20 posts, a third of the time went to the first posts' start and the last ones' end).
  if (chosen.has('backfill')) {
    // A round spans 500,000 s (almost six days): the next starts a week later.
    const backfill = rounds('backfill', (name, startMs) => feedWorkload(name, instrumentIds.slice(0, 10), 10, 5_000, scaled(100), startMs), Date.UTC(2025, 2, 1), 7 * Math.ceil(scale));
    log(`backfill: ${scaled(100)} posts of 50,000 points, 8 clients, ?wait=true, ${ROUNDS} rounds`);
    // One round of posts to warm up: each is a thousand feeds' posts' worth of work.
    // Raw ClickHouse is measured again before each round, and the ratio is of the medians: in one run
    // the step's first baseline ran at 2.08 M points/s and its third, a minute later, at 1.44 M.
    const baselines: number[] = [];
    const backfillRuns = await both(backfill, 8, feedWorkload('warm-up', instrumentIds.slice(0, 10), 10, 5_000, 8, Date.UTC(2024, 8, 1)), async () => {
      baselines.push(await options.baselineNow());
    });
    const backfillRate = reportRates('backfill', backfillRuns, 0, null);
    const backfillBaseline = median(baselines);
    log(`backfill: raw ClickHouse before each round ${baselines.map((rate) => Math.round(rate)).join(', ')} points/s (the run's first baseline: ${Math.round(baseline)})`);
    report({
      name: 'backfill_vs_baseline', value: Math.round(backfillRate), unit: 'points/s', baseline: Math.round(backfillBaseline),
      ratio: round(backfillRate / backfillBaseline), target: '>= 0.4 x baseline', pass: backfillRate / backfillBaseline >= 0.4,
    });
  }

  // Fan-in: 1,000 feeds, one reading per second each, spread over the second.
  if (chosen.has('fan-in')) await fanIn({ ...options, plantOrganization: plant.organizationId, instrumentIds: instrumentIds.slice(0, 1_000), seconds: scaled(60), product, toPeer });
  agent.destroy();
}

/** How long fan-in waits for answers after its schedule ended before it counts the rest as unanswered. */
const FANIN_GRACE_MS = 30_000;
/** How long fan-in then lets a product that fell behind drain its backlog before the next step. */
const FANIN_DRAIN_MS = 120_000;

async function fanIn(options: FeedsOptions & { plantOrganization: number; instrumentIds: number[]; seconds: number; product: Send; toPeer: Send }): Promise<void> {
  const { instrumentIds, seconds, log, report, clickhouse, peer } = options;
  const startMs = Date.UTC(2025, 3, 1);
  const feeds = instrumentIds.length;
  // Post (second s, feed f) is due at s * 1000 + f * 1000 / feeds ms after the start.
  const posts: Array<{ dueMs: number; post: Post }> = [];
  for (let second = 0; second < seconds; second += 1) {
    for (let feed = 0; feed < feeds; feed += 1) {
      posts.push({ dueMs: second * 1000 + (feed * 1000) / feeds, post: makePost('fanin', [[instrumentIds[feed]!, startMs + second * 1000]]) });
    }
  }
  const workload: Workload = { name: 'fanin', posts: posts.map((entry) => entry.post), points: posts.length, startMs, endMs: startMs + (seconds - 1) * 1000, instrumentIds };
  log(`fan-in: ${feeds} feeds posting one reading each per second for ${seconds} s (${feeds} posts/s offered), ?wait=true`);

  /**
   * Sends each post when it is due, whatever is still unanswered; answers the waits, the posts that
   * failed or went unanswered FANIN_GRACE_MS after the schedule, and when the last answer came.
   */
  const openLoop = async (side: 'product' | 'peer', send: Send, ok: (status: number) => boolean) => {
    const waits: number[] = [];
    let failed = 0;
    /** Why posts failed: their status, or the client's error. */
    const failures = new Map<string, number>();
    let lastMs = 0;
    const pending: Array<Promise<void>> = [];
    const started = performance.now();
    let index = 0;
    while (index < posts.length) {
      const now = performance.now() - started;
      while (index < posts.length && posts[index]!.dueMs <= now) {
        pending.push(send(posts[index]!.post[side]).then(({ status, ms }) => {
          if (!ok(status)) throw new Error(`answered ${status}`);
          waits.push(ms);
          lastMs = performance.now() - started;
        }).catch((error: Error) => {
          failed += 1;
          failures.set(error.message, (failures.get(error.message) ?? 0) + 1);
        }));
        index += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(pending), new Promise((resolve) => { timer = setTimeout(resolve, FANIN_GRACE_MS); })]);
    clearTimeout(timer);
    const unanswered = posts.length - waits.length - failed;
    // A copy: answers still arriving after the grace must not change the figures.
    return { waits: [...waits].sort((a, b) => a - b), failed, failures, unanswered, lastMs };
  };
  // The peer first: a product that fell behind goes on draining its backlog after the schedule, which
  // would take the peer's cores.
  await waitForMerges(clickhouse);
  let cpu = options.cpuMeter();
  const peerRun = await openLoop('peer', options.toPeer, (status) => status === 204);
  await peerQueryable(peer, workload);
  const peerLastMs = peerRun.lastMs;
  log(`fan-in: peer CPU time ${cpu()}; ${peerRun.waits.length} posts answered, ${peerRun.failed} failed`);
  await waitForMerges(clickhouse);
  cpu = options.cpuMeter();
  const clickhouseWork = await clickhouseMeter(clickhouse);
  const productRun = await openLoop('product', options.product, (status) => status === 200);
  log(`fan-in: product CPU time ${cpu()}; ClickHouse ${await clickhouseWork()}; ${productRun.waits.length} posts answered, ${productRun.failed} failed${productRun.failed > 0 ? ` (${[...productRun.failures].map(([why, count]) => `${count} ${why}`).join(', ')})` : ''}, ${productRun.unanswered} unanswered ${FANIN_GRACE_MS / 1000} s after the schedule`);
  const keptUp = productRun.failed === 0 && productRun.unanswered === 0;
  if (keptUp) {
    const stored = await productCount(clickhouse, options.plantOrganization, workload);
    if (stored !== workload.points) throw new Error(`the product stores ${stored} points of fan-in, not ${workload.points}`);
  } else {
    // Later steps should not share the cores with a backlog: it is given a while to drain.
    const deadline = Date.now() + FANIN_DRAIN_MS;
    let left = Number.POSITIVE_INFINITY;
    while (left > 0 && Date.now() < deadline) {
      const { rows } = await options.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM ingest_jobs WHERE organization_id = $1 AND state IN ('queued', 'running')", [options.plantOrganization]);
      left = rows[0]!.n;
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    log(`fan-in: ${left} product jobs still unfinished ${FANIN_DRAIN_MS / 1000} s after the grace`);
  }
  const scheduleMs = seconds * 1000;
  // Unanswered posts count as waiting until the grace ran out.
  const waits = [...productRun.waits, ...Array.from({ length: productRun.unanswered + productRun.failed }, () => scheduleMs + FANIN_GRACE_MS)].sort((a, b) => a - b);
  const p95 = quantile(waits, 0.95);
  log(`fan-in: product last answer ${Math.round(productRun.lastMs - scheduleMs)} ms after the schedule ended, wait p50/p95/p99 `
    + `${[0.5, 0.95, 0.99].map((q) => Math.round(quantile(waits, q))).join('/')} ms; peer last answer ${Math.round(peerLastMs - scheduleMs)} ms after, `
    + `write p50/p95/p99 ${[0.5, 0.95, 0.99].map((q) => Math.round(quantile(peerRun.waits, q))).join('/')} ms`);
  const achieved = productRun.waits.length / (Math.max(productRun.lastMs, scheduleMs) / 1000);
  report({ name: 'fanin_points_per_s', value: Math.round(achieved), unit: 'points/s', baseline: feeds, ratio: round(achieved / feeds),
    target: 'kept up: every post answered, the last within 1 s of the schedule', pass: keptUp && productRun.lastMs - scheduleMs < 1000 });
  report({ name: 'fanin_wait_p95', value: round(p95, 1), unit: 'ms', baseline: round(quantile(peerRun.waits, 0.95), 1), ratio: null, target: '< 1000 ms', pass: keptUp && p95 < 1000 });
}
