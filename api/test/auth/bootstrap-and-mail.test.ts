import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { ensureSuperuser, SUPERUSER_ORGANIZATION_NAME } from '../../src/auth/superuser-bootstrap.ts';
import { FORGOT_PASSWORD_MESSAGE } from '../../src/auth/routes.ts';

describe('superuser bootstrap and mail without the dev outbox', () => {
  let ctx: TestContext;
  // An SMTP server that is not there: mail fails, the answers stay the same, and the outbox route does not exist.
  beforeAll(async () => {
    ctx = await createTestContext({ SMTP_URL: 'smtp://127.0.0.1:9', SUPERUSER_EMAIL: 'root@example.test', SUPERUSER_PASSWORD: 'Root-Pass-Word1!' });
  });
  afterAll(async () => { await ctx.close(); });

  it('creates the superuser once from SUPERUSER_EMAIL/SUPERUSER_PASSWORD and is idempotent', async () => {
    await ensureSuperuser(ctx.deps);
    await ensureSuperuser(ctx.deps);
    const { rows } = await ctx.deps.pg.query(`SELECT u.superuser, u.role, o.name FROM users u JOIN organizations o ON o.id = u.organization_id WHERE lower(u.email) = 'root@example.test'`);
    expect(rows).toEqual([{ superuser: true, role: 'admin', name: SUPERUSER_ORGANIZATION_NAME }]);

    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'root@example.test', password: 'Root-Pass-Word1!' } });
    expect(login.statusCode).toBe(200);
    expect(login.json().user).toMatchObject({ superuser: true, roles: ['admin'] });

    // A demoted bootstrap account is made superuser again at the next start; its password is kept.
    await ctx.deps.pg.query(`UPDATE users SET superuser = false WHERE lower(email) = 'root@example.test'`);
    await ensureSuperuser({ ...ctx.deps, env: { ...ctx.env, SUPERUSER_PASSWORD: 'Other-Pass-Word2!' } });
    const again = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'root@example.test', password: 'Root-Pass-Word1!' } });
    expect(again.json().user.superuser).toBe(true);
    const orgs = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM organizations WHERE name = $1', [SUPERUSER_ORGANIZATION_NAME]);
    expect(orgs.rows[0].n).toBe(1);
  });

  it('refuses a bootstrap password that breaks the policy', async () => {
    await expect(ensureSuperuser({ ...ctx.deps, env: { ...ctx.env, SUPERUSER_EMAIL: 'weak@example.test', SUPERUSER_PASSWORD: 'weak' } })).rejects.toThrow(/SUPERUSER_PASSWORD/);
  });

  it('does not register the dev outbox when SMTP_URL is set, and answers forgot-password the same when mail fails', async () => {
    const outbox = await ctx.request({ method: 'GET', url: '/api/v1/dev/outbox' });
    expect(outbox.statusCode).toBe(404);
    const forgot = await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'root@example.test' } });
    expect(forgot.statusCode).toBe(200);
    expect(forgot.json()).toEqual({ message: FORGOT_PASSWORD_MESSAGE });
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM dev_outbox');
    expect(rows[0].n).toBe(0);
  });
});
