/**
 * What a 2xx promises: once the api answered, the points, upload or deletion reach ClickHouse exactly
 * once, whatever happens next to Redis (flushed, stopped), the api or the ingest-worker (kill -9), or
 * ClickHouse (cut off); and every job ends, failing with a message when an outage outlasts its
 * retries. Real processes and a Redis of the test's own, which it flushes and kills.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutageProxy } from '../support/outage-proxy.ts';
import { OwnRedis } from '../support/own-redis.ts';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody, readSeries, startWorker, waitForJobState } from '../support/ingest.ts';
import {
  feedPoints, jobStates, killChildren, killHard, spawnProcess, stopGently, storedCounts, T0, unfinishedJobs, waitAllFinished, waitForApi, writeCsv,
} from '../support/pipeline.ts';
import { createPlant, createUnitOperation } from '../support/fixtures.ts';
/** Ports of this file's own services (never the shared Redis on 6379). */
const REDIS_PORT = Number(process.env.DURABILITY_REDIS_PORT ?? 6406);
const API_PORT = Number(process.env.DURABILITY_API_PORT ?? 8205);
/** How long ClickHouse stays cut off while feeds post: a minute, as a real outage would last. */
const CLICKHOUSE_OUTAGE_MS = Number(process.env.DURABILITY_OUTAGE_MS ?? 60_000);

