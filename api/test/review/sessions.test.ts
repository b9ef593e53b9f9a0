/**
 * Sessions through the real server: a session unused for longer than the organisation's inactivity
 * limit is refused with 401 saying why (and ended), a used one records its last use, and a user lists
 * their sessions (browser, address, sign-in, last use) and ends one or all others, never someone
 * else's. Time passing is made by moving last_used_at back in the database, never by sleeping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVIEW_MESSAGES } from '@bioprocess/shared/run-review';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';

const PASSWORD = 'Correct-Horse-Battery-9';

describe('sessions', () => {
  let ctx: TestContext;
  let organizationId: number;
  let admin: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization();
    admin = await ctx.createUser({ organizationId, role: 'admin' });
    member = await ctx.createUser({ organizationId, role: 'editor', password: PASSWORD });
  });
  afterAll(async () => { await ctx?.close(); });

  async function signIn(userAgent: string): Promise<string> {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/auth/login', headers: { 'user-agent': userAgent }, payload: { email: member.email, password: PASSWORD },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().token as string;
  }
  const profile = (token: string, userAgent = 'Test browser') =>
    ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token, headers: { 'user-agent': userAgent } });
  const sessionIdOf = async (token: string) => {
    const listed = (await ctx.request({ method: 'GET', url: '/api/v1/auth/sessions', token })).json();
    return listed.find((session: { current: boolean }) => session.current).id as number;
  };

  it('lists the user\'s sessions and ends one, or all but the current one', async () => {
    const laptop = await signIn('Laptop Firefox');
    const phone = await signIn('Phone Safari');
    const tablet = await signIn('Tablet Chrome');
    for (const [token, agent] of [[laptop, 'Laptop Firefox'], [phone, 'Phone Safari'], [tablet, 'Tablet Chrome']] as const) {
      expect((await profile(token, agent)).statusCode).toBe(200);
    }
    const listed = (await ctx.request({ method: 'GET', url: '/api/v1/auth/sessions', token: laptop })).json();
    const mine = listed.filter((session: { user_agent: string }) => /Laptop|Phone|Tablet/.test(session.user_agent));
    expect(mine.map((session: { user_agent: string; current: boolean }) => [session.user_agent, session.current]).sort())
      .toEqual([['Laptop Firefox', true], ['Phone Safari', false], ['Tablet Chrome', false]]);
    expect(mine[0]).toMatchObject({ ip: '127.0.0.1', signed_in_at: expect.any(String), last_used_at: expect.any(String) });

    // Someone else cannot end it; the owner can.
    const phoneId = await sessionIdOf(phone);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/auth/sessions/${phoneId}`, token: admin.token })).statusCode).toBe(404);
    expect((await profile(phone)).statusCode).toBe(200);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/auth/sessions/${phoneId}`, token: laptop })).statusCode).toBe(204);
    expect((await profile(phone)).statusCode).toBe(401);

    const ended = await ctx.request({ method: 'POST', url: '/api/v1/auth/sessions/end-others', token: laptop });
    expect(ended.json().ended).toBeGreaterThanOrEqual(2); // the tablet, and the fixture's own session
    expect((await profile(tablet)).statusCode).toBe(401);
    expect((await profile(laptop)).statusCode).toBe(200);
    const left = (await ctx.request({ method: 'GET', url: '/api/v1/auth/sessions', token: laptop })).json();
    expect(left.map((session: { user_agent: string }) => session.user_agent)).toEqual(['Laptop Firefox']);
  });

  it('refuses a session left unused past the organisation\'s limit, saying why, and records the last use of one in use', async () => {
    const policy = await ctx.request({
      method: 'PUT', url: '/api/v1/session-policy', token: admin.token, payload: { inactivity_minutes: 15, signing_reauth_minutes: 5 },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const token = await signIn('Idle browser');
    const sessionId = await sessionIdOf(token);

    // Used 40 seconds ago: still fine, and the use moves last_used_at forward.
    await ctx.deps.pg.query(`UPDATE sessions SET last_used_at = now() - interval '40 seconds' WHERE id = $1`, [sessionId]);
    expect((await profile(token)).statusCode).toBe(200);
    const { rows: touched } = await ctx.deps.pg.query(`SELECT last_used_at > now() - interval '5 seconds' AS fresh FROM sessions WHERE id = $1`, [sessionId]);
    expect(touched[0].fresh).toBe(true);

    // Unused for 16 minutes: refused, ended, and the next call is an unknown token.
    await ctx.deps.pg.query(`UPDATE sessions SET last_used_at = now() - interval '16 minutes' WHERE id = $1`, [sessionId]);
    const refused = await profile(token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: REVIEW_MESSAGES.sessionInactive });
    const { rows } = await ctx.deps.pg.query('SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1', [sessionId]);
    expect(rows[0].revoked).toBe(true);
    expect((await profile(token)).json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });

    // The limit is the organisation's: at 20 minutes the same idle time passes.
    await ctx.request({ method: 'PUT', url: '/api/v1/session-policy', token: admin.token, payload: { inactivity_minutes: 20, signing_reauth_minutes: 5 } });
    const second = await signIn('Idle browser');
    await ctx.deps.pg.query(`UPDATE sessions SET last_used_at = now() - interval '16 minutes' WHERE id = $1`, [await sessionIdOf(second)]);
    expect((await profile(second)).statusCode).toBe(200);
    const bad = await ctx.request({ method: 'PUT', url: '/api/v1/session-policy', token: admin.token, payload: { inactivity_minutes: 0, signing_reauth_minutes: 5 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toContain('inactivity_minutes');
    expect((await ctx.request({ method: 'PUT', url: '/api/v1/session-policy', token: second, payload: { inactivity_minutes: 5, signing_reauth_minutes: 5 } })).statusCode).toBe(403);
  });
});
