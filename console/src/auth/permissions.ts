/** Console permissions derived from the one shared role definition (@bioprocess/shared/permissions). */
import { can } from '@bioprocess/shared/permissions';
import type { Permissions } from './auth-context.ts';
import type { SessionUser } from './user.ts';

export function permissionsFor(user: Pick<SessionUser, 'roles' | 'superuser'> | null): Permissions {
  return {
    canCreate: can(user, 'create'),
    canEdit: can(user, 'edit'),
    canExport: can(user, 'export'),
    canManageUsers: can(user, 'manage_users'),
    canViewAuditLogs: can(user, 'view_audit_logs'),
    isSuperuser: can(user, 'superuser'),
  };
}
