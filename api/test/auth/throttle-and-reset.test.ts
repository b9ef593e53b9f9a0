import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { FORGOT_PASSWORD_MESSAGE, PASSWORD_RESET_MESSAGE } from '../../src/auth/routes.ts';
import { latestOutboxLink, outboxMessages } from './outbox.ts';

const PASSWORD = 'Strong-Pass1!';

describe('login throttling and password reset', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext({ LOGIN_WINDOW_MINUTES: '15', PUBLIC_URL: 'https://app.example.test', DEV_OUTBOX: 'true' }); });
  afterAll(async () => { await ctx.close(); });

  const login = (email: string, password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });

  async function signup(email: string) {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email, password: PASSWORD, name: 'Test User' } });
    expect(response.statusCode).toBe(201);
    return response.json() as { token: string; user: { id: number } };
  }

  it('blocks an account with 429 at the 5th failure, also for the right password, and lifts the block after the window', async () => {
    await signup('throttle@example.test');
    for (let attempt = 1; attempt < ctx.env.LOGIN_MAX_FAILURES; attempt += 1) {
      const response = await login('throttle@example.test', 'Wrong-Pass1!');
      expect(response.statusCode, `attempt ${attempt}`).toBe(401);
    }
    const fifth = await login('throttle@example.test', 'Wrong-Pass1!');
    expect(fifth.statusCode).toBe(429);
    expect(fifth.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });
    const blockedRight = await login('THROTTLE@example.test', PASSWORD);
    expect(blockedRight.statusCode).toBe(429);
    expect(blockedRight.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });

    // Let the window pass: the failures are moved back in time instead of the test sleeping 15 minutes.
    await ctx.deps.pg.query(`UPDATE login_failures SET failed_at = failed_at - interval '14 minutes' WHERE email = 'throttle@example.test'`);
    expect((await login('throttle@example.test', PASSWORD)).statusCode).toBe(429);
    await ctx.deps.pg.query(`UPDATE login_failures SET failed_at = failed_at - interval '2 minutes' WHERE email = 'throttle@example.test'`);
    const lifted = await login('throttle@example.test', PASSWORD);
    expect(lifted.statusCode).toBe(200);
    expect(lifted.json().user.email).toBe('throttle@example.test');
  });

  it('throttles unknown emails the same way, so the answers never reveal whether an account exists', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < ctx.env.LOGIN_MAX_FAILURES + 1; attempt += 1) {
      statuses.push((await login('ghost@example.test', 'Wrong-Pass1!')).statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
  });

  it('resets the failure count on a successful login', async () => {
    await signup('reset-count@example.test');
    for (let attempt = 0; attempt < ctx.env.LOGIN_MAX_FAILURES - 1; attempt += 1) {
      expect((await login('reset-count@example.test', 'Wrong-Pass1!')).statusCode).toBe(401);
    }
    expect((await login('reset-count@example.test', PASSWORD)).statusCode).toBe(200);
    const { rowCount } = await ctx.deps.pg.query(`SELECT 1 FROM login_failures WHERE email = 'reset-count@example.test'`);
    expect(rowCount).toBe(0);
    for (let attempt = 0; attempt < ctx.env.LOGIN_MAX_FAILURES - 1; attempt += 1) {
      expect((await login('reset-count@example.test', 'Wrong-Pass1!')).statusCode).toBe(401);
    }
  });

  it('answers forgot-password the same for known and unknown emails and mails a single-use reset link', async () => {
    const { token: oldSession } = await signup('forgot@example.test');
    const known = await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'Forgot@example.test' } });
    const unknown = await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'nobody@example.test' } });
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.json()).toEqual({ message: FORGOT_PASSWORD_MESSAGE });
    expect(unknown.json()).toEqual(known.json());
    expect(await outboxMessages(ctx, 'nobody@example.test')).toEqual([]);

    const mail = await latestOutboxLink(ctx, 'forgot@example.test');
    expect(mail.link.startsWith('https://app.example.test/reset-password?token=')).toBe(true);
    expect(mail.body).toContain(mail.link);
    const { rows } = await ctx.deps.pg.query('SELECT token_hash FROM password_reset_tokens');
    expect(rows.map((row) => row.token_hash)).not.toContain(mail.token);

    const weak = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: mail.token, password: 'weak' } });
    expect(weak.statusCode).toBe(400);
    expect(weak.json()).toEqual({ error: PASSWORD_REQUIREMENTS_MESSAGE });

    const reset = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: mail.token, password: 'Brand-New-Pass2?' } });
    expect(reset.statusCode).toBe(200);
    expect(reset.json()).toEqual({ message: PASSWORD_RESET_MESSAGE });

    // Every session of the user is revoked, the old password is gone, the new one works.
    expect((await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: oldSession })).statusCode).toBe(401);
    expect((await login('forgot@example.test', PASSWORD)).statusCode).toBe(401);
    expect((await login('forgot@example.test', 'Brand-New-Pass2?')).statusCode).toBe(200);

    const reused = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: mail.token, password: 'Another-Pass3$' } });
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toEqual({ error: AUTH_MESSAGES.invalidResetToken });
  });

  it('refuses unknown and expired reset tokens', async () => {
    const unknown = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: 'made-up', password: 'Brand-New-Pass2?' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({ error: AUTH_MESSAGES.invalidResetToken });
    const missing = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { password: 'Brand-New-Pass2?' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: `token: ${AUTH_MESSAGES.invalidResetToken}` });

    await signup('expired@example.test');
    await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'expired@example.test' } });
    const mail = await latestOutboxLink(ctx, 'expired@example.test');
    const { rows } = await ctx.deps.pg.query(`SELECT extract(epoch FROM expires_at - created_at) AS seconds FROM password_reset_tokens ORDER BY id DESC LIMIT 1`);
    expect(Math.round(Number(rows[0].seconds))).toBe(ctx.env.RESET_TOKEN_TTL_MINUTES * 60);
    await ctx.deps.pg.query(`UPDATE password_reset_tokens SET expires_at = now() - interval '1 second'`);
    const expired = await ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token: mail.token, password: 'Brand-New-Pass2?' } });
    expect(expired.statusCode).toBe(400);
    expect(expired.json()).toEqual({ error: AUTH_MESSAGES.invalidResetToken });
  });
});
