/**
 * Role-derived permissions. The api enforces them and the console uses the
 * same definition to decide what to show.
 */
import type { Role } from './enums.ts';

export const PERMISSIONS = ['read', 'create', 'edit', 'export', 'manage_users', 'view_audit_logs', 'superuser'] as const;
export type Permission = (typeof PERMISSIONS)[number];

const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  viewer: ['read'],
  editor: ['read', 'create', 'edit', 'export'],
  admin: ['read', 'create', 'edit', 'export', 'manage_users', 'view_audit_logs'],
};

export interface Principal {
  roles: readonly string[];
  superuser: boolean;
}

export function permissionsOf(principal: Principal): Set<Permission> {
  const granted = new Set<Permission>();
  for (const role of principal.roles) {
    for (const permission of ROLE_PERMISSIONS[role as Role] ?? []) granted.add(permission);
  }
  if (principal.superuser) granted.add('superuser');
  return granted;
}

export function can(principal: Principal | null | undefined, permission: Permission): boolean {
  return principal ? permissionsOf(principal).has(permission) : false;
}