describe('durability of accepted requests', () => {
  const redis = new OwnRedis(REDIS_PORT);
  let ctx: TestContext;
  const csvFile = path.join(os.tmpdir(), `bp-durability-${process.pid}.csv`);

  beforeAll(async () => {
    await redis.start();
    ctx = await createTestContext({ REDIS_URL: redis.url, UPLOAD_RATE_LIMIT_PER_MINUTE: '100' });
  });
  afterAll(async () => {
    await killChildren();
    rmSync(csvFile, { force: true });
    await ctx?.close();
    await redis.close();
  });

  it('points answered 202 by an api killed right after, with Redis flushed before any worker ran, are all stored once', async () => {
    const plant = await createPlant(ctx, 2);
    const [a, b] = plant.instrumentIds as [number, number];
    const api = spawnProcess(ctx, 'api/src/main.ts', { PORT: String(API_PORT), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console') });
    const base = `http://127.0.0.1:${API_PORT}`;
    await waitForApi(base);
    const post = (data: unknown) => fetch(`${base}/api/v1/time-series-data/bulk`, {
      method: 'POST', headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ data }),
    });
    let expected = 0;
    // Twenty feeds' posts, and one post of three chunks.
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, (_, index) => post(feedPoints(a, index * 1_000, 1_000))),
      post(feedPoints(b, 0, 120_000)),
    ]);
    for (const answer of answers) expect(answer.status).toBe(202);
    expected += 20 * 1_000 + 120_000;
    // A deletion accepted after the posts: seconds 0..9,999 of instrument a are gone whatever the job order.
    const deletion = await fetch(`${base}/api/v1/time-series-data`, {
      method: 'DELETE', headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ instrument_ids: [a], start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 9_999_000).toISOString() }),
    });
    expect(deletion.status).toBe(202);
    expected -= 10_000;
    await killHard(api);
    await redis.flushAll();

    const worker = startWorker(ctx, { INGEST_RECONCILE_MS: 500 });
    try {
      await waitAllFinished(ctx, plant.organizationId);
    } finally {
      await worker.close();
    }
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: 22 });
    const counts = await storedCounts(ctx, plant.organizationId);
    expect(counts.keys).toBe(expected);
    // No row written twice: outside the deleted range, each accepted point is exactly one row.
    const stored = await ctx.deps.clickhouse.query({
      query: `SELECT count() FROM points WHERE organization_id = ${plant.organizationId} AND is_deleted = 0 AND NOT (instrument_id = ${a} AND ts < ${T0 + 10_000_000})`,
      format: 'JSONCompact',
    });
    expect(Number((await stored.json<[string]>()).data[0]![0])).toBe(expected);
    // The stored request data went with the finished jobs.
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_job_data');
    expect(rows[0].n).toBe(0);
  }, 180_000);

  it('an ingest-worker killed with -9 in the middle of a bulk flush, and the queue lost with it, leaves every point exactly once', async () => {
    const plant = await createPlant(ctx, 4);
    const posts = plant.instrumentIds.flatMap((instrumentId) => Array.from({ length: 6 }, (_, index) => feedPoints(instrumentId, index * 5_000, 5_000)));
    posts.push(feedPoints(plant.instrumentIds[0]!, 100_000, 100_000));
    for (const data of posts) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
      expect(response.statusCode).toBe(202);
    }
    const expected = posts.reduce((sum, data) => sum + data.length, 0);
    let worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', { INGEST_BULK_CONCURRENCY: '4' });
    // Kill it once some rows are in ClickHouse and some jobs are still unfinished.
    for (;;) {
      const { rows } = await storedCounts(ctx, plant.organizationId);
      const unfinished = await unfinishedJobs(ctx, plant.organizationId);
      expect(unfinished).toBeGreaterThan(0);
      if (rows > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await killHard(worker);
    expect(await unfinishedJobs(ctx, plant.organizationId)).toBeGreaterThan(0);
    await redis.flushAll();

    worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', {});
    await waitAllFinished(ctx, plant.organizationId);
    await stopGently(worker);
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: posts.length });
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(expected);
    // Read through the api: each key once.
    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: plant.instrumentIds[1]!, limit: 100_000 });
    expect(readings).toHaveLength(30_000);
    expect(new Set(readings.map((reading) => reading.ts)).size).toBe(30_000);
  }, 180_000);

  it('a CSV upload whose worker is killed with -9 mid-way, its queue entry lost, completes with exact counts', async () => {
    const plant = await createPlant(ctx, 3);
    const ROWS = 200_000;
    await writeCsv(csvFile, ROWS, 3, T0);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: plant.instrumentIds.map((id, c) => ({ column: `c${c}`, instrument_id: id })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'run.csv', content: readFileSync(csvFile) });
    const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().id as string;

    let worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', {});
    for (;;) {
      const { rows } = await ctx.deps.pg.query(`SELECT state, (checkpoint->>'byteOffset')::float8 AS offset FROM ingest_jobs WHERE id = $1`, [jobId]);
      expect(rows[0].state).not.toBe('completed');
      if (rows[0].offset !== null && rows[0].offset > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await killHard(worker);
    await redis.flushAll();

    worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', {});
    const job = await waitForJobState(ctx, plant.editor.token, jobId, 150_000);
    await stopGently(worker);
    expect(job.state).toBe('completed');
    expect(job.result).toMatchObject({ points_written: ROWS * 3, rows_read: ROWS });
    const counts = await storedCounts(ctx, plant.organizationId);
    expect(counts.keys).toBe(ROWS * 3);
  }, 240_000);

  it('a CSV upload delivered twice while it runs (Redis flushed under a live worker) is written once, by one run at a time', async () => {
    const plant = await createPlant(ctx, 3);
    const ROWS = 150_000;
    await writeCsv(csvFile, ROWS, 3, T0);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: plant.instrumentIds.map((id, c) => ({ column: `c${c}`, instrument_id: id })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'twice.csv', content: readFileSync(csvFile) });
    const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().id as string;
    const worker = startWorker(ctx, { WORKER_CONCURRENCY: 2, INGEST_RECONCILE_MS: 200 });
    try {
      for (;;) {
        const { rows } = await ctx.deps.pg.query('SELECT state FROM ingest_jobs WHERE id = $1', [jobId]);
        if (rows[0].state === 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The running upload's entry is gone: the reconciler queues it again while the first run goes on.
      await redis.flushAll();
      const job = await waitForJobState(ctx, plant.editor.token, jobId, 150_000);
      expect(job.state).toBe('completed');
    } finally {
      await worker.close();
    }
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(ROWS * 3);
  }, 240_000);

  it('feeds posting while ClickHouse is cut off for a minute lose nothing; their jobs complete once it is back', async () => {
    const plant = await createPlant(ctx, 2);
    const clickhouseUrl = new URL(ctx.env.CLICKHOUSE_URL);
    const proxy = new OutageProxy({ host: clickhouseUrl.hostname, port: Number(clickhouseUrl.port || 8123) });
    await proxy.start();
    const worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', { CLICKHOUSE_URL: proxy.urlFor(ctx.env.CLICKHOUSE_URL) });
    try {
      await proxy.stop();
      let expected = 0;
      const outageEnds = Date.now() + CLICKHOUSE_OUTAGE_MS;
      for (let round = 0; Date.now() < outageEnds; round += 1) {
        for (const instrumentId of plant.instrumentIds) {
          const data = feedPoints(instrumentId, round * 500, 500);
          const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
          expect(response.statusCode).toBe(202);
          expected += data.length;
        }
        // A feed posts about once a second.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      expect(await unfinishedJobs(ctx, plant.organizationId)).toBeGreaterThan(0);
      await proxy.start();
      await waitAllFinished(ctx, plant.organizationId);
      const states = await jobStates(ctx, plant.organizationId);
      expect(Object.keys(states)).toEqual(['completed']);
      expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(expected);
    } finally {
      await stopGently(worker);
      await proxy.stop();
    }
  }, CLICKHOUSE_OUTAGE_MS + 120_000);

  it('a job whose outage outlasts its retries ends failed with a message saying what to do', async () => {
    const plant = await createPlant(ctx, 1);
    const clickhouseUrl = new URL(ctx.env.CLICKHOUSE_URL);
    const proxy = new OutageProxy({ host: clickhouseUrl.hostname, port: Number(clickhouseUrl.port || 8123) });
    await proxy.start();
    const proxied = proxy.urlFor(ctx.env.CLICKHOUSE_URL);
    await proxy.stop();
    const worker = startWorker(ctx, { CLICKHOUSE_URL: proxied, INGEST_RETRY_MINUTES: 0.05, INGEST_BACKOFF_MAX_MS: 500 });
    try {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token,
        payload: { data: feedPoints(plant.instrumentIds[0]!, 0, 100) } });
      expect(response.statusCode).toBe(202);
      const job = await waitForJobState(ctx, plant.editor.token, response.headers['x-ingest-job-id'] as string, 60_000);
      expect(job.state).toBe('failed');
      expect(job.error).toMatch(/^Nothing was written: the time-series database or the job database could not be reached for 3 seconds .*post the data again\.$/);
      const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_job_data WHERE job_id = $1', [job.id]);
      expect(rows[0].n).toBe(0);
    } finally {
      await worker.close();
    }
  }, 90_000);

  it('requests answer while Redis is down, and their jobs are delivered once it is back, empty', async () => {
    const plant = await createPlant(ctx, 1);
    const [sensor] = plant.instrumentIds as [number];
    const unitOperation = await createUnitOperation(ctx, plant);
    await redis.kill();
    try {
      const started = Date.now();
      const write = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: feedPoints(sensor, 0, 600) } });
      const deletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token,
        payload: { instrument_ids: [sensor], start_time: new Date(T0).toISOString(), end_time: new Date(T0 + 99_000).toISOString() } });
      const csv = ['time,v', ...Array.from({ length: 50 }, (_, index) => `${new Date(T0 + (1_000 + index) * 1000).toISOString()},7`)].join('\n');
      const { body, contentType } = multipartBody({ mapping: JSON.stringify({ timestamp_column: 'time', columns: [{ column: 'v', instrument_id: sensor }] }) },
        { name: 'late.csv', content: csv });
      const upload = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
        headers: { 'content-type': contentType }, payload: body });
      expect([write.statusCode, deletion.statusCode, upload.statusCode]).toEqual([202, 202, 202]);
      // Each waited at most the enqueue bound for a Redis that does not answer.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await redis.start();
    }
    const worker = startWorker(ctx, { INGEST_RECONCILE_MS: 500 });
    try {
      await waitAllFinished(ctx, plant.organizationId, 60_000);
    } finally {
      await worker.close();
    }
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: 3 });
    expect((await storedCounts(ctx, plant.organizationId)).keys).toBe(500 + 50);
  }, 90_000);
});
