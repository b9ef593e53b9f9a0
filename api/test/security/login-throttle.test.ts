/**
 * Attacks on the per-account login lock: a burst of concurrent guesses (each used to pass the check
 * before any failure was recorded) and a Unicode case variant of the address (İ, U+0130, which
 * PostgreSQL lowers to the same account while JavaScript lowered it to another throttle key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, type TestContext } from '../support/test-context.ts';

const PASSWORD = 'Right-Pass-Word1!';
const WRONG = 'Wrong-Pass-Word1!';

describe('login throttling under concurrency and Unicode', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext({ LOGIN_MAX_FAILURES: '5', LOGIN_WINDOW_MINUTES: '15' }); });
  afterAll(async () => { await ctx.close(); });

  const login = (email: string, password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });

  async function signup(email: string): Promise<void> {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email, password: PASSWORD, name: 'Victim' } });
    expect(response.statusCode).toBe(201);
  }

  it('verifies at most five of 30 concurrent wrong passwords; the rest are refused unverified', async () => {
    await signup('burst@example.test');
    const answers = await Promise.all(Array.from({ length: 30 }, () => login('burst@example.test', WRONG)));
    const statuses = answers.map((answer) => answer.statusCode);
    // Four verified guesses answer 401, the fifth verified one answers 429 (the lock starts with it),
    // and the 25 others were refused before any verification.
    expect(statuses.filter((status) => status === 401)).toHaveLength(4);
    expect(statuses.filter((status) => status === 429)).toHaveLength(26);
    for (const answer of answers.filter((candidate) => candidate.statusCode === 429)) {
      expect(answer.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });
    }
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS attempts FROM login_failures WHERE email = 'burst@example.test'`);
    expect(rows[0].attempts).toBe(5);
    expect((await login('burst@example.test', PASSWORD)).statusCode).toBe(429);
  });

  it('keeps a blocked account blocked for the U+0130 (İ) spelling of its address, and counts that spelling against it', async () => {
    await signup('victim-i@example.test');
    for (let attempt = 1; attempt <= 5; attempt += 1) await login('victim-i@example.test', WRONG);
    const dotted = await login('victim-\u0130@example.test', PASSWORD);
    expect(dotted.statusCode).toBe(429);
    expect(dotted.json()).toEqual({ error: AUTH_MESSAGES.loginBlocked });

    // The other way round: guesses spelt with İ lock the plain address.
    await signup('other-i@example.test');
    for (let attempt = 1; attempt <= 5; attempt += 1) await login('other-\u0130@EXAMPLE.test', WRONG);
    expect((await login('other-i@example.test', PASSWORD)).statusCode).toBe(429);
  });
});
