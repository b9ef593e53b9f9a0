/**
 * Small bulk posts written by the api itself (bulk-finish.ts): recorded, inserted into ClickHouse and
 * completed without a worker, their rollups following. Whatever goes wrong on the way (ClickHouse
 * unreachable, a range deletion accepted while their rows travel, the api killed between its insert and
 * its completion, ClickHouse stuck while the api already holds as many rows as it may), an
 * ingest-worker finishes them from their record and every point is stored once as reads see it, with
 * exact rollups.
 *
 * The api's ClickHouse goes through a proxy the tests cut, hold or mute; the workers use ClickHouse
 * directly.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '@bioprocess/shared/server/clickhouse';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { readSeries, startWorker } from '../support/ingest.ts';
import { OutageProxy } from '../support/outage-proxy.ts';
import {
  feedPoints, freePort, jobStates, killChildren, killHard, owedRollups, rollupFigures, spawnProcess, storedCounts, T0, waitAllFinished, waitForApi,
} from '../support/pipeline.ts';

const POSTS = 24;
const POINTS_PER_POST = 50;
const HANDED_OVER = 'bulk posts handed to the ingest-worker: ';

/** An api whose ClickHouse goes through `proxy`, and the reasons it gives for handing posts to the worker. */
async function apiBehind(proxy: OutageProxy, clickhouseUrl: string, handOvers: string[], env: Record<string, string> = {}): Promise<TestContext> {
  await proxy.start();
  return createTestContext({ CLICKHOUSE_URL: proxy.urlFor(clickhouseUrl), LOG_LEVEL: 'warn', ...env }, {
    logDestination: {
      write: (line: string) => {
        const { msg } = JSON.parse(line) as { msg: string };
        if (msg.startsWith(HANDED_OVER)) handOvers.push(msg.slice(HANDED_OVER.length));
      },
    },
  });
}

