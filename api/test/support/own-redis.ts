/**
 * A redis-server owned by one test file, on a port of its own with its data in a temporary folder, for
 * tests that flush, stop or restart Redis (never the shared Redis on 6379). Like the development
 * machines' Redis it keeps nothing on disk: a restart comes back empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export class OwnRedis {
  readonly url: string;
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'bp-own-redis-'));

  constructor(readonly port: number) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir,
      '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction',
    ], { stdio: 'ignore' });
    this.child = child;
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      const answered = await client.connect().then(() => client.ping()).then(() => true, () => false);
      client.disconnect();
      if (answered) return;
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Kills the server (SIGKILL: nothing is saved, as in a crash) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async flushAll(): Promise<void> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1 });
    try {
      await client.flushall();
    } finally {
      client.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
