/**
 * PostgreSQL going away and coming back (as a restart does) while feeds post and a CSV upload runs.
 * The shared PostgreSQL cannot be restarted by a test, so the api and the ingest-worker under test
 * reach it through a TCP proxy that the test stops (every connection cut, new ones refused) and
 * starts again. Requests made meanwhile answer 503 with { error } at once; clients send them again
 * with the same Idempotency-Key; afterwards every accepted point is stored exactly once, the upload
 * completes with exact counts, and no job is left unfinished.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutageProxy } from '../support/outage-proxy.ts';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody } from '../support/ingest.ts';
import {
  feedPoints, freePort, jobStates, killChildren, spawnProcess, stopGently, storedCounts, T0, waitAllFinished, waitForApi, writeCsv,
} from '../support/pipeline.ts';
import { createPlant, createUnitOperation } from '../support/fixtures.ts';

/** How long PostgreSQL stays unreachable. */
const OUTAGE_MS = Number(process.env.POSTGRES_OUTAGE_MS ?? 10_000);
/** A request that has not answered after this long is hanging. */
const HANG_MS = 20_000;

describe('PostgreSQL unreachable for a while', () => {
  let ctx: TestContext;
  let proxy: OutageProxy;
  const csvFile = path.join(os.tmpdir(), `bp-postgres-outage-${process.pid}.csv`);

  beforeAll(async () => {
    ctx = await createTestContext();
    const database = new URL(ctx.env.DATABASE_URL);
    proxy = new OutageProxy({ host: database.hostname, port: Number(database.port || 5432) });
    await proxy.start();
  });
  afterAll(async () => {
    await killChildren();
    await proxy?.stop();
    rmSync(csvFile, { force: true });
    await ctx?.close();
  });

  it('loses nothing accepted, answers 503 meanwhile without hanging, and finishes every job', async () => {
    const plant = await createPlant(ctx, 5);
    const feedInstruments = plant.instrumentIds.slice(0, 2);
    const csvInstruments = plant.instrumentIds.slice(2);
    const proxied = { DATABASE_URL: proxy.urlFor(ctx.env.DATABASE_URL) };
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    spawnProcess(ctx, 'api/src/main.ts', { ...proxied, PORT: String(port), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console') });
    const worker = spawnProcess(ctx, 'ingest-worker/src/main.ts', proxied);
    await waitForApi(base);

    const ROWS = 300_000;
    await writeCsv(csvFile, ROWS, csvInstruments.length, T0);
    const unitOperation = await createUnitOperation(ctx, plant);
    const mapping = { timestamp_column: 'time', columns: csvInstruments.map((id, c) => ({ column: `c${c}`, instrument_id: id })) };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'outage.csv', content: readFileSync(csvFile) });
    const upload = await fetch(`${base}/api/v1/unit-operations/${unitOperation}/csv-uploads`, {
      method: 'POST', headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': contentType }, body,
    });
    expect(upload.status).toBe(202);
    const uploadJob = (await upload.json() as { id: string }).id;

    // Each post has a key of its own; one not accepted is sent again with the same key until it is.
    const posts = feedInstruments.flatMap((instrumentId) => Array.from({ length: 40 }, (_, round) => ({
      key: randomUUID(), data: feedPoints(instrumentId, round * 300, 300),
    })));
    const statuses: number[] = [];
    const unavailable: Array<{ status: number; body: unknown }> = [];
    const send = async (post: (typeof posts)[number]): Promise<number> => {
      // A hanging request fails the test here.
      const response = await fetch(`${base}/api/v1/time-series-data/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json', 'idempotency-key': post.key },
        body: JSON.stringify({ data: post.data }),
        signal: AbortSignal.timeout(HANG_MS),
      });
      statuses.push(response.status);
      if (response.status !== 202) unavailable.push({ status: response.status, body: await response.json() });
      return response.status;
    };

    // The cut starts once the upload runs, and lasts while the posts keep coming.
    for (;;) {
      const { rows } = await ctx.deps.pg.query('SELECT state FROM ingest_jobs WHERE id = $1', [uploadJob]);
      if (rows[0].state === 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const pending = [...posts];
    for (const post of pending.splice(0, 4)) expect(await send(post)).toBe(202);
    await proxy.stop();
    const { rows: [cutAt] } = await ctx.deps.pg.query('SELECT state FROM ingest_jobs WHERE id = $1', [uploadJob]);
    expect(cutAt.state).toBe('running');
    const cutEnds = Date.now() + OUTAGE_MS;
    const refused: typeof posts = [];
    while (Date.now() < cutEnds && pending.length > 0) {
      const post = pending.shift()!;
      if ((await send(post)) !== 202) refused.push(post);
      const job = await fetch(`${base}/api/v1/ingest-jobs/${uploadJob}`, { headers: { authorization: `Bearer ${plant.editor.token}` }, signal: AbortSignal.timeout(HANG_MS) });
      expect(job.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(unavailable.map((answer) => answer.status))).toEqual(new Set([503]));
    for (const answer of unavailable) expect(answer.body).toEqual({ error: expect.stringMatching(/unavailable/) });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutEnds - Date.now())));
    await proxy.start();

    // Clients send again what was refused (the api's pool reconnects on its own), then the rest.
    for (const post of [...refused, ...pending]) {
      const deadline = Date.now() + 30_000;
      while ((await send(post)) !== 202) {
        if (Date.now() > deadline) throw new Error('the api did not recover after PostgreSQL came back');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }

    await waitAllFinished(ctx, plant.organizationId, 180_000);
    await stopGently(worker);
    expect(await jobStates(ctx, plant.organizationId)).toEqual({ completed: posts.length + 1 });
    const { rows: [uploadRow] } = await ctx.deps.pg.query('SELECT result FROM ingest_jobs WHERE id = $1', [uploadJob]);
    expect(uploadRow.result).toMatchObject({ points_written: ROWS * csvInstruments.length, rows_read: ROWS });
    const counts = await storedCounts(ctx, plant.organizationId);
    expect(counts.keys).toBe(posts.length * 300 + ROWS * csvInstruments.length);
    // Feeds: each accepted point is one row (a post accepted twice under one key is one job).
    const feedRows = await ctx.deps.clickhouse.query({
      query: `SELECT count() FROM points WHERE organization_id = ${plant.organizationId} AND is_deleted = 0 AND instrument_id IN (${feedInstruments.join(',')})`,
      format: 'JSONCompact',
    });
    expect(Number((await feedRows.json<[string]>()).data[0]![0])).toBe(posts.length * 300);
    const { rows: left } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_job_data');
    expect(left[0].n).toBe(0);
  }, OUTAGE_MS + 300_000);
});
