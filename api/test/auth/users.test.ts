import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { ROLE_MESSAGE } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { USER_MESSAGES } from '../../src/users/routes.ts';
import { latestOutboxLink } from './outbox.ts';

describe('user management, invitations, superusers and organisation switching', () => {
  let ctx: TestContext;
  let orgA: number;
  let orgB: number;
  let adminA: TestUser;
  let adminB: TestUser;
  let superuser: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext({ DEV_OUTBOX: 'true' });
    orgA = await ctx.createOrganization('Org A');
    orgB = await ctx.createOrganization('Org B');
    adminA = await ctx.createUser({ organizationId: orgA, role: 'admin' });
    adminB = await ctx.createUser({ organizationId: orgB, role: 'admin' });
    superuser = await ctx.createUser({ organizationId: orgA, role: 'admin', superuser: true });
  });
  afterAll(async () => { await ctx.close(); });

  const invite = (token: string, payload: Record<string, unknown>) => ctx.request({ method: 'POST', url: '/api/v1/auth/users/invite', token, payload });

  it('invites a viewer who accepts through the mailed link, logs in and is refused writes', async () => {
    const response = await invite(adminA.token, { email: 'viewer@example.test', roleName: 'viewer' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ email: 'viewer@example.test', role: 'viewer', organization_id: orgA, status: 'pending' });

    const notYet = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'viewer@example.test', password: 'Viewer-Pass1!' } });
    expect(notYet.statusCode).toBe(401);

    const mail = await latestOutboxLink(ctx, 'viewer@example.test', superuser.token);
    expect(mail.body).toContain('"Org A"');
    expect(mail.link).toContain('/accept-invitation?token=');
    const accepted = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token: mail.token, name: 'Vera Viewer', password: 'Viewer-Pass1!' } });
    expect(accepted.statusCode).toBe(201);
    expect(accepted.json().user).toMatchObject({ email: 'viewer@example.test', name: 'Vera Viewer', roles: ['viewer'], organization_id: orgA });

    const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'viewer@example.test', password: 'Viewer-Pass1!' } });
    expect(login.statusCode).toBe(200);
    const viewerToken = login.json().token as string;
    expect(login.json().user).toMatchObject({ roles: ['viewer'], organization_id: orgA });
    const write = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: viewerToken, payload: { name: 'nope' } });
    expect(write.statusCode).toBe(403);
    expect(write.json()).toEqual({ error: AUTH_MESSAGES.forbidden });
    const invites = await invite(viewerToken, { email: 'x@example.test', roleName: 'viewer' });
    expect(invites.statusCode).toBe(403);
  });

  it('validates the invitation payload', async () => {
    const badRole = await invite(adminA.token, { email: 'r@example.test', roleName: 'owner' });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json()).toEqual({ error: `roleName: ${ROLE_MESSAGE}` });
    const noEmail = await invite(adminA.token, { roleName: 'viewer' });
    expect(noEmail.statusCode).toBe(400);
    expect(noEmail.json().error).toMatch(/^email: /);
  });

  it('lets an admin invite only into their own organisation and a superuser into any', async () => {
    const adminTry = await invite(adminA.token, { email: 'into-b@example.test', roleName: 'editor', organization_id: orgB });
    expect(adminTry.statusCode).toBe(201);
    expect(adminTry.json().organization_id).toBe(orgA);
    const superTry = await invite(superuser.token, { email: 'super-into-b@example.test', roleName: 'editor', organization_id: orgB });
    expect(superTry.statusCode).toBe(201);
    expect(superTry.json().organization_id).toBe(orgB);
    const missingOrg = await invite(superuser.token, { email: 'nowhere@example.test', roleName: 'editor', organization_id: 987654 });
    expect(missingOrg.statusCode).toBe(404);
  });

  it('lists the users of the own organisation for admins and of all (or one) organisations for superusers', async () => {
    const own = await ctx.request({ method: 'GET', url: '/api/v1/auth/users', token: adminB.token });
    expect(own.statusCode).toBe(200);
    expect(new Set(own.json().map((user: { organization_id: number }) => user.organization_id))).toEqual(new Set([orgB]));
    const filterIgnored = await ctx.request({ method: 'GET', url: `/api/v1/auth/users?organization_id=${orgA}`, token: adminB.token });
    expect(filterIgnored.json().every((user: { organization_id: number }) => user.organization_id === orgB)).toBe(true);

    const all = await ctx.request({ method: 'GET', url: '/api/v1/auth/users', token: superuser.token });
    expect(new Set(all.json().map((user: { organization_id: number }) => user.organization_id))).toEqual(new Set([orgA, orgB]));
    const onlyB = await ctx.request({ method: 'GET', url: `/api/v1/auth/users?organization_id=${orgB}`, token: superuser.token });
    expect(onlyB.json().length).toBeGreaterThan(0);
    expect(onlyB.json().every((user: { organization_id: number }) => user.organization_id === orgB)).toBe(true);
    expect(JSON.stringify(all.json())).not.toContain('argon2');
  });

  it('changes roles within reach, answers 404 across organisations, and keeps one admin per organisation', async () => {
    const editor = await ctx.createUser({ organizationId: orgA, role: 'editor' });
    const promote = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${editor.id}/roles`, token: adminA.token, payload: { roleName: 'admin' } });
    expect(promote.statusCode).toBe(200);
    expect(promote.json().roles).toEqual(['admin']);
    const profile = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: editor.token });
    expect(profile.json().roles).toEqual(['admin']);

    const across = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${editor.id}/roles`, token: adminB.token, payload: { roleName: 'viewer' } });
    expect(across.statusCode).toBe(404);
    expect(across.json()).toEqual({ error: USER_MESSAGES.notFound });

    const lastAdmin = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${adminB.id}/roles`, token: adminB.token, payload: { roleName: 'editor' } });
    expect(lastAdmin.statusCode).toBe(409);
    expect(lastAdmin.json()).toEqual({ error: USER_MESSAGES.lastAdmin });
    const bySuperuser = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${editor.id}/roles`, token: superuser.token, payload: { roleName: 'viewer' } });
    expect(bySuperuser.statusCode).toBe(200);

    const superRole = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${superuser.id}/roles`, token: adminA.token, payload: { roleName: 'viewer' } });
    expect(superRole.statusCode).toBe(403);
    expect(superRole.json()).toEqual({ error: USER_MESSAGES.superuserOnly });
  });

  it('deletes users within reach, never oneself, and answers 404 across organisations', async () => {
    const target = await ctx.createUser({ organizationId: orgA, role: 'viewer' });
    const across = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${target.id}`, token: adminB.token });
    expect(across.statusCode).toBe(404);
    const self = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${adminA.id}`, token: adminA.token });
    expect(self.statusCode).toBe(400);
    expect(self.json()).toEqual({ error: USER_MESSAGES.cannotDeleteSelf });
    const superDelete = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${superuser.id}`, token: adminA.token });
    expect(superDelete.statusCode).toBe(403);

    const ok = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${target.id}`, token: adminA.token });
    expect(ok.statusCode).toBe(204);
    expect((await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: target.token })).statusCode).toBe(401);
    const again = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${target.id}`, token: adminA.token });
    expect(again.statusCode).toBe(404);
  });

  it('deletes a user and edits the organisation while another transaction holds rows of it open (an upload, a seed)', async () => {
    const target = await ctx.createUser({ organizationId: orgA, role: 'viewer' });
    const upload = await ctx.deps.pg.connect();
    try {
      await upload.query('BEGIN');
      // Any insert referencing the organisation takes its foreign-key share lock until commit.
      await upload.query(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Held open', 'pilot')`, [orgA]);
      // Were any of these to wait for that transaction, it would hang until the test's timeout.
      const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${target.id}`, token: adminA.token });
      expect(deleted.statusCode).toBe(204);
      const renamed = await ctx.request({ method: 'PUT', url: `/api/v1/organizations/${orgA}`, token: superuser.token, payload: { name: 'Org A' } });
      expect(renamed.statusCode).toBe(200);
      const zone = await ctx.request({ method: 'PUT', url: '/api/v1/organization-settings', token: adminA.token, payload: { time_zone: 'UTC' } });
      expect(zone.statusCode).toBe(200);
    } finally {
      await upload.query('ROLLBACK');
      upload.release();
    }
  });

  it('promotes and demotes superusers, but never the last one', async () => {
    const lastDemote = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${superuser.id}/superuser`, token: superuser.token, payload: { superuser: false } });
    expect(lastDemote.statusCode).toBe(409);
    expect(lastDemote.json()).toEqual({ error: USER_MESSAGES.lastSuperuser });

    const byAdmin = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${adminB.id}/superuser`, token: adminA.token, payload: { superuser: true } });
    expect(byAdmin.statusCode).toBe(403);
    const invalid = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${adminB.id}/superuser`, token: superuser.token, payload: { superuser: 'yes' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ error: 'superuser: superuser must be true or false' });

    const promote = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${adminB.id}/superuser`, token: superuser.token, payload: { superuser: true } });
    expect(promote.statusCode).toBe(200);
    expect(promote.json().superuser).toBe(true);
    // Now two superusers: demoting the first one is allowed, and the second becomes the last.
    const demote = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${superuser.id}/superuser`, token: adminB.token, payload: { superuser: false } });
    expect(demote.statusCode).toBe(200);
    const lastDelete = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${adminB.id}/superuser`, token: adminB.token, payload: { superuser: false } });
    expect(lastDelete.statusCode).toBe(409);
    const restore = await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${superuser.id}/superuser`, token: adminB.token, payload: { superuser: true } });
    expect(restore.statusCode).toBe(200);
    await ctx.request({ method: 'PUT', url: `/api/v1/auth/users/${adminB.id}/superuser`, token: superuser.token, payload: { superuser: false } });
  });

  it('lets a superuser switch organisation (id as string or number) and work there', async () => {
    const nonSuper = await ctx.request({ method: 'POST', url: '/api/v1/auth/switch-organization', token: adminA.token, payload: { organizationId: String(orgB) } });
    expect(nonSuper.statusCode).toBe(403);
    const missing = await ctx.request({ method: 'POST', url: '/api/v1/auth/switch-organization', token: superuser.token, payload: { organizationId: '987654' } });
    expect(missing.statusCode).toBe(404);
    const invalid = await ctx.request({ method: 'POST', url: '/api/v1/auth/switch-organization', token: superuser.token, payload: { organizationId: 'abc' } });
    expect(invalid.statusCode).toBe(400);

    const switched = await ctx.request({ method: 'POST', url: '/api/v1/auth/switch-organization', token: superuser.token, payload: { organizationId: String(orgB) } });
    expect(switched.statusCode).toBe(200);
    expect(switched.json().user.organization_id).toBe(orgB);
    const profile = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: superuser.token });
    expect(profile.json()).toMatchObject({ organization_id: orgB, organization_name: 'Org B' });
    const back = await ctx.request({ method: 'POST', url: '/api/v1/auth/switch-organization', token: superuser.token, payload: { organizationId: orgA } });
    expect(back.json().user.organization_id).toBe(orgA);
  });
});
