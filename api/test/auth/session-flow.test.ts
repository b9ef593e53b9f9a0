import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { PASSWORD_REQUIREMENTS_MESSAGE } from '@bioprocess/shared/password';
import { EMAIL_MESSAGE } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { hashToken } from '../../src/auth/principal.ts';
import { EMAIL_TAKEN_MESSAGE } from '../../src/auth/routes.ts';

const PASSWORD = 'Strong-Pass1!';

describe('signup, login, profile, logout and session expiry', () => {
  let ctx: TestContext;
  beforeAll(async () => { ctx = await createTestContext(); });
  afterAll(async () => { await ctx.close(); });

  async function signup(email: string, password = PASSWORD, name = 'Ada Lovelace') {
    return ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email, password, name } });
  }

  it('signs up a new organisation with the user as admin and answers token + user', async () => {
    const response = await signup('Ada@Example.test');
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body.token).toMatch(/^bps_[A-Za-z0-9_-]{43}$/);
    expect(body.user).toEqual({
      id: expect.any(Number), email: 'Ada@Example.test', name: 'Ada Lovelace', roles: ['admin'],
      organization_id: expect.any(Number), superuser: false,
    });
    const org = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${body.user.organization_id}`, token: body.token });
    expect(org.statusCode).toBe(200);
    expect(org.json()).toMatchObject({ name: "Ada Lovelace's organization", user_count: 1 });

    const stored = await ctx.deps.pg.query('SELECT password_hash FROM users WHERE id = $1', [body.user.id]);
    expect(stored.rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    const session = await ctx.deps.pg.query('SELECT token_hash FROM sessions WHERE user_id = $1', [body.user.id]);
    expect(session.rows[0].token_hash).toBe(hashToken(body.token));
  });

  it('rejects a duplicate email (case-insensitive), a bad email and a weak password with clear messages', async () => {
    await signup('dup@example.test');
    const duplicate = await signup('DUP@example.test');
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({ error: EMAIL_TAKEN_MESSAGE });

    const badEmail = await signup('not-an-email');
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.json()).toEqual({ error: `email: ${EMAIL_MESSAGE}` });

    for (const weak of ['Short1!', 'alllowercase1!', 'ALLUPPERCASE1!', 'NoDigits!!', 'NoSpecial123', 'Aa1!'.repeat(33)]) {
      const response = await signup(`weak-${weak.length}-${weak.slice(0, 3)}@example.test`, weak);
      expect(response.statusCode, weak).toBe(400);
      expect(response.json()).toEqual({ error: expect.stringContaining(PASSWORD_REQUIREMENTS_MESSAGE) });
    }
    const missingName = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'n@example.test', password: PASSWORD } });
    expect(missingName.statusCode).toBe(400);
    expect(missingName.json().error).toMatch(/^name: /);
  });

  it('logs in with the right password and refuses a wrong one or an unknown email with the same message', async () => {
    await signup('login@example.test');
    const ok = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'LOGIN@example.test', password: PASSWORD } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().user).toMatchObject({ email: 'login@example.test', roles: ['admin'], superuser: false });

    const wrong = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'login@example.test', password: 'Wrong-Pass1!' } });
    const unknown = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'nobody@example.test', password: 'Wrong-Pass1!' } });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: AUTH_MESSAGES.invalidCredentials });
    expect(unknown.json()).toEqual(wrong.json());

    const empty = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: '', password: '' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({ error: 'email: Email is required' });
  });

  it('reads and renames the profile; an empty name is refused', async () => {
    const { json } = await signup('profile@example.test');
    const { token, user } = json();
    const profile = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token });
    expect(profile.statusCode).toBe(200);
    expect(profile.json()).toMatchObject({ id: user.id, email: 'profile@example.test', name: 'Ada Lovelace', roles: ['admin'], organization_id: user.organization_id, superuser: false });
    expect(profile.json()).not.toHaveProperty('password_hash');

    const renamed = await ctx.request({ method: 'PUT', url: '/api/v1/auth/profile', token, payload: { name: '  Grace Hopper ' } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().name).toBe('Grace Hopper');
    const blank = await ctx.request({ method: 'PUT', url: '/api/v1/auth/profile', token, payload: { name: '   ' } });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toEqual({ error: 'name: Name is required' });
  });

  it('revokes the session on logout and refuses expired or unknown tokens with 401', async () => {
    const { token, user } = (await signup('logout@example.test')).json();
    const logout = await ctx.request({ method: 'POST', url: '/api/v1/auth/logout', token });
    expect(logout.statusCode).toBe(204);
    const after = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });

    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'logout@example.test', password: PASSWORD } });
    const fresh = login.json().token as string;
    expect((await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: fresh })).statusCode).toBe(200);
    await ctx.deps.pg.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
    const expired = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: fresh });
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });

    const garbage = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: 'bps_not-a-real-token' });
    expect(garbage.statusCode).toBe(401);
    const none = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile' });
    expect(none.statusCode).toBe(401);
  });

  it('sets the session expiry from SESSION_TTL_HOURS', async () => {
    const { user } = (await signup('ttl@example.test')).json();
    const { rows } = await ctx.deps.pg.query('SELECT extract(epoch FROM expires_at - created_at) AS seconds FROM sessions WHERE user_id = $1', [user.id]);
    expect(Math.round(Number(rows[0].seconds))).toBe(ctx.env.SESSION_TTL_HOURS * 3600);
  });

  it('refuses signup with 403 when SIGNUP_ENABLED is false', async () => {
    ctx.env.SIGNUP_ENABLED = false;
    try {
      const response = await signup('closed@example.test');
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: AUTH_MESSAGES.signupDisabled });
      const { rowCount } = await ctx.deps.pg.query(`SELECT 1 FROM users WHERE email = 'closed@example.test'`);
      expect(rowCount).toBe(0);
    } finally {
      ctx.env.SIGNUP_ENABLED = true;
    }
  });
});
