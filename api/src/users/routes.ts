/**
 * User management: list, change role, delete and the superuser flag (invitations are in
 * invitation-routes.ts). Admins manage the users of their current organisation; superusers manage
 * users across organisations.
 * A user outside the caller's reach answers 404, as if it did not exist.
 */
import { z } from 'zod';
import {
  changeRoleRequestSchema,
  idParamsSchema,
  listUsersQuerySchema,
  setSuperuserRequestSchema,
  userSchema,
} from '@bioprocess/shared/auth-contracts';
import { withTransaction, type PoolClient } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, conflict, forbidden, notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import type { RequestPrincipal } from '../auth/principal.ts';
import { lockOrganization } from '../organizations/repository.ts';
import {
  auditUserFields, countOtherAdmins, deleteUser, findUserById, listUsers, lockSuperusers,
  setUserRole, setUserSuperuser, toUser, type UserRow,
} from './repository.ts';

export const USER_MESSAGES = {
  notFound: 'User not found',
  organizationNotFound: 'Organization not found',
  cannotDeleteSelf: 'You cannot delete your own account',
  lastSuperuser: 'Cannot remove the last superuser: promote another user first',
  lastAdmin: 'An organization must keep at least one admin',
  superuserOnly: 'Only a superuser can change or delete a superuser',
} as const;

/** The user with this id if the caller may manage it, else 404 (another organisation's user does not exist for an admin). */
async function userInReach(client: PoolClient, principal: RequestPrincipal, id: number): Promise<UserRow> {
  const user = await findUserById(client, id, { forUpdate: true });
  if (!user || (!principal.superuser && user.organization_id !== principal.organizationId)) throw notFound(USER_MESSAGES.notFound);
  return user;
}

/**
 * The user with this id if the caller may manage it, with its organisation's row locked first: every
 * change that could remove an admin takes that lock, so two concurrent removals of the last two
 * admins are serialised (and never deadlock on each other's user rows).
 */
async function userInReachWithOrganizationLocked(client: PoolClient, principal: RequestPrincipal, id: number): Promise<UserRow> {
  const target = await findUserById(client, id);
  if (!target || (!principal.superuser && target.organization_id !== principal.organizationId)) throw notFound(USER_MESSAGES.notFound);
  await lockOrganization(client, target.organization_id);
  const user = await userInReach(client, principal, id);
  // Moved to another organisation meanwhile (a superuser's switch): lock that one instead.
  if (user.organization_id !== target.organization_id) return userInReachWithOrganizationLocked(client, principal, id);
  return user;
}

/** Refuses a change that would leave the user's organisation without an admin. */
async function assertAnotherAdminRemains(client: PoolClient, user: UserRow): Promise<void> {
  if (user.role !== 'admin') return;
  if (await countOtherAdmins(client, user.organization_id, user.id) === 0) throw conflict(USER_MESSAGES.lastAdmin);
}

export async function userRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/auth/users', {
    config: { access: 'manage_users' },
    schema: { tags: ['users'], summary: 'Users of the current organisation (superusers: all, or one organisation)', querystring: listUsersQuerySchema, response: { 200: z.array(userSchema) } },
  }, async (request) => {
    const principal = principalOf(request);
    const organizationId = principal.superuser ? request.query.organization_id ?? null : principal.organizationId;
    return (await listUsers(deps.pg, organizationId)).map(toUser);
  });

  app.post('/api/v1/auth/users/:id/roles', {
    config: { access: 'manage_users' },
    schema: { tags: ['users'], summary: 'Change a user\'s role', params: idParamsSchema, body: changeRoleRequestSchema, response: { 200: userSchema } },
  }, async (request) => {
    const principal = principalOf(request);
    const after = await withTransaction(deps.pg, async (client) => {
      const before = await userInReachWithOrganizationLocked(client, principal, request.params.id);
      if (before.superuser && !principal.superuser) throw forbidden(USER_MESSAGES.superuserOnly);
      if (request.body.roleName !== 'admin') await assertAnotherAdminRemains(client, before);
      await setUserRole(client, before.id, request.body.roleName);
      const updated = (await findUserById(client, before.id))!;
      await recordAudit(client, request, {
        event_type: 'user.role_changed', action: 'update', resource_type: 'user', resource_id: updated.id,
        changes: { before: { role: before.role }, after: { role: updated.role } },
      });
      return updated;
    });
    return toUser(after);
  });

  app.delete('/api/v1/auth/users/:id', {
    config: { access: 'manage_users' },
    schema: { tags: ['users'], summary: 'Delete a user (never yourself, the last superuser or the last admin of an organisation)', params: idParamsSchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.userId === request.params.id) throw badRequest(USER_MESSAGES.cannotDeleteSelf);
    await withTransaction(deps.pg, async (client) => {
      const user = await userInReachWithOrganizationLocked(client, principal, request.params.id);
      if (user.superuser) {
        if (!principal.superuser) throw forbidden(USER_MESSAGES.superuserOnly);
        const superusers = await lockSuperusers(client);
        if (superusers.length <= 1) throw conflict(USER_MESSAGES.lastSuperuser);
      }
      // Deleting an admin is removing one, by anyone, a superuser included.
      await assertAnotherAdminRemains(client, user);
      await deleteUser(client, user.id);
      await recordAudit(client, request, {
        event_type: 'user.deleted', action: 'delete', resource_type: 'user', resource_id: user.id,
        changes: { before: auditUserFields(user) },
      });
    });
    return reply.status(204).send();
  });

  app.put('/api/v1/auth/users/:id/superuser', {
    config: { access: 'superuser' },
    schema: { tags: ['users'], summary: 'Promote a user to superuser or demote one (never the last)', params: idParamsSchema, body: setSuperuserRequestSchema, response: { 200: userSchema } },
  }, async (request) => {
    const principal = principalOf(request);
    const after = await withTransaction(deps.pg, async (client) => {
      const before = await userInReach(client, principal, request.params.id);
      if (before.superuser && !request.body.superuser) {
        const superusers = await lockSuperusers(client);
        if (superusers.length <= 1) throw conflict(USER_MESSAGES.lastSuperuser);
      }
      await setUserSuperuser(client, before.id, request.body.superuser);
      const updated = (await findUserById(client, before.id))!;
      await recordAudit(client, request, {
        event_type: 'user.superuser_changed', action: 'update', resource_type: 'user', resource_id: updated.id,
        changes: { before: { superuser: before.superuser }, after: { superuser: updated.superuser } },
      });
      return updated;
    });
    return toUser(after);
  });
}
