/**
 * The protected-page guard: unauthenticated users see Authentication
 * Required (or the page's own fallback); signed-in users without one of the required roles see Access
 * Denied with both role lists. The server enforces the same rules; this only decides what to show.
 */
import { Button, Intent, NonIdealState, Tag } from '@blueprintjs/core';
import { ROLES } from '@bioprocess/shared/enums';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { LoadingScreen } from './LoadingScreen.tsx';

/** The general wrapper's rule: any of viewer, editor or admin. */
export const ANY_ROLE: readonly string[] = ROLES;

export interface RequireRolesProps {
  roles?: readonly string[];
  /** Replaces the Authentication Required screen for unauthenticated users. */
  fallback?: ReactNode;
  children: ReactNode;
}

export function AuthenticationRequired() {
  const navigate = useNavigate();
  return (
    <NonIdealState className="app-guard" icon="lock" title="Authentication Required"
      description="Please sign in to access this page."
      action={<Button intent={Intent.PRIMARY} icon="log-in" text="Sign In" onClick={() => navigate('/login')} />} />
  );
}

export function AccessDenied({ requiredRoles, userRoles }: { requiredRoles: readonly string[]; userRoles: readonly string[] }) {
  const navigate = useNavigate();
  return (
    <NonIdealState className="app-guard" icon="blocked-person" title="Access Denied"
      description={(
        <div className="app-guard-details">
          <p>You don&apos;t have permission to access this page.</p>
          <div className="app-guard-roles">
            <span className="app-guard-label">Required roles:</span>
            {requiredRoles.map((role) => <Tag key={role} minimal intent={Intent.PRIMARY}>{role}</Tag>)}
          </div>
          <div className="app-guard-roles">
            <span className="app-guard-label">Your roles:</span>
            {userRoles.length > 0
              ? userRoles.map((role) => <Tag key={role} minimal>{role}</Tag>)
              : <span className="app-guard-none">No roles assigned</span>}
          </div>
        </div>
      )}
      action={<Button icon="arrow-left" text="Go Back" onClick={() => navigate(-1)} />} />
  );
}

export function RequireRoles({ roles = ANY_ROLE, fallback, children }: RequireRolesProps) {
  const { user, isLoading, isAuthenticated } = useAuth();
  if (isLoading) return <LoadingScreen />;
  if (!isAuthenticated || !user) return <>{fallback ?? <AuthenticationRequired />}</>;
  if (!user.roles.some((role) => roles.includes(role))) return <AccessDenied requiredRoles={roles} userRoles={user.roles} />;
  return <>{children}</>;
}
