/** The auth context value; provided by AuthProvider, read with useAuth(). */
import { createContext } from 'react';
import type { SessionUser } from './user.ts';

export interface Permissions {
  canCreate: boolean;
  canEdit: boolean;
  canExport: boolean;
  canManageUsers: boolean;
  canViewAuditLogs: boolean;
  isSuperuser: boolean;
}

export interface AuthContextValue {
  user: SessionUser | null;
  token: string | null;
  /** True while a stored session is being re-validated against the profile on start-up. */
  isLoading: boolean;
  /** Name of the user's organisation for the sidebar; blank until fetched or when the fetch fails. */
  organizationName: string;
  isAuthenticated: boolean;
  permissions: Permissions;
  login(email: string, password: string): Promise<SessionUser>;
  signup(email: string, password: string, name: string): Promise<SessionUser>;
  logout(): Promise<void>;
  setOrganizationId(id: number): void;
  refreshProfile(): Promise<void>;
}

export const AuthContext = createContext<AuthContextValue | null>(null);
