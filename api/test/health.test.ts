import http from 'node:http';
import type { AddressInfo } from 'node:net';
import helmet from 'helmet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../src/app.ts';
import { createTestContext, type TestContext } from './support/test-context.ts';

describe('GET /api/v1/health', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext(); });
  afterAll(async () => { await ctx.close(); });

  it('answers ok with every dependency and queue counts to a superuser', async () => {
    const superuser = await ctx.createUser({ organizationId: await ctx.createOrganization(), superuser: true });
    const response = await ctx.request({ method: 'GET', url: '/api/v1/health', token: superuser.token });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', clickhouse: 'ok' });
    expect(body.queues.ingest).toEqual({ waiting: 0, active: 0, failed: 0 });
    expect(body.queues.audit).toEqual({ waiting: 0, active: 0, failed: 0 });
    expect(body.queues['ingest-bulk']).toEqual({ waiting: 0, active: 0, failed: 0 });
    expect(body.audit_outbox).toEqual({ pending: 0, oldest_seconds: 0 });
  });

  it('reports audit events waiting in the outbox', async () => {
    const organizationId = await ctx.createOrganization();
    const admin = await ctx.createUser({ organizationId, role: 'admin' });
    await ctx.request({ method: 'POST', url: '/api/v1/facilities', token: admin.token, payload: { name: 'Hall', type: 'pilot plant' } });
    // No audit-worker runs here, so the event stays in the outbox.
    const superuser = await ctx.createUser({ organizationId, superuser: true });
    const body = (await ctx.request({ method: 'GET', url: '/api/v1/health', token: superuser.token })).json();
    expect(body.audit_outbox.pending).toBe(1);
    expect(body.audit_outbox.oldest_seconds).toBeGreaterThanOrEqual(0);
  });

  it('sends security headers with a content security policy', async () => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/health' });
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends every header helmet itself sets, on answers of every kind', async () => {
    // helmet run as a middleware of a plain server, with the api's policy.
    const middleware = helmet({ contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY }, crossOriginEmbedderPolicy: false });
    const server = http.createServer((request, response) => middleware(request, response, () => response.end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fromHelmet = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await new Promise((resolve) => server.close(resolve));
    const expected = Object.fromEntries([...fromHelmet.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)));
    expect(Object.keys(expected).length).toBeGreaterThan(8);
    const answers = [
      await ctx.request({ method: 'GET', url: '/api/v1/health' }),
      await ctx.request({ method: 'GET', url: '/api/v1/does-not-exist' }),
      await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', payload: { data: [] } }),
    ];
    for (const answer of answers) expect(answer.headers).toMatchObject(expected);
  });

  it('answers unknown api paths with a JSON 404', async () => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/does-not-exist' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Not found' });
  });
});
