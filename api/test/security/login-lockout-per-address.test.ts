/**
 * Lockout an outsider cannot use: five wrong passwords from any address used to lock an account for everyone, so an
 * outsider could keep its owner (an admin, the superuser) out for good. Failures now block the address
 * that made them, for that account; a campaign from many addresses meets a progressive delay, never a
 * lock; and the owner's mailed reset link always gets in and clears every count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { latestOutboxLink } from '../auth/outbox.ts';
import { accountDelaySeconds } from '../../src/auth/login-throttle.ts';

const PASSWORD = 'Right-Pass-Word1!';
const NEW_PASSWORD = 'Newer-Pass-Word2!';
const WRONG = 'Wrong-Pass-Word1!';
const ACCOUNT_THRESHOLD = 12;

describe('login lockout that an outsider cannot use', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({
      DEV_OUTBOX: 'true',
      LOGIN_MAX_FAILURES: '5',
      LOGIN_WINDOW_MINUTES: '15',
      LOGIN_ACCOUNT_MAX_FAILURES: String(ACCOUNT_THRESHOLD),
      // Long enough that no pace of this test can outlast it: the refusals below do not depend on timing.
      LOGIN_ACCOUNT_DELAY_MIN_SECONDS: '600',
      LOGIN_ACCOUNT_DELAY_MAX_SECONDS: '3600',
    });
  });
  afterAll(async () => { await ctx.close(); });

  const login = (email: string, password: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress, headers });

  async function signup(email: string): Promise<number> {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email, password: PASSWORD, name: 'Owner' } });
    expect(response.statusCode).toBe(201);
    return response.json().user.id as number;
  }

  async function failureRows(userId: number): Promise<number> {
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM login_failures WHERE user_id = $1', [userId]);
    return rows[0].n as number;
  }

  it('blocks the address that made five failures, for that account only; the owner elsewhere signs in', async () => {
    await signup('owner-a@example.test');
    await signup('bystander@example.test');
    for (let attempt = 1; attempt <= 4; attempt += 1) {
      expect((await login('owner-a@example.test', WRONG, '203.0.113.10')).statusCode).toBe(401);
    }
    const fifth = await login('owner-a@example.test', WRONG, '203.0.113.10');
    expect(fifth.statusCode).toBe(429);
    expect(fifth.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });
    expect(fifth.headers['retry-after']).toBeDefined();

    // Address A is blocked for this account, even with the right password...
    const rightFromA = await login('owner-a@example.test', PASSWORD, '203.0.113.10');
    expect(rightFromA.statusCode).toBe(429);
    expect(rightFromA.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });
    // ...but not for other accounts,
    expect((await login('bystander@example.test', PASSWORD, '203.0.113.10')).statusCode).toBe(200);
    // and the owner at address B signs in.
    expect((await login('owner-a@example.test', PASSWORD, '198.51.100.20')).statusCode).toBe(200);
    // The owner's success does not hand A a fresh budget.
    expect((await login('owner-a@example.test', PASSWORD, '203.0.113.10')).statusCode).toBe(429);
  });

  it('does not believe X-Forwarded-For without TRUST_PROXY: rotating it does not escape the block', async () => {
    await signup('owner-xff@example.test');
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= 7; attempt += 1) {
      const answer = await login('owner-xff@example.test', WRONG, '203.0.113.30', { 'x-forwarded-for': `192.0.2.${attempt}` });
      statuses.push(answer.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429]);
    expect((await login('owner-xff@example.test', PASSWORD, '198.51.100.30')).statusCode).toBe(200);
  });

  it('slows a flood from many addresses past the account-wide threshold, verifying no more than it; the reset link still gets the owner in', async () => {
    const userId = await signup('owner-flood@example.test');
    // 40 concurrent guesses, each from its own address (so none meets the per-address block).
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => login('owner-flood@example.test', WRONG, `10.44.0.${index + 1}`)));
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(ACCOUNT_THRESHOLD);
    const delayed = answers.filter((answer) => answer.statusCode === 429);
    expect(delayed).toHaveLength(40 - ACCOUNT_THRESHOLD);
    for (const answer of delayed) {
      expect(answer.json().error).toMatch(/^Too many failed sign-ins for this account\. Please try again in .+, or reset your password/);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Exactly the verified guesses were recorded: refusals are not counted, nor verified.
    expect(await failureRows(userId)).toBe(ACCOUNT_THRESHOLD);

    // The owner, from a fresh address, is slowed as well: a delay, not a lock...
    const ownerTry = await login('owner-flood@example.test', PASSWORD, '198.51.100.40');
    expect(ownerTry.statusCode).toBe(429);
    expect(ownerTry.json().error).toMatch(/reset your password/);

    // ...and the mailed reset link works whatever the counts, and clears them.
    const forgot = await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'owner-flood@example.test' }, remoteAddress: '198.51.100.40' });
    expect(forgot.statusCode).toBe(200);
    const mail = await latestOutboxLink(ctx, 'owner-flood@example.test');
    const reset = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: mail.token, password: NEW_PASSWORD }, remoteAddress: '198.51.100.40' });
    expect(reset.statusCode).toBe(200);
    expect(await failureRows(userId)).toBe(0);
    expect((await login('owner-flood@example.test', NEW_PASSWORD, '198.51.100.40')).statusCode).toBe(200);
  });

  it('doubles the account-wide delay with each failure past the threshold, up to its cap', () => {
    const settings = { accountDelayMinSeconds: 1, accountDelayMaxSeconds: 60 };
    const delays = Array.from({ length: 10 }, (_, beyond) => accountDelaySeconds(beyond, settings));
    expect(delays).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60, 60]);
  });
});

describe('login lockout behind a trusted proxy', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext({ TRUST_PROXY: '1', LOGIN_MAX_FAILURES: '5' }); });
  afterAll(async () => { await ctx.close(); });

  // Every request arrives from the proxy's address; the client is the one it names.
  const login = (email: string, password: string, client: string) => ctx.request({
    method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: '10.0.0.5', headers: { 'x-forwarded-for': client },
  });

  it('blocks the client the proxy names, not the proxy: another client of the same proxy signs in', async () => {
    const signup = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'behind-proxy@example.test', password: PASSWORD, name: 'Owner' } });
    expect(signup.statusCode).toBe(201);
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= 6; attempt += 1) statuses.push((await login('behind-proxy@example.test', WRONG, '203.0.113.50')).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    expect((await login('behind-proxy@example.test', PASSWORD, '203.0.113.50')).statusCode).toBe(429);
    expect((await login('behind-proxy@example.test', PASSWORD, '198.51.100.60')).statusCode).toBe(200);
  });
});
