/**
 * Admission of bulk posts by size (api/src/timeseries/bulk-admission.ts), over real HTTP: with a
 * budget smaller than one post, a post whose body is still arriving holds the budget, later posts wait
 * unread, a client that gives up while waiting frees its place, and every admitted post is answered.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 6, 1);
const BUDGET_BYTES = 2_000;

describe('bulk admission by size', () => {
  let ctx: TestContext;
  let plant: Plant;
  let port: number;
  beforeAll(async () => {
    ctx = await createTestContext({ BULK_BYTES_IN_FLIGHT: String(BUDGET_BYTES) });
    plant = await createPlant(ctx, 1);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await ctx.close();
  });

  const body = (first: number, count: number) => Buffer.from(JSON.stringify({
    data: Array.from({ length: count }, (_, index) => ({ ts: T0 + (first + index) * 1000, instrument_id: plant.instrumentIds[0], value: index })),
  }));

  /** Starts a post; answers the request (to write its body) and its status once answered. */
  function post(payload: Buffer, options: { wait?: boolean; minimal?: boolean } = {}) {
    const request = http.request({
      host: '127.0.0.1', port, method: 'POST', path: `/api/v1/time-series-data/bulk${options.wait ? '?wait=true' : ''}`,
      headers: {
        authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json', 'content-length': payload.length,
        ...(options.minimal ? { prefer: 'return=minimal' } : {}),
      },
    });
    const status = new Promise<number>((resolve, reject) => {
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      request.on('error', reject);
    });
    return { request, status };
  }
  const recordedJobs = async () => Number((await ctx.deps.pg.query<{ n: string }>(
    'SELECT count(*) AS n FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId])).rows[0]!.n);
  const answeredWithin = (status: Promise<number>, ms: number) =>
    Promise.race([status.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

  it('lets later posts wait unread while the budget is taken, and serves each once it frees', async () => {
    const large = body(0, 200);
    expect(large.length).toBeGreaterThan(BUDGET_BYTES);
    const holder = post(large);
    // Admitted once the api has its headers: its body is being read, the budget is taken. The others
    // are sent only after a moment, or on a busy machine one of them could reach the api first.
    await new Promise((resolve) => holder.request.write(large.subarray(0, 100), resolve));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const waiting = post(body(1_000, 3));
    waiting.request.end(body(1_000, 3));
    // As large as the whole budget: were its place kept, nothing after it would ever be admitted.
    const leaving = post(body(2_000, 200));
    leaving.request.end(body(2_000, 200));
    expect(await answeredWithin(waiting.status, 500)).toBe(false);

    // The client of a waiting post gives up: its place must not stay taken.
    leaving.request.destroy();
    await leaving.status.catch(() => undefined);

    holder.request.end(large.subarray(100));
    expect(await holder.status).toBe(202);
    expect(await waiting.status).toBe(202);
    for (let round = 0; round < 3; round += 1) {
      const next = post(body(3_000 + round * 10, 3));
      next.request.end(body(3_000 + round * 10, 3));
      expect(await answeredWithin(next.status, 10_000)).toBe(true);
      expect(await next.status).toBe(202);
    }
  });

  // No ingest-worker runs here: a post with ?wait=true stays waiting for its job until its client leaves.
  it('takes back a recorded post\'s body bytes while it waits for its job, keeping only its answer\'s', async () => {
    const minimal = post(body(10_000, 200), { wait: true, minimal: true });
    minimal.request.end(body(10_000, 200));
    const minimalGone = minimal.status.catch(() => undefined); // its client leaves at the end
    const next = post(body(11_000, 200));
    next.request.end(body(11_000, 200));
    // Recorded, the first holds nothing while it waits: the next post is read and answered meanwhile.
    expect(await answeredWithin(next.status, 10_000)).toBe(true);
    expect(await next.status).toBe(202);
    expect(await answeredWithin(minimal.status, 100)).toBe(false);

    // A post that echoes its readings holds its answer while it waits: the share stays taken.
    const recordedBefore = await recordedJobs();
    const echoing = post(body(12_000, 200), { wait: true });
    echoing.request.end(body(12_000, 200));
    const echoingGone = echoing.status.catch(() => undefined);
    // Recorded (and holding its share) before the next post is sent: on a busy machine the next one
    // could otherwise reach the api first.
    while (await recordedJobs() === recordedBefore) await new Promise((resolve) => setTimeout(resolve, 20));
    const after = post(body(13_000, 3));
    after.request.end(body(13_000, 3));
    expect(await answeredWithin(after.status, 1_000)).toBe(false);
    echoing.request.destroy();
    expect(await answeredWithin(after.status, 10_000)).toBe(true);
    expect(await after.status).toBe(202);

    minimal.request.destroy();
    await Promise.all([minimalGone, echoingGone]);
  });
});
