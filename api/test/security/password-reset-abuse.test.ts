/**
 * Abuse of the password reset flow: a burst of forgot-password calls for one account (mail bombing,
 * and a pile of live links any of which hands over the account), and invalid resets that made the
 * server hash their passwords (CPU burnt before the token was even looked at).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { hashPassword } from '../../src/auth/passwords.ts';
import { outboxMessages } from '../auth/outbox.ts';

const MAILS_PER_HOUR = 3;

describe('password reset abuse', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext({ DEV_OUTBOX: 'true', FORGOT_PASSWORD_MAILS_PER_HOUR: String(MAILS_PER_HOUR) }); });
  afterAll(async () => { await ctx.close(); });

  const forgot = (email: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email } });
  const reset = (token: string, password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/reset-password', payload: { token, password } });

  async function liveLinks(email: string): Promise<number> {
    const { rows } = await ctx.deps.pg.query(
      `SELECT count(*)::int AS live FROM password_reset_tokens t JOIN users u ON u.id = t.user_id
        WHERE lower(u.email) = lower($1) AND t.used_at IS NULL AND t.expires_at > now()`,
      [email],
    );
    return rows[0].live as number;
  }

  it('sends at most a few mails per account and hour for 20 parallel requests, and leaves one live link', async () => {
    const signup = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'bombed@example.test', password: 'Bombed-Pass1!', name: 'Bombed' } });
    expect(signup.statusCode).toBe(201);
    const answers = await Promise.all(Array.from({ length: 20 }, () => forgot('bombed@example.test')));
    expect(new Set(answers.map((answer) => answer.statusCode))).toEqual(new Set([200]));
    expect(await outboxMessages(ctx, 'bombed@example.test')).toHaveLength(MAILS_PER_HOUR);
    expect(await liveLinks('bombed@example.test')).toBe(1);
  });

  it('revokes the older link when a new one is sent', async () => {
    await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'twice@example.test', password: 'Twice-Pass1!', name: 'Twice' } });
    await forgot('twice@example.test');
    await forgot('twice@example.test');
    const [newer, older] = await outboxMessages(ctx, 'twice@example.test');
    const tokenOf = (link: string | null | undefined) => new URL(link!).searchParams.get('token')!;
    const stale = await reset(tokenOf(older?.link), 'Stale-Link-Pass1!');
    expect(stale.statusCode).toBe(400);
    expect(stale.json()).toEqual({ error: AUTH_MESSAGES.invalidResetToken });
    expect((await reset(tokenOf(newer?.link), 'Fresh-Link-Pass1!')).statusCode).toBe(200);
  });

  it('checks the token before hashing: invalid resets cost far less CPU than hashing their passwords', async () => {
    // CPU time of the whole process (argon2 runs on libuv threads), compared with the cost of one
    // hash measured in the same run: a measure of work done, not of elapsed time.
    const hashesToMeasure = 3;
    const beforeHashes = process.cpuUsage();
    for (let index = 0; index < hashesToMeasure; index += 1) await hashPassword(`Measure-Hash-Pass${index}!`);
    const hashSpent = process.cpuUsage(beforeHashes);
    const oneHashMicros = (hashSpent.user + hashSpent.system) / hashesToMeasure;

    const invalidResets = 20;
    const beforeResets = process.cpuUsage();
    const answers = await Promise.all(Array.from({ length: invalidResets }, (_, index) => reset(`made-up-token-${index}`, `Attacker-Pass-Word${index}!`)));
    const resetSpent = process.cpuUsage(beforeResets);
    expect(new Set(answers.map((answer) => answer.statusCode))).toEqual(new Set([400]));
    // Hashing every password would cost invalidResets hashes; checking the token first costs a few queries.
    expect(resetSpent.user + resetSpent.system).toBeLessThan(oneHashMicros * 5);
  });
});
