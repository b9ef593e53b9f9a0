/**
 * Health follows its dependencies while the product keeps running: Redis or ClickHouse going away
 * turns GET /api/v1/health into a 503 naming it, and their return brings it back to 200 on the same
 * app instance. The real services are shared with other tests running in parallel, so the outage is
 * simulated with a TCP proxy in front of each one that this test stops and starts again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { OutageProxy } from '../support/outage-proxy.ts';

function upstreamOf(serviceUrl: string, defaultPort: number): { host: string; port: number } {
  const url = new URL(serviceUrl);
  return { host: url.hostname, port: Number(url.port || defaultPort) };
}

interface HealthBody {
  status: string;
  error?: string;
  postgres: string;
  redis: string;
  clickhouse: string;
  queues: Record<string, { waiting: number; active: number; failed: number }>;
}

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';

describe('health recovery without a restart', () => {
  const redisProxy = new OutageProxy(upstreamOf(REDIS_URL, 6379));
  const clickhouseProxy = new OutageProxy(upstreamOf(CLICKHOUSE_URL, 8123));
  let ctx: TestContext;
  /** The details (which dependency, queue counts) are for a superuser. */
  let superuserToken: string;

  async function health(): Promise<{ statusCode: number; body: HealthBody }> {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/health', token: superuserToken });
    return { statusCode: response.statusCode, body: response.json() as HealthBody };
  }

  /**
   * Polls health until it answers the expected status code (bounded: 60 tries, 250 ms apart). The
   * other parts are not asserted during an outage: on a loaded machine a slow check may time out.
   */
  async function healthUntil(statusCode: number): Promise<{ statusCode: number; body: HealthBody }> {
    let last = await health();
    for (let attempt = 0; attempt < 60 && last.statusCode !== statusCode; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      last = await health();
    }
    return last;
  }

  beforeAll(async () => {
    await redisProxy.start();
    await clickhouseProxy.start();
    ctx = await createTestContext({
      REDIS_URL: redisProxy.urlFor(REDIS_URL),
      CLICKHOUSE_URL: clickhouseProxy.urlFor(CLICKHOUSE_URL),
    });
    superuserToken = (await ctx.createUser({ organizationId: await ctx.createOrganization(), superuser: true })).token;
  });

  afterAll(async () => {
    // Both proxies must be up again so the context can drop its queues and databases.
    if (!redisProxy.running) await redisProxy.start();
    if (!clickhouseProxy.running) await clickhouseProxy.start();
    await ctx?.close();
    await redisProxy.stop();
    await clickhouseProxy.stop();
  });

  it('is ok while every dependency answers through the proxies', async () => {
    const { statusCode, body } = await healthUntil(200);
    expect(statusCode).toBe(200);
    expect(body).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', clickhouse: 'ok' });
  });

  it('answers 503 naming redis while Redis is down, and ok again once it is back', async () => {
    await redisProxy.stop();
    const down = await healthUntil(503);
    expect(down.statusCode).toBe(503);
    expect(down.body.redis).toMatch(/^down/);
    expect(down.body.error).toContain('redis');
    expect(down.body.status).toBe('degraded');
    // Without a token: the status only.
    const anonymous = await ctx.request({ method: 'GET', url: '/api/v1/health' });
    if (anonymous.statusCode === 503) expect(anonymous.json()).toEqual({ status: 'degraded', error: 'Service unavailable' });

    await redisProxy.start();
    const back = await healthUntil(200);
    expect(back.statusCode).toBe(200);
    expect(back.body).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', clickhouse: 'ok' });
    expect(back.body.queues.ingest).toEqual({ waiting: 0, active: 0, failed: 0 });
    expect(back.body.error).toBeUndefined();
  });

  it('answers 503 naming clickhouse while ClickHouse is down, and ok again once it is back', async () => {
    await clickhouseProxy.stop();
    const down = await healthUntil(503);
    expect(down.statusCode).toBe(503);
    expect(down.body.clickhouse).toMatch(/^down/);
    expect(down.body.error).toContain('clickhouse');
    expect(down.body.status).toBe('degraded');

    await clickhouseProxy.start();
    const back = await healthUntil(200);
    expect(back.statusCode).toBe(200);
    expect(back.body).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', clickhouse: 'ok' });
  });
});
