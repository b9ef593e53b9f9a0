/**
 * Unread streamed answers against the listening api: clients that send an export request and then stop
 * reading (a paused socket). Each holds a slot of its organisation while it streams; past
 * STREAMS_PER_ORGANIZATION (or with STREAM_BUFFERED_BYTES_PER_ORGANIZATION unsent) the next streamed
 * answer is refused with 429, a client that leaves frees its slot, and a stream whose client takes
 * nothing for STREAM_STALL_TIMEOUT_MS is ended. Asserted on the budget's counts (slots, bytes held),
 * the rows the export read before it ended (its audit event), and the bytes the client received.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { startWorker } from '../support/ingest.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';
import { STREAM_MESSAGES, streamBudgetOf, WAITING_PER_SLOT } from '../../src/platform/stream-budget.ts';

const T0 = Date.UTC(2024, 6, 1);
/** About 70 bytes a row of CSV long: some 14 MB, far more than the kernel's socket buffers hold for a client that reads nothing. */
const POINTS = 200_000;
/** What one stalled stream may hold in the api: the chunk the socket did not take and the one pulled after it. */
const ONE_STREAM_HOLDS_AT_MOST = 1024 * 1024;

interface Seeded {
  ctx: TestContext;
  worker: IngestWorker;
  plant: Plant;
  exportPath: string;
  port: number;
}

async function seed(overrides: Record<string, string>): Promise<Seeded> {
  const ctx = await createTestContext(overrides);
  const worker = startWorker(ctx);
  const plant = await createPlant(ctx, 1);
  const instrumentId = plant.instrumentIds[0]!;
  const data = Array.from({ length: POINTS }, (_, index) => ({ measured_at: T0 + index * 1000, instrument_id: instrumentId, float_value: index % 1000 }));
  const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data }, headers: { prefer: 'return=minimal' } });
  expect(posted.statusCode, posted.body).toBe(200);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  return { ctx, worker, plant, port, exportPath: `/api/v1/exports/time-series?instrument_ids=${instrumentId}&format=csv-long` };
}

interface PausedClient {
  socket: net.Socket;
  /** The start of the answer the client took before it stopped reading. */
  head: string;
}

/** Sends the request, takes the first bytes of the answer and stops reading (the socket stays open). */
function pausedClient(port: number, path: string, token: string): Promise<PausedClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    });
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, head: chunk.toString('latin1', 0, Math.min(chunk.length, 200)) });
    });
  });
}

/** Reads the rest of a client's answer until the server closes the connection; the bytes received. */
function drained(client: PausedClient): Promise<{ bytes: number; text: string }> {
  return new Promise((resolve) => {
    let bytes = 0;
    let tail = '';
    client.socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-64);
    });
    client.socket.once('close', () => resolve({ bytes, text: tail }));
    client.socket.resume();
  });
}

