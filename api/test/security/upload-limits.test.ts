/**
 * CSV upload limits hold per organisation, whoever uploads: a new API key or another user of the
 * same organisation gets no fresh allowance, other organisations are not affected, uploads being
 * received and spooled uploads waiting for the worker count as in flight, and spooled bytes are
 * bounded while the file streams. A dropped upload gives its place back.
 */
import { readdirSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIME_SERIES_MESSAGES } from '@bioprocess/shared/timeseries';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { multipartBody } from '../support/ingest.ts';
import { createApiKey, createPlant, createUnitOperation, type Plant } from '../support/fixtures.ts';

const SMALL_CSV = 'time,v\n2024-01-01T00:00:00Z,1\n';

interface Organisation { plant: Plant; unitOperation: number; tokens: string[] }

async function organisation(ctx: TestContext): Promise<Organisation> {
  const plant = await createPlant(ctx, 1);
  const unitOperation = await createUnitOperation(ctx, plant);
  const tokens = [plant.editor.token, await createApiKey(ctx, plant.organizationId, 'editor'), await createApiKey(ctx, plant.organizationId, 'editor')];
  return { plant, unitOperation, tokens };
}

function uploadBody(org: Organisation, content: string) {
  return multipartBody(
    { mapping: JSON.stringify({ timestamp_column: 'time', columns: [{ column: 'v', instrument_id: org.plant.instrumentIds[0] }] }) },
    { name: 'data.csv', content },
  );
}

async function upload(ctx: TestContext, org: Organisation, token: string, content = SMALL_CSV): Promise<{ statusCode: number; error?: string }> {
  const { body, contentType } = uploadBody(org, content);
  const response = await ctx.request({
    method: 'POST', url: `/api/v1/unit-operations/${org.unitOperation}/csv-uploads`, token,
    headers: { 'content-type': contentType }, payload: body,
  });
  return { statusCode: response.statusCode, error: response.json().error };
}

/** Waits, if needed, so that a few requests fall in the same one-minute window. */
async function startOfAMinute(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('upload rate per organisation', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '2', UPLOADS_IN_FLIGHT_PER_ORGANIZATION: '100' });
  });
  afterAll(async () => { await ctx.close(); });

  it('counts every user and API key of an organisation together', async () => {
    const attacker = await organisation(ctx);
    const other = await organisation(ctx);
    await startOfAMinute();
    const statuses = [];
    for (const token of attacker.tokens) statuses.push(await upload(ctx, attacker, token));
    expect(statuses.map((status) => status.statusCode)).toEqual([202, 202, 429]);
    expect(statuses[2]!.error).toBe(TIME_SERIES_MESSAGES.uploadRateLimited(2));
    expect((await upload(ctx, other, other.tokens[1]!)).statusCode).toBe(202);
  });
});

describe('uploads and spooled bytes in flight per organisation', () => {
  let ctx: TestContext;
  let port: number;
  beforeAll(async () => {
    // No ingest-worker runs: spooled uploads stay queued, i.e. in flight.
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000', UPLOADS_IN_FLIGHT_PER_ORGANIZATION: '2', UPLOAD_SPOOL_BYTES_PER_ORGANIZATION: String(3 * 1024 * 1024) });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => { await ctx.close(); });

  it('refuses a third upload while two are queued, whoever sends it', async () => {
    const org = await organisation(ctx);
    const other = await organisation(ctx);
    const statuses = [];
    for (const token of org.tokens) statuses.push(await upload(ctx, org, token));
    expect(statuses.map((status) => status.statusCode)).toEqual([202, 202, 429]);
    expect(statuses[2]!.error).toBe(TIME_SERIES_MESSAGES.uploadRateLimited(1000));
    expect((await upload(ctx, other, other.tokens[0]!)).statusCode).toBe(202);
  });

  it('counts an upload still being received, and gives its place back when it is dropped', async () => {
    const org = await organisation(ctx);
    expect((await upload(ctx, org, org.tokens[0]!)).statusCode).toBe(202);
    const { body, contentType } = uploadBody(org, SMALL_CSV.repeat(100));
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST /api/v1/unit-operations/${org.unitOperation}/csv-uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n`
      + `Authorization: Bearer ${org.tokens[1]}\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, body.length - 200));
    const receivingKey = `${ctx.env.QUEUE_PREFIX}:uploads:org:${org.plant.organizationId}:receiving`;
    expect(await waitFor(async () => (await ctx.deps.redis.zcard(receivingKey)) === 1)).toBe(true);
    expect((await upload(ctx, org, org.tokens[2]!)).statusCode).toBe(429);
    socket.destroy();
    expect(await waitFor(async () => (await ctx.deps.redis.zcard(receivingKey)) === 0)).toBe(true);
    expect((await upload(ctx, org, org.tokens[2]!)).statusCode).toBe(202);
  });

  it('stops an upload that takes the organisation over its spooled bytes, and keeps none of it', async () => {
    const org = await organisation(ctx);
    const twoMegabytes = `time,v\n${'2024-01-01T00:00:00Z,1\n'.repeat(100_000)}`;
    expect((await upload(ctx, org, org.tokens[0]!, twoMegabytes)).statusCode).toBe(202);
    const before = new Set(readdirSync(ctx.env.UPLOAD_DIR));
    const over = await upload(ctx, org, org.tokens[1]!, twoMegabytes);
    expect(over.statusCode).toBe(429);
    expect(over.error).toBe(TIME_SERIES_MESSAGES.uploadRateLimited(1000));
    // No new file stays: judged by name and given a moment, since the previous test's dropped upload
    // may still be spooling and removing its own file meanwhile (CI once counted it).
    const added = () => readdirSync(ctx.env.UPLOAD_DIR).filter((name) => !before.has(name));
    expect(await waitFor(async () => added().length === 0), `left in the spool folder: ${added().join(', ')}`).toBe(true);
    // A small file still fits beside the first.
    expect((await upload(ctx, org, org.tokens[2]!)).statusCode).toBe(202);
  });
});

async function waitFor(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
