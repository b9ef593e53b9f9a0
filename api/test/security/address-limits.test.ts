/**
 * One address spraying the account calls: guesses across many accounts (which the per-account lock
 * never sees), mass signups, reset-mail floods, reset and invitation token guessing, and API key
 * guessing. Each is refused with 429, a clear message and Retry-After once the address's budget is
 * spent, while another address is unaffected; two api processes on one Redis share the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createDeps, closeDeps } from '../../src/platform/deps.ts';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import type { App } from '../../src/platform/app-type.ts';

const LIMIT = 3;
const ATTACKER = '203.0.113.7';
const BYSTANDER = '198.51.100.20';

function expectRefusedForAddress(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(429);
  expect(response.json().error).toMatch(/^Too many requests from your address\. Please try again in .+\.$/);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
}

describe('per-address limits on the account calls', () => {
  let ctx: TestContext;
  let secondProcess: App;
  let secondDeps: ReturnType<typeof createDeps>;
  beforeAll(async () => {
    ctx = await createTestContext({
      RATE_LIMIT_SIGN_IN_PER_ADDRESS: String(LIMIT),
      RATE_LIMIT_SIGNUP_PER_ADDRESS: String(LIMIT),
      RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS: String(LIMIT),
      RATE_LIMIT_BAD_TOKENS_PER_ADDRESS: String(LIMIT),
      RATE_LIMIT_WINDOW_MINUTES: '15',
    });
    // A second api process of the same deployment: same databases, same Redis, same prefix.
    secondDeps = createDeps(ctx.env, createLogger('second-api', ctx.env.LOG_LEVEL));
    secondProcess = await buildApp(secondDeps);
    await secondProcess.ready();
  });
  afterAll(async () => {
    await secondProcess.close();
    await closeDeps(secondDeps);
    await ctx.close();
  });

  const post = (url: string, payload: Record<string, unknown>, remoteAddress: string) => ctx.request({ method: 'POST', url, payload, remoteAddress });

  it('refuses sign-in guesses spread over many accounts from one address, in every api process', async () => {
    for (let attempt = 0; attempt < LIMIT - 1; attempt += 1) {
      expect((await post('/api/v1/auth/login', { email: `spray${attempt}@example.test`, password: 'Guess-Pass-Word1!' }, ATTACKER)).statusCode).toBe(401);
    }
    const viaSecond = await secondProcess.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'spray-x@example.test', password: 'Guess-Pass-Word1!' }, remoteAddress: ATTACKER });
    expect(viaSecond.statusCode).toBe(401);
    expectRefusedForAddress(await post('/api/v1/auth/login', { email: 'spray-y@example.test', password: 'Guess-Pass-Word1!' }, ATTACKER));
    expectRefusedForAddress(await secondProcess.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'spray-z@example.test', password: 'x' }, remoteAddress: ATTACKER }));
    expect((await post('/api/v1/auth/login', { email: 'spray0@example.test', password: 'Guess-Pass-Word1!' }, BYSTANDER)).statusCode).toBe(401);
  });

  it('refuses mass signups from one address', async () => {
    for (let attempt = 0; attempt < LIMIT; attempt += 1) {
      expect((await post('/api/v1/auth/signup', { email: `bulk${attempt}@example.test`, password: 'Bulk-Pass-Word1!', name: 'Bulk' }, ATTACKER)).statusCode).toBe(201);
    }
    expectRefusedForAddress(await post('/api/v1/auth/signup', { email: 'bulk-next@example.test', password: 'Bulk-Pass-Word1!', name: 'Bulk' }, ATTACKER));
    expect((await post('/api/v1/auth/signup', { email: 'honest@example.test', password: 'Bulk-Pass-Word1!', name: 'Honest' }, BYSTANDER)).statusCode).toBe(201);
  });

  it('refuses forgot-password floods from one address', async () => {
    for (let attempt = 0; attempt < LIMIT; attempt += 1) {
      expect((await post('/api/v1/auth/forgot-password', { email: `flood${attempt}@example.test` }, ATTACKER)).statusCode).toBe(200);
    }
    expectRefusedForAddress(await post('/api/v1/auth/forgot-password', { email: 'flood-next@example.test' }, ATTACKER));
  });

  it('refuses reset and invitation token guessing from one address', async () => {
    for (let attempt = 0; attempt < LIMIT; attempt += 1) {
      expect((await post('/api/v1/auth/reset-password', { token: `guess-${attempt}`, password: 'Taken-Over-Pass1!' }, ATTACKER)).statusCode).toBe(400);
    }
    expectRefusedForAddress(await post('/api/v1/auth/reset-password', { token: 'guess-next', password: 'Taken-Over-Pass1!' }, ATTACKER));
    expect((await post('/api/v1/auth/reset-password', { token: 'guess-other', password: 'Taken-Over-Pass1!' }, BYSTANDER)).statusCode).toBe(400);
  });

  it('refuses API key guessing from one address while a valid key from it keeps working', async () => {
    const organizationId = await ctx.createOrganization('Feeds');
    const admin = await ctx.createUser({ organizationId, role: 'admin' });
    const created = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: admin.token, payload: { name: 'Real feed', role: 'editor' } });
    const realKey = created.json().key as string;
    const guess = (remoteAddress: string, attempt: number) => ctx.request({
      method: 'GET', url: `/api/v1/organizations/${organizationId}`, remoteAddress,
      headers: { authorization: `Bearer bpk_${'A'.repeat(40)}${attempt}` },
    });
    for (let attempt = 0; attempt < LIMIT; attempt += 1) expect((await guess(ATTACKER, attempt)).statusCode).toBe(401);
    expectRefusedForAddress(await guess(ATTACKER, 99));
    expect((await guess(BYSTANDER, 100)).statusCode).toBe(401);
    const withRealKey = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${organizationId}`, remoteAddress: ATTACKER, headers: { authorization: `Bearer ${realKey}` } });
    expect(withRealKey.statusCode).toBe(200);
  });
});
