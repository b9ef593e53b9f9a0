/**
 * Live events across api processes: a stream held by a second api process (spawned for real) receives
 * the points posted through the first, since every api reads the points-stored stream itself.
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POINTS_STORED_STREAM } from '@bioprocess/shared/server/points-stored';
import type { LivePoints } from '@bioprocess/shared/live';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { startWorker, waitForJobState } from '../support/ingest.ts';
import { freePort, killChildren, spawnProcess, T0, waitForApi } from '../support/pipeline.ts';
import { SseStream } from './sse-client.ts';

describe('live events across api processes', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  let otherApi: string;
  let stream: SseStream | null = null;

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 2);
    const port = await freePort();
    otherApi = `http://127.0.0.1:${port}`;
    spawnProcess(ctx, 'api/src/main.ts', { PORT: String(port), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console') });
    await waitForApi(otherApi);
  });
  afterAll(async () => {
    stream?.close();
    await killChildren();
    await worker?.close();
    await ctx?.deps.redis.del(POINTS_STORED_STREAM(ctx.env.QUEUE_PREFIX));
    await ctx?.close();
  });

  it('a stream on one api receives the points posted through another', async () => {
    const [a] = plant.instrumentIds as [number];
    const opened = await SseStream.open(otherApi, `/api/v1/live?instrument_ids=${a}`, plant.viewer.token);
    if (!(opened instanceof SseStream)) throw new Error(`refused: ${opened.status} ${await opened.text()}`);
    stream = opened;
    await stream.waitFor((event) => event.event === 'ready');
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token,
      payload: { data: [{ instrument_id: a, measured_at: T0, float_value: 12.5 }] },
    });
    expect(response.statusCode, response.body).toBe(202);
    expect((await waitForJobState(ctx, plant.editor.token, response.headers.location!.split('/').pop()!)).state).toBe('completed');
    const at = await stream.waitFor((event) => event.event === 'points');
    expect((stream.events[at]!.data as LivePoints).readings).toEqual([{ instrument_id: a, ts: T0, value: 12.5 }]);
  });
});
