/**
 * GET /api/v1/health tells anyone whether the service is up, and nothing more: which dependency
 * failed (with its driver's error text) and the queue counts are for a superuser's token only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createApiKey } from '../support/fixtures.ts';

describe('health details', () => {
  let ctx: TestContext;
  const tokens: Record<string, string | undefined> = {};

  beforeAll(async () => {
    ctx = await createTestContext();
    const organizationId = await ctx.createOrganization();
    tokens['no token'] = undefined;
    tokens['an unknown token'] = 'bp_not_a_token';
    tokens.viewer = (await ctx.createUser({ organizationId, role: 'viewer' })).token;
    tokens.admin = (await ctx.createUser({ organizationId, role: 'admin' })).token;
    tokens['an API key'] = await createApiKey(ctx, organizationId, 'editor');
  });
  afterAll(async () => { await ctx.close(); });

  it('answers only the overall status without a superuser token', async () => {
    for (const [who, token] of Object.entries(tokens)) {
      const response = await ctx.request({ method: 'GET', url: '/api/v1/health', token });
      expect(response.statusCode, who).toBe(200);
      expect(response.json(), who).toEqual({ status: 'ok' });
    }
  });

  it('shows dependencies and queue counts to a superuser', async () => {
    const superuser = await ctx.createUser({ organizationId: await ctx.createOrganization(), superuser: true });
    const response = await ctx.request({ method: 'GET', url: '/api/v1/health', token: superuser.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', clickhouse: 'ok', queues: { ingest: { waiting: 0, active: 0, failed: 0 } } });
  });
});
