/**
 * Slow and stalled clients against a real listening server, over raw sockets: a bulk post that sends
 * a few bytes and stays open must not hold up another organisation's feed, every way a post can end
 * (dropped while waiting, dropped while its body is read, dropped after it was sent, timed out) gives
 * its share of the bulk byte budget back, and a stalled request or header answers 408.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 6, 1);
const REQUEST_TIMEOUT_MS = 4_000;
const HEADERS_TIMEOUT_MS = 2_000;
/** Far below any timeout above: a post that waited on a stalled one would miss it. */
const PROMPT_MS = 1_500;

describe('stalled clients', () => {
  let ctx: TestContext;
  let attacker: Plant;
  let victim: Plant;
  let port: number;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    ctx = await createTestContext({
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    });
    attacker = await createPlant(ctx, 1);
    victim = await createPlant(ctx, 1);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.app.server.address() as AddressInfo).port;
    // The first post starts the parsing threads: not what these tests time.
    expect(await post(victim, onePoint(victim, 0), 60_000)).toBe(202);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await ctx.close();
  });

  const onePoint = (plant: Plant, second: number) =>
    Buffer.from(JSON.stringify({ data: [{ ts: T0 + second * 1000, instrument_id: plant.instrumentIds[0], value: second }] }));

  /**
   * A normal bulk post over a fresh connection; its status, or 0 if it was not answered in `withinMs`.
   * Sent chunked (no length), it takes its organisation's whole share of the budget.
   */
  function post(plant: Plant, body: Buffer, withinMs: number, chunked = false): Promise<number> {
    return new Promise((resolve) => {
      const request = http.request({
        host: '127.0.0.1', port, method: 'POST', path: '/api/v1/time-series-data/bulk', agent: false,
        headers: { authorization: `Bearer ${plant.editor.token}`, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': body.length }) },
      });
      const timer = setTimeout(() => { request.destroy(); resolve(0); }, withinMs);
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => { clearTimeout(timer); resolve(response.statusCode ?? 0); });
      });
      request.on('error', () => { clearTimeout(timer); resolve(0); });
      request.end(body);
    });
  }

  /** Opens a raw connection and writes `text`; everything the server sends back is collected. */
  async function rawConnection(text: string): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
    const socket = net.connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    let data = '';
    socket.on('data', (chunk) => { data += chunk.toString('latin1'); });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(text);
    return { socket, received: () => data, closed };
  }

  const chunkedHead = (plant: Plant) =>
    `POST /api/v1/time-series-data/bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${plant.editor.token}\r\n` +
    'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
  const fiveBytes = '5\r\n{"dat\r\n';
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('a chunked post that sends five bytes and stays open does not delay another organisation', async () => {
    const stalled = [await rawConnection(chunkedHead(attacker) + fiveBytes), await rawConnection(chunkedHead(attacker) + fiveBytes)];
    await pause(200);
    expect(await post(victim, onePoint(victim, 1), PROMPT_MS)).toBe(202);
    for (const connection of stalled) connection.socket.destroy();
  });

  it('connections dropped at every stage leave the budget whole', async () => {
    // Admitted, its body being read: dropped after five bytes.
    const reading = await rawConnection(chunkedHead(attacker) + fiveBytes);
    // Waiting behind it, unread: dropped before a byte of body.
    const waiting = await rawConnection(chunkedHead(attacker));
    // Waiting with its whole (small) body already sent, then dropped.
    const body = onePoint(attacker, 2);
    const sent = await rawConnection(
      `POST /api/v1/time-series-data/bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${attacker.editor.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.toString()}`);
    // Headers half sent.
    const halfHead = await rawConnection(chunkedHead(attacker).slice(0, 60));
    await pause(200);
    for (const connection of [reading, waiting, sent, halfHead]) connection.socket.destroy();
    await pause(200);

    // Posts that fail (a body that is no JSON, an instrument of another organisation) end too.
    expect(await post(attacker, Buffer.from('{"data":[{'), PROMPT_MS)).toBe(400);
    expect(await post(attacker, onePoint(victim, 3), PROMPT_MS)).toBe(400);

    // A chunked post takes the organisation's whole share: only granted if nothing of it is held.
    expect(await post(attacker, onePoint(attacker, 3), PROMPT_MS, true)).toBe(202);
    expect(await post(victim, onePoint(victim, 3), PROMPT_MS, true)).toBe(202);
    const statuses = await Promise.all([4, 5, 6, 7].map((second) => post(attacker, onePoint(attacker, second), PROMPT_MS * 2)));
    expect(statuses).toEqual([202, 202, 202, 202]);
  });

  it('answers 408 to a body that stalls, and gives its budget back', async () => {
    const stalled = await rawConnection(chunkedHead(attacker) + fiveBytes);
    await stalled.closed;
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(stalled.received()).toContain('"error"');
    expect(await post(attacker, onePoint(attacker, 8), PROMPT_MS, true)).toBe(202);
  }, REQUEST_TIMEOUT_MS * 4);

  it('answers 408 to headers that never finish', async () => {
    const stalled = await rawConnection(chunkedHead(attacker).slice(0, 60));
    await stalled.closed;
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, HEADERS_TIMEOUT_MS * 8);
});
