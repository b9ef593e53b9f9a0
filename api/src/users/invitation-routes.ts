/**
 * Invitations, as admins manage them: invite an address with a role, list the open invitations,
 * revoke and resend. Admins act in their current organisation; superusers in any.
 *
 * The answer to an invitation is the same whatever the address is (free, a member of another
 * organisation, the superuser's): no user is looked up, nothing is created but the invitation, and
 * whether the address has an account is told only to the invitee, on the acceptance page. Every mail
 * goes through the limits of invitation-mail-limits.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  idParamsSchema,
  INVITATION_MESSAGES,
  invitationSchema,
  inviteUserRequestSchema,
  listInvitationsQuerySchema,
} from '@bioprocess/shared/auth-contracts';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { usesDevOutbox } from '../mail/mailer.ts';
import { sendInvitationMail } from '../mail/invitation-mail.ts';
import { organizationExists } from '../organizations/repository.ts';
import { retryAfterOf, takeInvitationMail } from './invitation-mail-limits.ts';
import {
  auditInvitationFields, findInvitation, listOpenInvitations, openInvitation, renewInvitation, revokeInvitation, toInvitation,
  type InvitationRow, type IssuedInvitation,
} from './invitations.ts';
import { USER_MESSAGES } from './routes.ts';

function inReach(principal: RequestPrincipal, invitation: InvitationRow | null): InvitationRow {
  if (!invitation || (!principal.superuser && invitation.organization_id !== principal.organizationId)) throw notFound(INVITATION_MESSAGES.notFound);
  return invitation;
}

/** A refusal over an invitation limit carries its Retry-After. */
function withRetryAfter(reply: FastifyReply): (error: unknown) => never {
  return (error) => {
    const seconds = retryAfterOf(error);
    if (seconds !== null) reply.header('retry-after', seconds);
    throw error;
  };
}

export async function invitationRoutes(app: App, deps: AppDeps): Promise<void> {
  /**
   * Sends the invitation's mail unless the address's daily share was used up. A slow mail server must
   * not hold the admin's request; the dev outbox insert is awaited so the link is readable as soon as
   * the call answers.
   */
  async function mail(request: FastifyRequest, issued: IssuedInvitation, deliver: boolean): Promise<void> {
    if (!deliver) return;
    const delivery = sendInvitationMail(
      deps,
      { to: issued.invitation.email, organizationName: issued.invitation.organization_name, role: issued.invitation.role },
      issued.token,
    ).catch((error: unknown) => {
      // The invitation exists; an admin can resend it. The failure is for operators.
      request.log.error({ err: error }, 'invitation mail could not be sent');
    });
    if (usesDevOutbox(deps.env)) await delivery;
  }

  app.post('/api/v1/auth/users/invite', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['users'],
      summary: 'Invite an address with a role: mails a link to accept (no account exists until then); the same answer for any address',
      body: inviteUserRequestSchema,
      response: { 201: invitationSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const { email, roleName } = request.body;
    const organizationId = principal.superuser && request.body.organization_id ? request.body.organization_id : principal.organizationId;
    const { issued, deliver } = await withTransaction(deps.pg, async (client) => {
      if (!await organizationExists(client, organizationId)) throw notFound(USER_MESSAGES.organizationNotFound);
      const { deliver } = await takeInvitationMail(client, organizationId, email, deps.env);
      const issued = await openInvitation(client, { organizationId, email, role: roleName, invitedBy: principal.userId, ttlHours: deps.env.INVITATION_TTL_HOURS });
      await recordAudit(client, request, {
        event_type: 'user.invited', action: 'create', resource_type: 'invitation', resource_id: issued.invitation.id,
        organization_id: organizationId,
        changes: { after: auditInvitationFields(issued.invitation) },
      });
      return { issued, deliver };
    }).catch(withRetryAfter(reply));
    await mail(request, issued, deliver);
    return reply.status(201).send(toInvitation(issued.invitation));
  });

  app.get('/api/v1/auth/invitations', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['users'],
      summary: 'Open invitations of the current organisation (superusers: all, or one organisation)',
      querystring: listInvitationsQuerySchema,
      response: { 200: z.array(invitationSchema) },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const organizationId = principal.superuser ? request.query.organization_id ?? null : principal.organizationId;
    return (await listOpenInvitations(deps.pg, organizationId)).map(toInvitation);
  });

  app.post('/api/v1/auth/invitations/:id/resend', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['users'],
      summary: 'Send an open invitation again with a new link (the old one stops working) and a new expiry',
      params: idParamsSchema,
      response: { 200: invitationSchema },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const { issued, deliver } = await withTransaction(deps.pg, async (client) => {
      const current = inReach(principal, await findInvitation(client, request.params.id));
      const { deliver } = await takeInvitationMail(client, current.organization_id, current.email, deps.env);
      // Locked after the limits' locks, in the order every invitation call takes them.
      inReach(principal, await findInvitation(client, current.id, { forUpdate: true }));
      const issued = await renewInvitation(client, current.id, deps.env.INVITATION_TTL_HOURS);
      await recordAudit(client, request, {
        event_type: 'invitation.resent', action: 'update', resource_type: 'invitation', resource_id: current.id,
        organization_id: current.organization_id,
        changes: { before: { expires_at: current.expires_at.toISOString() }, after: { expires_at: issued.invitation.expires_at.toISOString() } },
      });
      return { issued, deliver };
    }).catch(withRetryAfter(reply));
    await mail(request, issued, deliver);
    return toInvitation(issued.invitation);
  });

  app.delete('/api/v1/auth/invitations/:id', {
    config: { access: 'manage_users' },
    schema: { tags: ['users'], summary: 'Revoke an open invitation: its link stops working', params: idParamsSchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const invitation = inReach(principal, await findInvitation(client, request.params.id, { forUpdate: true }));
      await revokeInvitation(client, invitation.id);
      await recordAudit(client, request, {
        event_type: 'invitation.revoked', action: 'delete', resource_type: 'invitation', resource_id: invitation.id,
        organization_id: invitation.organization_id,
        changes: { before: auditInvitationFields(invitation) },
      });
    });
    return reply.status(204).send();
  });
}
