/**
 * A redis-server of the test's own, on a port of its own with its data in a temp folder: the only Redis
 * a test may flush, stop or kill (other tests and people share the default one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

export class OwnRedis {
  private child: ChildProcess | null = null;
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'bp-own-redis-'));

  /** `settings` override the defaults (no persistence, noeviction), e.g. { 'maxmemory-policy': 'allkeys-lru' }. */
  constructor(readonly port: number, private readonly settings: Record<string, string> = {}) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (empty: nothing is kept on disk, like the development machines' Redis). */
  async start(): Promise<void> {
    if (this.child) return;
    if (await portAnswers(this.port)) throw new Error(`port ${this.port} is taken: a test's own Redis needs it free`);
    const settings = { save: '', appendonly: 'no', 'maxmemory-policy': 'noeviction', ...this.settings };
    this.child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(this.port), '--dir', this.dir,
      ...Object.entries(settings).flatMap(([name, value]) => [`--${name}`, value])], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await portAnswers(this.port))) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** kill -9: whatever it held is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    }
  }

  async flushAll(): Promise<void> {
    const redis = new Redis(this.url, { maxRetriesPerRequest: 1 });
    try {
      await redis.flushall();
    } finally {
      redis.disconnect();
    }
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
