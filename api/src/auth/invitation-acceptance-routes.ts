/**
 * The invitee's side of an invitation, reached from the mailed link: look the invitation up (what the
 * acceptance page shows) and accept it with a name and a password, which creates the account in the
 * inviting organisation and signs it in.
 *
 * Whether the address already has an account is told here, to the holder of the link (the mailbox's
 * owner), and never to the inviter: such an address cannot accept, and the answer says what to do.
 */
import {
  acceptInvitationRequestSchema,
  authResponseSchema,
  INVITATION_MESSAGES,
  invitationPreviewSchema,
  invitationTokenRequestSchema,
} from '@bioprocess/shared/auth-contracts';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict } from '../platform/http-error.ts';
import { addressLimit } from '../platform/address-limits.ts';
import { recordAudit } from '../audit/record.ts';
import { auditUserFields, findUserByEmail, findUserById, insertInvitedMember, toAuthUser } from '../users/repository.ts';
import { findLiveInvitationByToken, markInvitationAccepted } from '../users/invitations.ts';
import { assertPasswordPolicy, hashPassword } from './passwords.ts';
import { hashToken } from './principal.ts';
import { createSession } from './sessions.ts';

const UNIQUE_VIOLATION = '23505';

export async function invitationAcceptanceRoutes(app: App, deps: AppDeps): Promise<void> {
  app.post('/api/v1/auth/invitations/lookup', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'passwordReset') },
    schema: {
      tags: ['auth'],
      summary: 'What an invitation link offers (organisation, role, address) and whether the address already has an account',
      body: invitationTokenRequestSchema,
      response: { 200: invitationPreviewSchema },
    },
  }, async (request) => {
    const invitation = await findLiveInvitationByToken(deps.pg, hashToken(request.body.token));
    if (!invitation) throw badRequest(INVITATION_MESSAGES.invalidToken);
    return {
      organization_name: invitation.organization_name,
      email: invitation.email,
      role: invitation.role,
      expires_at: invitation.expires_at.toISOString(),
      account_exists: (await findUserByEmail(deps.pg, invitation.email)) !== null,
    };
  });

  app.post('/api/v1/auth/invitations/accept', {
    config: { access: 'public', rateLimit: addressLimit(deps.env, 'passwordReset') },
    schema: {
      tags: ['auth'],
      summary: 'Accept an invitation: creates the account (name and password) in the inviting organisation and signs it in',
      body: acceptInvitationRequestSchema,
      response: { 201: authResponseSchema },
    },
  }, async (request, reply) => {
    const { token, name, password } = request.body;
    assertPasswordPolicy(password);
    const tokenHash = hashToken(token);
    // The link is checked before the password is hashed: hashing is what costs, and only a caller
    // holding a live link may make the server pay for it.
    const live = await findLiveInvitationByToken(deps.pg, tokenHash);
    if (!live) throw badRequest(INVITATION_MESSAGES.invalidToken);
    if (await findUserByEmail(deps.pg, live.email)) throw conflict(INVITATION_MESSAGES.accountExists);
    const passwordHash = await hashPassword(password);
    const created = await withTransaction(deps.pg, async (client) => {
      // Locked and checked again: a concurrent acceptance, revocation or resend wins or loses whole.
      const invitation = await findLiveInvitationByToken(client, tokenHash, { forUpdate: true });
      if (!invitation) throw badRequest(INVITATION_MESSAGES.invalidToken);
      if (await findUserByEmail(client, invitation.email)) throw conflict(INVITATION_MESSAGES.accountExists);
      const userId = await insertInvitedMember(client, {
        email: invitation.email, name, passwordHash, organizationId: invitation.organization_id, role: invitation.role,
      });
      await markInvitationAccepted(client, invitation.id, userId);
      const user = (await findUserById(client, userId))!;
      const session = await createSession(client, user.id, deps.env.SESSION_TTL_HOURS);
      await recordAudit(client, request, {
        event_type: 'invitation.accepted', action: 'create', resource_type: 'invitation', resource_id: invitation.id,
        user_id: user.id, user_email: user.email, organization_id: user.organization_id,
        changes: { after: { user: auditUserFields(user) } },
      });
      return { user, session };
    }).catch((error: unknown) => {
      // Someone signed up with the address in the meantime: the unique index on lower(email) refused it.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw conflict(INVITATION_MESSAGES.accountExists);
      throw error;
    });
    return reply.status(201).send({ token: created.session, user: toAuthUser(created.user) });
  });
}
