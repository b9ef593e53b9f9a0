/**
 * Invitations that leak nothing and take no address: an invitation used to create the user at once. The 409 told an inviter which addresses
 * belonged to other organisations (the superuser's too), an invited-only address was taken from its
 * owner (their signup answered 409, their forgot-password put them into the inviter's organisation),
 * and invite/delete/invite mailed any address without end, with text the inviter chose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVITATION_MESSAGES } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { outboxMessages } from '../auth/outbox.ts';

const PASSWORD = 'Invitee-Pass-Word1!';

describe('invitations that leak nothing, take nothing and are limited', () => {
  let ctx: TestContext;
  let orgA: number;
  let adminA: TestUser;
  let adminB: TestUser;
  let superuser: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext({
      DEV_OUTBOX: 'true',
      INVITATIONS_PER_ORGANIZATION_PER_DAY: '12',
      INVITATIONS_PER_ADDRESS_PER_DAY: '3',
      INVITATION_MAILS_PER_ADDRESS_PER_DAY: '4',
    });
    orgA = await ctx.createOrganization('Inviting Org');
    const orgB = await ctx.createOrganization('Other Org');
    adminA = await ctx.createUser({ organizationId: orgA, role: 'admin', email: 'admin-a@example.test' });
    adminB = await ctx.createUser({ organizationId: orgB, role: 'admin', email: 'admin-b@example.test' });
    superuser = await ctx.createUser({ organizationId: orgB, role: 'admin', superuser: true, email: 'root@example.test' });
  });
  afterAll(async () => { await ctx.close(); });

  const invite = (token: string, payload: Record<string, unknown>) => ctx.request({ method: 'POST', url: '/api/v1/auth/users/invite', token, payload });

  async function invitationMails(email: string): Promise<{ link: string | null; subject: string; body: string }[]> {
    return (await outboxMessages(ctx, email, superuser.token)).filter((message) => message.link?.includes('/accept-invitation'));
  }

  async function tokenOf(email: string): Promise<string> {
    const [latest] = await invitationMails(email);
    return new URL(latest!.link!).searchParams.get('token')!;
  }

  async function userCount(email: string): Promise<number> {
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email]);
    return rows[0].n as number;
  }

  it('answers the same for a free address, another organisation\'s member and the superuser', async () => {
    const answers = await Promise.all([
      invite(adminA.token, { email: 'free@example.test', roleName: 'editor' }),
      invite(adminA.token, { email: adminB.email.toUpperCase(), roleName: 'editor' }),
      invite(adminA.token, { email: superuser.email, roleName: 'editor' }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
    const comparable = answers.map((answer) => {
      const { id, email, created_at: createdAt, last_sent_at: lastSentAt, expires_at: expiresAt, ...rest } = answer.json();
      expect([typeof id, typeof email, typeof createdAt, typeof lastSentAt, typeof expiresAt]).toEqual(['number', 'string', 'string', 'string', 'string']);
      return { rest, headers: Object.keys(answer.headers).sort() };
    });
    expect(comparable[1]).toEqual(comparable[0]);
    expect(comparable[2]).toEqual(comparable[0]);
    expect(comparable[0]!.rest).toEqual({ organization_id: orgA, role: 'editor', status: 'pending' });
    // Nothing was created or changed for the existing accounts.
    const { rows } = await ctx.deps.pg.query('SELECT organization_id FROM users WHERE id = ANY($1) ORDER BY id', [[adminB.id, superuser.id]]);
    expect(rows.map((row) => row.organization_id)).toEqual([adminB.organizationId, superuser.organizationId]);
    expect(await userCount('free@example.test')).toBe(0);
  });

  it('creates no user before acceptance: the owner\'s own signup works and forgot-password sends nothing into the inviter\'s organisation', async () => {
    expect((await invite(adminA.token, { email: 'owner@example.test', roleName: 'admin' })).statusCode).toBe(201);
    expect(await userCount('owner@example.test')).toBe(0);

    const forgot = await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'owner@example.test' } });
    expect(forgot.statusCode).toBe(200);
    const resetMails = (await outboxMessages(ctx, 'owner@example.test', superuser.token)).filter((message) => message.link?.includes('/reset-password'));
    expect(resetMails).toHaveLength(0);
    expect(await userCount('owner@example.test')).toBe(0);

    const signup = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'owner@example.test', password: PASSWORD, name: 'Rightful Owner' } });
    expect(signup.statusCode).toBe(201);
    expect(signup.json().user.organization_id).not.toBe(orgA);

    // The invitation link now tells its holder (not the inviter) that the address has an account.
    const token = await tokenOf('owner@example.test');
    const lookup = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/lookup', payload: { token } });
    expect(lookup.statusCode).toBe(200);
    expect(lookup.json()).toMatchObject({ organization_name: 'Inviting Org', email: 'owner@example.test', role: 'admin', account_exists: true });
    const accept = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, name: 'Rightful Owner', password: PASSWORD } });
    expect(accept.statusCode).toBe(409);
    expect(accept.json()).toEqual({ error: INVITATION_MESSAGES.accountExists });
    const { rows } = await ctx.deps.pg.query('SELECT organization_id, role FROM users WHERE lower(email) = $1', ['owner@example.test']);
    expect(rows).toEqual([{ organization_id: signup.json().user.organization_id, role: 'admin' }]);
  });

  it('creates the member on acceptance, once, and audits invitation, acceptance and revocation', async () => {
    const invited = await invite(adminA.token, { email: 'joiner@example.test', roleName: 'viewer' });
    const listed = await ctx.request({ method: 'GET', url: '/api/v1/auth/invitations', token: adminA.token });
    expect(listed.json().map((row: { email: string }) => row.email)).toContain('joiner@example.test');
    const foreign = await ctx.request({ method: 'GET', url: '/api/v1/auth/invitations', token: adminB.token });
    expect(foreign.json().map((row: { email: string }) => row.email)).not.toContain('joiner@example.test');

    const token = await tokenOf('joiner@example.test');
    const accepted = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, name: 'Jo Iner', password: PASSWORD } });
    expect(accepted.statusCode).toBe(201);
    expect(accepted.json().user).toMatchObject({ email: 'joiner@example.test', name: 'Jo Iner', roles: ['viewer'], organization_id: orgA });
    const profile = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: accepted.json().token });
    expect(profile.statusCode).toBe(200);
    const again = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token, name: 'Jo Again', password: PASSWORD } });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: INVITATION_MESSAGES.invalidToken });
    expect(await userCount('joiner@example.test')).toBe(1);
    const afterList = await ctx.request({ method: 'GET', url: '/api/v1/auth/invitations', token: adminA.token });
    expect(afterList.json().map((row: { email: string }) => row.email)).not.toContain('joiner@example.test');

    const revoked = await invite(adminA.token, { email: 'revoked@example.test', roleName: 'viewer' });
    const revokedToken = await tokenOf('revoked@example.test');
    // Another organisation's admin cannot see or revoke it.
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/auth/invitations/${revoked.json().id}`, token: adminB.token })).statusCode).toBe(404);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/auth/invitations/${revoked.json().id}`, token: adminA.token })).statusCode).toBe(204);
    const late = await ctx.request({ method: 'POST', url: '/api/v1/auth/invitations/accept', payload: { token: revokedToken, name: 'Too Late', password: PASSWORD } });
    expect(late.statusCode).toBe(400);
    expect(await userCount('revoked@example.test')).toBe(0);

    const { rows } = await ctx.deps.pg.query(
      `SELECT event->>'event_type' AS event_type, event->>'resource_id' AS resource_id FROM audit_outbox
        WHERE event->>'event_type' IN ('user.invited', 'invitation.accepted', 'invitation.revoked') AND event->>'resource_id' = ANY($1)`,
      [[String(invited.json().id), String(revoked.json().id)]],
    );
    expect(rows.map((row) => `${row.event_type}:${row.resource_id}`).sort()).toEqual([
      `invitation.accepted:${invited.json().id}`, `invitation.revoked:${revoked.json().id}`,
      `user.invited:${invited.json().id}`, `user.invited:${revoked.json().id}`,
    ].sort());
  });

  it('mails only the organisation\'s name, the role and the link', async () => {
    await ctx.request({ method: 'PUT', url: '/api/v1/auth/profile', token: adminA.token, payload: { name: 'Click http://evil.example now' } });
    await invite(adminA.token, { email: 'plain@example.test', roleName: 'editor', name: 'Dear friend, visit http://evil.example' });
    const [mail] = await invitationMails('plain@example.test');
    expect(mail!.body).toContain('"Inviting Org"');
    expect(mail!.body).toContain('editor');
    expect(`${mail!.subject}\n${mail!.body}`).not.toMatch(/evil|Dear friend|Click/);
    expect(mail!.body.match(/https?:\/\/\S+/g)).toEqual([mail!.link]);
  });

  it('limits mails per organisation and address with a 429 naming the limit; revoke and invite again counts on', async () => {
    const address = 'pestered@example.test';
    const first = await invite(adminA.token, { email: address, roleName: 'viewer' });
    expect(first.statusCode).toBe(201);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/auth/invitations/${first.json().id}`, token: adminA.token })).statusCode).toBe(204);
    const second = await invite(adminA.token, { email: address, roleName: 'viewer' });
    expect(second.statusCode).toBe(201);
    const resend = await ctx.request({ method: 'POST', url: `/api/v1/auth/invitations/${second.json().id}/resend`, token: adminA.token });
    expect(resend.statusCode).toBe(200);
    const fourth = await ctx.request({ method: 'POST', url: `/api/v1/auth/invitations/${second.json().id}/resend`, token: adminA.token });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json()).toEqual({ error: INVITATION_MESSAGES.perAddress(3) });
    expect(fourth.headers['retry-after']).toBeDefined();
    const fifth = await invite(adminA.token, { email: address, roleName: 'viewer' });
    expect(fifth.statusCode).toBe(429);
    expect(await invitationMails(address)).toHaveLength(3);
  });

  it('holds back mails past the address\'s daily share from all organisations, answering as if sent', async () => {
    const address = 'popular@example.test';
    const organisations = await Promise.all([1, 2, 3, 4, 5].map((n) => ctx.createOrganization(`Suitor ${n}`)));
    const admins = await Promise.all(organisations.map((organizationId) => ctx.createUser({ organizationId, role: 'admin' })));
    const answers = [];
    for (const admin of admins) answers.push(await invite(admin.token, { email: address, roleName: 'viewer' }));
    expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(await invitationMails(address)).toHaveLength(4);
  });

  it('limits one organisation\'s invitations per day with a 429 naming the limit', async () => {
    const organizationId = await ctx.createOrganization('Busy Org');
    const admin = await ctx.createUser({ organizationId, role: 'admin' });
    const statuses: number[] = [];
    for (let n = 1; n <= 13; n += 1) statuses.push((await invite(admin.token, { email: `colleague${n}@example.test`, roleName: 'viewer' })).statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(12);
    const refused = await invite(admin.token, { email: 'colleague14@example.test', roleName: 'viewer' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: INVITATION_MESSAGES.perOrganization(12) });
  });
});