/** Polls a count of the api until it holds (work counted, not time waited). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The audit event of the export that ended before it was whole (polled: it is written once the stream ended). */
async function cutExport(ctx: TestContext): Promise<{ rows: number; complete: boolean; points: number }> {
  for (;;) {
    const { rows } = await ctx.deps.pg.query(
      `SELECT event FROM audit_outbox WHERE event->>'event_type' = 'time_series.exported' AND event->'changes'->'after'->>'complete' = 'false'`);
    if (rows.length > 0) return rows[0].event.changes.after as { rows: number; complete: boolean; points: number };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('streamed answers per organisation: slots', () => {
  let seeded: Seeded;
  const clients: PausedClient[] = [];

  beforeAll(async () => {
    seeded = await seed({ STREAMS_PER_ORGANIZATION: '2', STREAM_STALL_TIMEOUT_MS: '600000' });
  }, 180_000);

  afterAll(async () => {
    for (const client of clients) client.socket.destroy();
    await seeded?.worker.close();
    await seeded?.ctx.close();
  });

  it('holds a slot per unread export, refuses the next export with 429, queues reads up to a bound, and frees the slot when the client leaves', async () => {
    const { ctx, plant, port, exportPath } = seeded;
    const budget = streamBudgetOf(ctx.deps);
    const token = plant.editor.token;
    clients.push(await pausedClient(port, exportPath, token), await pausedClient(port, exportPath, token));
    expect(clients.map((client) => client.head.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    await until(() => budget.usage(plant.organizationId).streams === 2 && budget.usage(plant.organizationId).bufferedBytes > 0);

    // Neither client reads: each stream holds only what the socket did not take and one chunk more.
    expect(budget.usage(plant.organizationId).bufferedBytes).toBeLessThanOrEqual(2 * ONE_STREAM_HOLDS_AT_MOST);

    for (const url of ['/api/v1/exports/records?entity=instruments', exportPath]) {
      const refused = await ctx.request({ method: 'GET', url, token });
      expect(refused.statusCode, url).toBe(429);
      expect(refused.json()).toEqual({ error: STREAM_MESSAGES.tooManyStreams(2) });
    }
    // Reads wait for a slot instead (a chart asks for each of its instruments at once), up to a bound.
    const readUrl = `/api/v1/time-series-data?instrument_id=${plant.instrumentIds[0]}&limit=10`;
    const waitingReads = Array.from({ length: 2 * WAITING_PER_SLOT }, () => ctx.request({ method: 'GET', url: readUrl, token }));
    await until(() => budget.usage(plant.organizationId).waiting === 2 * WAITING_PER_SLOT);
    const tooMany = await ctx.request({ method: 'GET', url: readUrl, token });
    expect(tooMany.statusCode).toBe(429);
    expect(tooMany.json()).toEqual({ error: STREAM_MESSAGES.tooManyWaiting(2 * WAITING_PER_SLOT) });
    // Another organisation has its own budget.
    const other = await createPlant(ctx, 1);
    const theirs = await ctx.request({ method: 'GET', url: '/api/v1/exports/records?entity=instruments', token: other.editor.token });
    expect(theirs.statusCode).toBe(200);

    // The first client leaves: its export stops reading, and its slot serves the waiting reads in turn.
    const gone = clients[0]!;
    gone.socket.destroy();
    const answers = await Promise.all(waitingReads);
    expect(answers.map((answer) => answer.statusCode)).toEqual(waitingReads.map(() => 200));
    expect(answers.every((answer) => (answer.json() as unknown[]).length === 10)).toBe(true);
    await until(() => budget.usage(plant.organizationId).streams === 1);
    expect(budget.usage(plant.organizationId).waiting).toBe(0);
    const admitted = await ctx.request({ method: 'GET', url: '/api/v1/exports/records?entity=instruments', token });
    expect(admitted.statusCode, admitted.body).toBe(200);
    await until(() => budget.usage(plant.organizationId).streams === 1);

    // The export's audit event, written once it ended: it read only part of the points before the client left.
    const cut = await cutExport(ctx);
    expect(cut.points).toBe(POINTS);
    expect(cut.rows).toBeLessThan(POINTS);
  }, 120_000);
});

describe('streamed answers per organisation: bytes and stalled clients', () => {
  let seeded: Seeded;

  beforeAll(async () => {
    seeded = await seed({ STREAMS_PER_ORGANIZATION: '10', STREAM_BUFFERED_BYTES_PER_ORGANIZATION: '1', STREAM_STALL_TIMEOUT_MS: '4000' });
  }, 180_000);

  afterAll(async () => {
    await seeded?.worker.close();
    await seeded?.ctx.close();
  });

  it('refuses a stream while the organisation holds its byte budget unsent, and ends a stream whose client stopped reading', async () => {
    const { ctx, plant, port, exportPath } = seeded;
    const budget = streamBudgetOf(ctx.deps);
    const token = plant.editor.token;
    const client = await pausedClient(port, exportPath, token);
    await until(() => budget.usage(plant.organizationId).bufferedBytes > 0);
    const refused = await ctx.request({ method: 'GET', url: '/api/v1/exports/records?entity=instruments', token });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: STREAM_MESSAGES.tooManyBytes(1) });

    // Nobody reads: the stream is ended, its slot and bytes given back.
    await until(() => budget.usage(plant.organizationId).stalled === 1);
    await until(() => budget.usage(plant.organizationId).streams === 0);
    expect(budget.usage(plant.organizationId).bufferedBytes).toBe(0);
    const received = await drained(client);
    // The client got part of the export, and no end of a chunked answer: it was cut.
    expect(received.bytes).toBeLessThan(POINTS * 60);
    expect(received.text.endsWith('0\r\n\r\n')).toBe(false);

    expect((await cutExport(ctx)).rows).toBeLessThan(POINTS);

    const admitted = await ctx.request({ method: 'GET', url: '/api/v1/exports/records?entity=instruments', token });
    expect(admitted.statusCode, admitted.body).toBe(200);
  }, 120_000);
});