describe('small bulk posts written by the api', () => {
  const clickhouseUrl = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
  const proxy = new OutageProxy({ host: new URL(clickhouseUrl).hostname, port: Number(new URL(clickhouseUrl).port || 8123) });
  let ctx: TestContext;
  /** Why the api handed posts to the worker, from its warnings. */
  const handOvers: string[] = [];

  beforeAll(async () => {
    ctx = await apiBehind(proxy, clickhouseUrl, handOvers);
  });
  afterAll(async () => {
    await killChildren();
    proxy.release();
    proxy.unmute();
    if (!proxy.running) await proxy.start();
    await ctx?.close();
    await proxy.stop();
  });

  /** A worker writing to ClickHouse directly, past the proxy. */
  const directWorker = () => startWorker(ctx, { CLICKHOUSE_URL: clickhouseUrl, INGEST_RECONCILE_MS: 500 });

  /** Posts `POSTS` feeds' readings at once (feed f writes instrument f % 3, its own seconds). */
  const postTogether = (plant: Plant, firstSecond: number, query = '?wait=true') => Promise.all(Array.from({ length: POSTS }, (_, feed) => ctx.request({
    method: 'POST', url: `/api/v1/time-series-data/bulk${query}`, token: plant.editor.token, headers: { prefer: 'return=minimal' },
    payload: { data: feedPoints(plant.instrumentIds[feed % 3]!, firstSecond + feed * POINTS_PER_POST, POINTS_PER_POST) },
  })));

  async function jobsOf(organizationId: number): Promise<Array<{ state: string; retried: boolean; data: number }>> {
    const { rows } = await ctx.deps.pg.query<{ state: string; retried: boolean; data: number }>(
      `SELECT state, retried, (SELECT count(*)::integer FROM ingest_job_data d WHERE d.job_id = j.id) AS data
         FROM ingest_jobs j WHERE organization_id = $1`, [organizationId]);
    return rows;
  }

  async function expectExactRollups(organizationId: number): Promise<void> {
    await waitAllFinished(ctx, organizationId, 60_000);
    const { minutes, hours } = await rollupFigures(ctx, organizationId);
    expect(minutes.fromRollups).toEqual(minutes.fromPoints);
    expect(hours.fromRollups).toEqual(hours.fromPoints);
  }

  it('are stored and completed before a waiting post is answered, with no worker running, many posts to an insert', async () => {
    const plant = await createPlant(ctx, 3);
    const answers = await postTogether(plant, 0);
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    // Answered 200: the points are there already, and nothing was queued for a worker.
    expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: POSTS * POINTS_PER_POST, rows: POSTS * POINTS_PER_POST });
    expect(await ctx.deps.queues.ingestBulk.getJobCounts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
    // Their completion follows the answer by a statement.
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    const jobs = await jobsOf(plant.organizationId);
    expect(jobs).toEqual(Array(POSTS).fill({ state: 'completed', retried: false, data: 0 }));
    expect(handOvers).toEqual([]);
    // Fewer batches than posts: posts recorded together share the statement and the insert.
    const { rows: [batches] } = await ctx.deps.pg.query<{ n: number }>(
      "SELECT count(DISTINCT COALESCE(request->>'batch', id::text))::integer AS n FROM ingest_jobs WHERE organization_id = $1", [plant.organizationId]);
    expect(batches!.n).toBeLessThan(POSTS);
    await expectExactRollups(plant.organizationId);
    expect(await owedRollups(ctx, plant.organizationId)).toBe(0);

    // Without ?wait the answer is 202 at once, and the api still finishes the posts alone.
    const accepted = await postTogether(plant, 10_000, '');
    for (const answer of accepted) expect(answer.statusCode).toBe(202);
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: 2 * POSTS });
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(2 * POSTS * POINTS_PER_POST);
  });

  it('are answered once their rows are stored, before the statement completing them, and reads of rollups wait for them from the answer', async () => {
    const plant = await createPlant(ctx, 3);
    const [instrumentId] = plant.instrumentIds as [number];
    // The statement that completes posts looks for later range deletions: a lock on their table holds it.
    const blocker = await ctx.deps.pg.connect();
    let read: Promise<{ statusCode: number; body: string }> | undefined;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE time_series_deletions IN ACCESS EXCLUSIVE MODE');
      const answer = await ctx.request({
        method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, headers: { prefer: 'return=minimal' },
        payload: { data: feedPoints(instrumentId, 0, POINTS_PER_POST) },
      });
      expect(answer.statusCode, answer.body).toBe(200);
      // Queryable at the answer; the job still running with its data (rows and figures), its rollups owed since it was recorded.
      expect(await storedCounts(ctx, plant.organizationId)).toEqual({ keys: POINTS_PER_POST, rows: POINTS_PER_POST });
      expect(await jobsOf(plant.organizationId)).toEqual([{ state: 'running', retried: false, data: 2 }]);
      expect(await owedRollups(ctx, plant.organizationId)).toBe(1);
      // A read of rollups waits for them rather than answer without the post.
      read = ctx.request({ method: 'GET', url: `/api/v1/time-series-data?instrument_id=${instrumentId}&limit=1000`, token: plant.viewer.token });
      const early = await Promise.race([read.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
      expect(early).toBe('waiting');
    } finally {
      await blocker.query('COMMIT');
      blocker.release();
    }
    const answered = await read!;
    expect(answered.statusCode, answered.body).toBe(200);
    expect(JSON.parse(answered.body)).toHaveLength(POINTS_PER_POST);
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    expect(await jobsOf(plant.organizationId)).toEqual([{ state: 'completed', retried: false, data: 0 }]);
    expect(handOvers).toEqual([]);
    await expectExactRollups(plant.organizationId);
  });

  it('carry versions drawn by the statement recording them, stamped alike by the api and by a worker writing them from their record', async () => {
    const plant = await createPlant(ctx, 3);
    const [instrumentId] = plant.instrumentIds as [number];
    const post = (value: number) => ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: feedPoints(instrumentId, 0, POINTS_PER_POST).map((point) => ({ ...point, float_value: value })) },
    });
    /** Stored (version, value) rows, and the rows a job's post should have: its version, then the point's index. */
    const storedRows = async () => {
      const stored = await ctx.deps.clickhouse.query({
        query: `SELECT toString(version), value FROM points WHERE organization_id = ${plant.organizationId}`, format: 'JSONCompact',
      });
      return new Set((await stored.json<[string, number]>()).data.map((row) => JSON.stringify(row)));
    };
    const rowsOf = (versionSeq: string, value: number) => Array.from({ length: POINTS_PER_POST }, (_, point) =>
      JSON.stringify([(BigInt(versionSeq) * 10n ** 10n + BigInt(point + 1)).toString(), value]));
    const jobsByVersion = async () => (await ctx.deps.pg.query<{ version_seq: string; request: { versions_from_job?: boolean } }>(
      'SELECT version_seq, request FROM ingest_jobs WHERE organization_id = $1 ORDER BY version_seq', [plant.organizationId])).rows;

    // Written by the api, then the same keys again written by a worker (the api cannot reach ClickHouse).
    expect((await post(1)).statusCode).toBe(200);
    // Its rollups too, before the api loses ClickHouse.
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    const [first] = await jobsByVersion();
    expect(first!.request.versions_from_job).toBe(true);
    expect(await storedRows()).toEqual(new Set(rowsOf(first!.version_seq, 1)));
    const worker = directWorker();
    await proxy.stop();
    try {
      expect((await post(2)).statusCode).toBe(200);
      expect(handOvers.splice(0)).toEqual(['their rows could not be inserted']);
    } finally {
      await proxy.start();
      await worker.close();
    }
    await waitAllFinished(ctx, plant.organizationId, 30_000);
    // The later post wins every key, and each row's version is its job's version then its index in the post.
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: instrumentId, limit: 1_000 });
    expect(readings.map((reading) => reading.value)).toEqual(Array(POINTS_PER_POST).fill(2));
    const jobs = await jobsByVersion();
    expect(jobs.map((job) => job.request.versions_from_job)).toEqual([true, true]);
    expect(jobs[0]!.version_seq).toBe(first!.version_seq);
    // A background merge may already have dropped the first post's rows (the later version of a key
    // replaces it): the second post's rows are all there, and nothing else but the first's.
    const stored = await storedRows();
    const second = rowsOf(jobs[1]!.version_seq, 2);
    for (const row of second) expect(stored).toContain(row);
    const expected = new Set([...rowsOf(first!.version_seq, 1), ...second]);
    expect([...stored].filter((row) => !expected.has(row))).toEqual([]);
  });

  it('lose to a range deletion accepted while their rows were on their way to ClickHouse', async () => {
    const plant = await createPlant(ctx, 3);
    const worker = directWorker();
    try {
      const [instrumentId] = plant.instrumentIds as [number];
      proxy.hold();
      const posted = ctx.request({
        method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
        payload: { data: feedPoints(instrumentId, 0, POINTS_PER_POST) },
      });
      // Recorded (running): its insert now waits in the proxy.
      for (;;) {
        const jobs = await jobsOf(plant.organizationId);
        if (jobs.length === 1 && jobs[0]!.state === 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const deletion = await ctx.request({
        method: 'DELETE', url: '/api/v1/time-series-data?wait=true', token: plant.editor.token,
        payload: { instrument_ids: [instrumentId], start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 3_600_000).toISOString() },
      });
      expect(deletion.statusCode, deletion.body).toBe(200);
      proxy.release();
      const answer = await posted;
      expect(answer.statusCode, answer.body).toBe(200);
      // Answered once its rows were stored; the statement completing it then finds the later deletion.
      await waitAllFinished(ctx, plant.organizationId, 60_000);
      expect(handOvers.splice(0)).toEqual(['a range deletion was accepted after them']);
    } finally {
      proxy.release();
      await worker.close();
    }
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(0);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: plant.instrumentIds[0]!, limit: 1_000 })).toEqual([]);
    await expectExactRollups(plant.organizationId);
  });

  it('go to the ingest-worker when ClickHouse cannot be reached from the api, flagged retried, every point once', async () => {
    const plant = await createPlant(ctx, 3);
    const worker = directWorker();
    await proxy.stop();
    try {
      const answers = await postTogether(plant, 0);
      for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
      expect(new Set(handOvers.splice(0))).toEqual(new Set(['their rows could not be inserted']));
    } finally {
      await proxy.start();
      await worker.close();
    }
    expect(new Set((await jobsOf(plant.organizationId)).map((job) => JSON.stringify(job)))).toEqual(new Set([JSON.stringify({ state: 'completed', retried: true, data: 0 })]));
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(POSTS * POINTS_PER_POST);
    await expectExactRollups(plant.organizationId);
  });

  it('killed with -9 after its insert landed but before it completed them: a worker completes them, every point read once, exact rollups', async () => {
    const plant = await createPlant(ctx, 3);
    const port = await freePort();
    const api = spawnProcess(ctx, 'api/src/main.ts', {
      PORT: String(port), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console'), CLICKHOUSE_URL: proxy.urlFor(clickhouseUrl),
    });
    const base = `http://127.0.0.1:${port}`;
    await waitForApi(base);
    const direct = createClickHouse(clickhouseUrl, ctx.env.CLICKHOUSE_DATABASE);
    const storedRows = async () => {
      const result = await direct.query({ query: `SELECT count() FROM points WHERE organization_id = ${plant.organizationId}`, format: 'JSONCompact' });
      return Number((await result.json<[string]>()).data[0]![0]);
    };
    try {
      // ClickHouse carries out the api's insert; the api never hears back.
      proxy.mute();
      const posts = Array.from({ length: POSTS }, (_, feed) => fetch(`${base}/api/v1/time-series-data/bulk?wait=true`, {
        method: 'POST', headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: feedPoints(plant.instrumentIds[feed % 3]!, feed * POINTS_PER_POST, POINTS_PER_POST) }),
      }).catch(() => undefined));
      while (await storedRows() < POSTS * POINTS_PER_POST) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await jobStates(ctx, plant.organizationId)).toEqual({ running: POSTS });
      await killHard(api);
      await Promise.all(posts);
    } finally {
      proxy.unmute();
      await direct.close();
    }
    const worker = directWorker();
    try {
      await waitAllFinished(ctx, plant.organizationId, 60_000);
    } finally {
      await worker.close();
    }
    expect(new Set((await jobsOf(plant.organizationId)).map((job) => JSON.stringify(job)))).toEqual(new Set([JSON.stringify({ state: 'completed', retried: true, data: 0 })]));
    // Stored twice (until ClickHouse merges the copies), read once.
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(POSTS * POINTS_PER_POST);
    await expectExactRollups(plant.organizationId);
  }, 120_000);
});

