/**
 * Live charts through the real pipeline: a listening api and an ingest-worker on the real PostgreSQL,
 * Redis and ClickHouse. Posts, deletions and reconnects are made as a browser tab and a feed make
 * them; what each stream receives is counted.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { POINTS_STORED_STREAM } from '@bioprocess/shared/server/points-stored';
import type { LiveDeletion, LivePoints, LiveReady } from '@bioprocess/shared/live';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { startWorker, waitForJobState } from '../support/ingest.ts';
import { T0 } from '../support/pipeline.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { SseStream, type SseEvent } from './sse-client.ts';
import { liveHubOf } from '../../src/live/live-hub-of.ts';

const CONNECTIONS_PER_ORGANIZATION = 4;

describe('live points', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let base: string;
  let plant: Plant;
  let other: Plant;
  const streams: SseStream[] = [];

  beforeAll(async () => {
    ctx = await createTestContext({ LIVE_CONNECTIONS_PER_ORGANIZATION: String(CONNECTIONS_PER_ORGANIZATION), LIVE_INLINE_POINTS: '100' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 3);
    other = await createPlant(ctx, 1);
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await worker?.close();
    await ctx?.deps.redis.del(POINTS_STORED_STREAM(ctx.env.QUEUE_PREFIX));
    await ctx?.close();
  });

  // Each test starts with no stream open: those closed are gone once the server saw them go.
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    const hub = liveHubOf(ctx.deps);
    for (let tries = 0; tries < 400 && hub.usage(plant.organizationId).connections + hub.usage(other.organizationId).connections > 0; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });

  const live = async (token: string, instrumentIds: readonly number[], lastEventId?: string): Promise<SseStream> => {
    const opened = await SseStream.open(base, `/api/v1/live?instrument_ids=${instrumentIds.join(',')}`, token, lastEventId);
    if (!(opened instanceof SseStream)) throw new Error(`live stream refused: ${opened.status} ${await opened.text()}`);
    streams.push(opened);
    await opened.waitFor((event) => event.event === 'ready');
    return opened;
  };

  /** Posts readings (instrument, second, value) and waits until the job completed. */
  const post = async (token: string, readings: Array<[instrumentId: number, second: number, value: number]>): Promise<string> => {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk', token,
      payload: { data: readings.map(([instrument_id, second, float_value]) => ({ instrument_id, measured_at: T0 + second * 1000, float_value })) },
    });
    expect(response.statusCode, response.body).toBe(202);
    const jobId = response.headers.location!.split('/').pop()!;
    expect((await waitForJobState(ctx, token, jobId)).state).toBe('completed');
    return jobId;
  };

  const pointsEvents = (stream: SseStream, from = 0): Array<SseEvent & { data: LivePoints }> =>
    stream.events.slice(from).filter((event) => event.event === 'points') as never;

  it('a bulk post reaches a subscribed stream with its points, only for the instruments it follows', async () => {
    const [a, b, c] = plant.instrumentIds as [number, number, number];
    const stream = await live(plant.viewer.token, [a, b]);
    const ready = stream.events[0]!.data as LiveReady;
    expect(ready).toMatchObject({ instrument_ids: [a, b], resumed: false });
    await post(plant.editor.token, [[a, 0, 1.5], [a, 1, 2.5], [c, 0, 9], [b, 0, 7]]);
    const at = await stream.waitFor((event) => event.event === 'points');
    const event = stream.events[at]! as SseEvent & { data: LivePoints };
    expect(event.id).toMatch(/^\d+-\d+$/);
    expect(event.data.instrument_ids.sort()).toEqual([a, b].sort());
    expect(event.data.from_ms).toBe(T0);
    expect(event.data.to_ms).toBe(T0 + 1000);
    expect(event.data.readings!.map((reading) => [reading.instrument_id, reading.ts, reading.value]).sort()).toEqual([
      [a, T0, 1.5], [a, T0 + 1000, 2.5], [b, T0, 7],
    ].sort());
  });

  it('streams opened at the same moment each receive every event', async () => {
    const [a] = plant.instrumentIds as [number];
    const together = await Promise.all(Array.from({ length: CONNECTIONS_PER_ORGANIZATION }, () => live(plant.viewer.token, [a])));
    await post(plant.editor.token, [[a, 5, 1]]);
    for (const stream of together) await stream.waitFor((event) => event.event === 'points');
    expect(together.map((stream) => pointsEvents(stream).length)).toEqual(together.map(() => 1));
  });

  it('an instrument of another organisation is refused, and its points never reach another organisation\'s stream', async () => {
    const [a] = plant.instrumentIds as [number];
    const [foreign] = other.instrumentIds as [number];
    const refused = await SseStream.open(base, `/api/v1/live?instrument_ids=${a},${foreign}`, plant.viewer.token);
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(404);
    expect(await (refused as Response).json()).toEqual({ error: `instrument_ids: instrument not found: ${foreign}` });

    const ours = await live(plant.viewer.token, [a]);
    const theirs = await live(other.viewer.token, [foreign]);
    await post(plant.editor.token, [[a, 10, 3]]);
    await ours.waitFor((event) => event.event === 'points');
    // Posted after ours arrived: had the first reached their stream, it would come before this one.
    await post(other.editor.token, [[foreign, 10, 4]]);
    await theirs.waitFor((event) => event.event === 'points');
    expect(pointsEvents(theirs).map((event) => event.data.readings)).toEqual([[{ instrument_id: foreign, ts: T0 + 10_000, value: 4 }]]);
    expect(pointsEvents(ours).every((event) => event.data.instrument_ids.every((id) => id === a))).toBe(true);
  });

  it('a stream resumed with Last-Event-ID gets exactly the events it missed, then the live ones', async () => {
    const [a, b] = plant.instrumentIds as [number, number];
    const observer = await live(plant.viewer.token, [a, b]);
    const stream = await live(plant.viewer.token, [a]);
    await post(plant.editor.token, [[a, 20, 1]]);
    await stream.waitFor((event) => event.event === 'points');
    const resumeFrom = stream.lastEventId!;
    stream.close();
    // Missed: two posts to the followed instrument, one to another (not sent to this stream).
    const before = observer.events.length;
    await post(plant.editor.token, [[a, 21, 2]]);
    await post(plant.editor.token, [[b, 21, 5]]);
    await post(plant.editor.token, [[a, 22, 3]]);
    await observer.waitFor((event) => event.event === 'points' && event.data !== null && (event.data as LivePoints).from_ms === T0 + 22_000, before);
    const missed = pointsEvents(observer, before).filter((event) => event.data.instrument_ids.includes(a));
    expect(missed).toHaveLength(2);

    const resumed = await live(plant.viewer.token, [a], resumeFrom);
    const readyAt = resumed.events.findIndex((event) => event.event === 'ready');
    expect(resumed.events.slice(0, readyAt).map((event) => [event.event, event.id])).toEqual(missed.map((event) => ['points', event.id]));
    expect(resumed.events.slice(0, readyAt).map((event) => (event.data as LivePoints).readings)).toEqual([
      [{ instrument_id: a, ts: T0 + 21_000, value: 2 }], [{ instrument_id: a, ts: T0 + 22_000, value: 3 }],
    ]);
    expect((resumed.events[readyAt]!.data as LiveReady).resumed).toBe(true);
    await post(plant.editor.token, [[a, 23, 4]]);
    await resumed.waitFor((event) => event.event === 'points', readyAt);
    expect(pointsEvents(resumed, readyAt + 1).map((event) => event.data.from_ms)).toEqual([T0 + 23_000]);
  });

  it('a resume point the stream no longer covers gets a reset', async () => {
    const [a] = plant.instrumentIds as [number];
    const stream = await live(plant.viewer.token, [a], '1-0');
    expect(stream.events.map((event) => event.event)).toEqual(['reset', 'ready']);
  });

  it('a deletion and a replaced point patch the stream', async () => {
    const [a] = plant.instrumentIds as [number];
    const stream = await live(plant.viewer.token, [a]);
    await post(plant.editor.token, [[a, 30, 1], [a, 31, 2]]);
    await stream.waitFor((event) => event.event === 'points');
    // A late correction of one stored point: the event carries the value reads now see.
    await post(plant.editor.token, [[a, 31, 20]]);
    const replacedAt = await stream.waitFor((event) => event.event === 'points' && (event.data as LivePoints).from_ms === T0 + 31_000);
    expect((stream.events[replacedAt]!.data as LivePoints).readings).toEqual([{ instrument_id: a, ts: T0 + 31_000, value: 20 }]);

    const deleted = await ctx.request({
      method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token,
      payload: { instrument_ids: [a], start_time: new Date(T0 + 30_000).toISOString(), end_time: new Date(T0 + 31_000).toISOString() },
    });
    expect(deleted.statusCode, deleted.body).toBe(202);
    const deletionAt = await stream.waitFor((event) => event.event === 'deletion');
    expect(stream.events[deletionAt]!.data as LiveDeletion).toEqual({ instrument_ids: [a], from_ms: T0 + 30_000, to_ms: T0 + 31_000 });
  });

  it('a write larger than an event carries tells the client to read its range', async () => {
    const [a] = plant.instrumentIds as [number];
    const stream = await live(plant.viewer.token, [a]);
    await post(plant.editor.token, Array.from({ length: 150 }, (_, index) => [a, 100 + index, index] as [number, number, number]));
    const at = await stream.waitFor((event) => event.event === 'points');
    expect(stream.events[at]!.data).toEqual({ instrument_ids: [a], from_ms: T0 + 100_000, to_ms: T0 + 249_000, readings: null });
  });

  it('refuses bad input and streams past the organisation\'s budget with a 4xx naming why', async () => {
    const [a] = plant.instrumentIds as [number];
    const refusal = async (path: string, lastEventId?: string) => {
      const opened = await SseStream.open(base, path, plant.viewer.token, lastEventId);
      expect(opened).toBeInstanceOf(Response);
      return { status: (opened as Response).status, body: await (opened as Response).json() as { error: string } };
    };
    expect(await refusal('/api/v1/live')).toEqual({ status: 400, body: { error: 'instrument_ids: name at least one instrument' } });
    expect((await refusal('/api/v1/live?instrument_ids=1,x')).body.error).toMatch(/instrument_ids.*1.*positive integer/);
    expect((await refusal(`/api/v1/live?instrument_ids=${a}`, 'yesterday')).body.error).toMatch(/^Last-Event-ID/);
    for (let opened = 0; opened < CONNECTIONS_PER_ORGANIZATION; opened += 1) await live(plant.viewer.token, [a]);
    const over = await refusal(`/api/v1/live?instrument_ids=${a}`);
    expect(over.status).toBe(429);
    expect(over.body.error).toContain(`${CONNECTIONS_PER_ORGANIZATION} live chart connections`);
  });
});
