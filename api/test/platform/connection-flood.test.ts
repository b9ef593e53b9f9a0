/**
 * A thousand clients connecting in the same moment while the api is busy (here: stopped outright)
 * are all answered. The kernel completes their handshakes and holds them until the api accepts them;
 * with Node's default listen backlog (511) the rest of the handshakes were dropped, clients waited
 * 1 s, 3 s, 7 s to retry, and some connections ended reset: feeds posting every second saw failed posts.
 */
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { exited, freePort, killChildren, spawnProcess, waitForApi } from '../support/pipeline.ts';

const CLIENTS = 1_000;
/** How long the clients get to connect: far more than handshakes with a stopped process take, less than a dropped one's first retry leaves. */
const CONNECT_WINDOW_MS = 3_000;

describe('a flood of connections', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await killChildren();
    await ctx.close();
  });

  it('made while the api cannot accept them are all held by the kernel and answered once it can', async () => {
    const port = await freePort();
    const api = spawnProcess(ctx, 'api/src/main.ts', { PORT: String(port), HOST: '127.0.0.1', CONSOLE_DIST: path.join(os.tmpdir(), 'bp-no-console') });
    await waitForApi(`http://127.0.0.1:${port}`);
    const sockets: net.Socket[] = [];
    api.kill('SIGSTOP');
    try {
      let connected = 0;
      const answers = Array.from({ length: CLIENTS }, () => new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          connected += 1;
          // A route that answers without touching a database: the api's accept is under test, not its work.
          socket.write('GET /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
        });
        sockets.push(socket);
        let received = '';
        socket.setEncoding('latin1');
        socket.on('data', (text: string) => { received += text; });
        socket.on('error', (error) => resolve(`error: ${error.message}`));
        socket.on('close', () => resolve(received.split('\r\n')[0] ?? ''));
      }));
      const deadline = Date.now() + CONNECT_WINDOW_MS;
      while (connected < CLIENTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      // Connected while the api was stopped: the kernel held every one of them.
      expect(connected).toBe(CLIENTS);
      api.kill('SIGCONT');
      const statusLines = await Promise.all(answers);
      const counts = new Map<string, number>();
      for (const line of statusLines) counts.set(line, (counts.get(line) ?? 0) + 1);
      expect(Object.fromEntries(counts)).toEqual({ 'HTTP/1.1 401 Unauthorized': CLIENTS });
    } finally {
      api.kill('SIGCONT');
      for (const socket of sockets) socket.destroy();
      api.kill('SIGKILL');
      await exited(api);
    }
  });
});
