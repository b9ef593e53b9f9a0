import { describe, expect, it } from 'vitest';
import { permissionsFor } from './permissions.ts';
import { initialsOf, toSessionUser } from './user.ts';

describe('session user', () => {
  it('reads organization_id or organizationId, defaulting to 1, and superuser defaulting to false', () => {
    expect(toSessionUser({ id: 1, email: 'a@b.c', name: 'A', roles: ['viewer'], organization_id: 7 }).organizationId).toBe(7);
    expect(toSessionUser({ id: 1, email: 'a@b.c', name: 'A', roles: ['viewer'], organizationId: 8 }).organizationId).toBe(8);
    const bare = toSessionUser({ id: 1, email: 'a@b.c' });
    expect(bare).toEqual({ id: 1, email: 'a@b.c', name: '', roles: [], organizationId: 1, superuser: false });
  });

  it('makes initials from the first and last name, else from the email', () => {
    expect(initialsOf({ name: 'Ada Lovelace', email: 'x@y.z' })).toBe('AL');
    expect(initialsOf({ name: 'Marie Salomea Curie', email: 'x@y.z' })).toBe('MC');
    expect(initialsOf({ name: 'plato', email: 'x@y.z' })).toBe('PL');
    expect(initialsOf({ name: ' ', email: 'scientist@demo' })).toBe('SC');
  });

  it('derives permissions from the shared role definition', () => {
    expect(permissionsFor({ roles: ['viewer'], superuser: false })).toEqual({
      canCreate: false, canEdit: false, canExport: false, canManageUsers: false, canViewAuditLogs: false, isSuperuser: false,
    });
    expect(permissionsFor({ roles: ['editor'], superuser: false })).toMatchObject({ canCreate: true, canEdit: true, canExport: true, canManageUsers: false });
    expect(permissionsFor({ roles: ['admin'], superuser: true })).toEqual({
      canCreate: true, canEdit: true, canExport: true, canManageUsers: true, canViewAuditLogs: true, isSuperuser: true,
    });
    expect(permissionsFor(null).canCreate).toBe(false);
  });
});