describe('small bulk posts while ClickHouse is stuck for the api', () => {
  const clickhouseUrl = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
  const proxy = new OutageProxy({ host: new URL(clickhouseUrl).hostname, port: Number(new URL(clickhouseUrl).port || 8123) });
  const handOvers: string[] = [];
  let ctx: TestContext;

  beforeAll(async () => {
    // Room for one feed post's rows (50 rows of 42 bytes), not two.
    ctx = await apiBehind(proxy, clickhouseUrl, handOvers, { BULK_WRITES_IN_API_MAX_BYTES: '3000' });
  });
  afterAll(async () => {
    proxy.release();
    await ctx?.close();
    await proxy.stop();
  });

  it('go to the worker once the api holds as many rows as it may, and are all stored once ClickHouse answers again', async () => {
    const plant = await createPlant(ctx, 3);
    // Its reconciler would deliver the held post too once left running for an interval.
    const worker = startWorker(ctx, { CLICKHOUSE_URL: clickhouseUrl, INGEST_RECONCILE_MS: 600_000 });
    try {
      proxy.hold();
      // Accepted (202) and held by the api: its insert is stuck in the proxy.
      const first = await ctx.request({
        method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, headers: { prefer: 'return=minimal' },
        payload: { data: feedPoints(plant.instrumentIds[0]!, 100_000, POINTS_PER_POST) },
      });
      expect(first.statusCode).toBe(202);
      // The next ones would take the api past its bound: the worker writes them while the api's insert is stuck.
      const answers = await Promise.all(Array.from({ length: POSTS }, (_, feed) => ctx.request({
        method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, headers: { prefer: 'return=minimal' },
        payload: { data: feedPoints(plant.instrumentIds[feed % 3]!, feed * POINTS_PER_POST, POINTS_PER_POST) },
      })));
      for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
      expect(new Set(handOvers)).toEqual(new Set(['the api holds as many rows for ClickHouse as it may already']));
      expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: POSTS, running: 1 });
    } finally {
      proxy.release();
    }
    try {
      await waitAllFinished(ctx, plant.organizationId, 60_000);
    } finally {
      await worker.close();
    }
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: POSTS + 1 });
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe((POSTS + 1) * POINTS_PER_POST);
    const { minutes, hours } = await rollupFigures(ctx, plant.organizationId);
    expect(minutes.fromRollups).toEqual(minutes.fromPoints);
    expect(hours.fromRollups).toEqual(hours.fromPoints);
  });
});
