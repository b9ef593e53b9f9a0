import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('answers unknown api paths with a JSON 404', async () => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/does-not-exist' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Not found' });
  });
});
