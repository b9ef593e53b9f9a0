/**
 * Redis fit for queues: health reports the persistence and eviction policy it found, and an api
 * started for production on an evicting Redis refuses with a message saying what to change.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnRedis } from '../support/own-redis.ts';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { REPO_ROOT } from '../support/ingest.ts';

const PORT = Number(process.env.REDIS_FITNESS_PORT ?? 6407);

describe('Redis fit for queues', () => {
  const evicting = new OwnRedis(PORT, { 'maxmemory-policy': 'allkeys-lru', appendonly: 'yes' });
  let ctx: TestContext;
  beforeAll(async () => {
    await evicting.start();
    ctx = await createTestContext({ REDIS_URL: evicting.url });
  });
  afterAll(async () => {
    await ctx?.close();
    await evicting.close();
  });

  it('health reports the persistence and eviction policy of the Redis it uses', async () => {
    // Details are for superusers only.
    const superuser = await ctx.createUser({ organizationId: await ctx.createOrganization(), superuser: true });
    const response = await ctx.request({ method: 'GET', url: '/api/v1/health', token: superuser.token });
    expect(response.json().redis_config).toEqual({ appendonly: 'yes', save: '', maxmemory_policy: 'allkeys-lru', persistent: true, evicting: true });
  });

  it('a production api refuses to start on an evicting Redis, saying what to change', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/src/main.ts'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...Object.fromEntries(Object.entries(ctx.env).map(([name, value]) => [name, String(value)])), NODE_ENV: 'production', PORT: process.env.DURABILITY_API_PORT ?? '8205', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(78);
    expect(stderr).toContain('Redis at REDIS_URL uses maxmemory-policy allkeys-lru: it may evict queued jobs when full. Set maxmemory-policy noeviction');
  }, 60_000);
});
