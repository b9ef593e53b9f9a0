/**
 * Guarded pages: the shell with the role guard around the page. A session that ends while a guarded
 * page is open (signed out in another tab, or any call answered 401) sends the tab to the sign-in
 * page, which unmounts the page and every dialog it had open; a visitor who arrives signed out sees
 * the guard's Authentication Required instead.
 */
import { useEffect, useRef } from 'react';
import { Outlet, useNavigate } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { RequireRoles } from '../components/RequireRoles.tsx';
import { AppShell } from '../shell/AppShell.tsx';

function useSignInWhenSessionEnds(): void {
  const { isAuthenticated, isLoading } = useAuth();
  const navigate = useNavigate();
  // Only a session that was restored and in use counts: a stored token found invalid on start is
  // not a sign-out the user needs to be taken away from.
  const wasSignedIn = useRef(false);
  useEffect(() => {
    if (isLoading) return;
    if (isAuthenticated) {
      wasSignedIn.current = true;
      return;
    }
    if (!wasSignedIn.current) return;
    wasSignedIn.current = false;
    void navigate('/login', { replace: true });
  }, [isAuthenticated, isLoading, navigate]);
}

export function ProtectedLayout() {
  useSignInWhenSessionEnds();
  return (
    <AppShell>
      <RequireRoles>
        <Outlet />
      </RequireRoles>
    </AppShell>
  );
}
