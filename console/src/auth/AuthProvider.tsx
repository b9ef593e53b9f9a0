/**
 * Session handling: restores the stored session by re-fetching the profile (with a
 * loading state until it finishes), signs in and out, keeps local storage in step, and fetches the
 * organisation name for the sidebar.
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { z } from 'zod';
import { ApiError, apiRequest } from '../api/client.ts';
import { AuthContext, type AuthContextValue } from './auth-context.ts';
import { loginRequest, logoutRequest, signupRequest } from './auth-api.ts';
import { permissionsFor } from './permissions.ts';
import { clearSession, getSession, saveSession, saveUser, subscribeSession } from './session-store.ts';
import { serverUserSchema, toSessionUser } from './user.ts';

const organizationSchema = z.object({ id: z.union([z.number(), z.string()]), name: z.string() }).loose();

export function AuthProvider({ children }: { children: ReactNode }) {
  const session = useSyncExternalStore(subscribeSession, getSession, getSession);
  const [isLoading, setIsLoading] = useState(() => Boolean(session.token && session.user));
  const [organizationName, setOrganizationName] = useState('');
  const restored = useRef(false);

  const refreshProfile = useCallback(async () => {
    const { token } = getSession();
    if (!token) return;
    try {
      const profile = await apiRequest<unknown>('GET', '/api/v1/auth/profile', undefined, { schema: serverUserSchema });
      // The client converted keys to camelCase; the mapping accepts either spelling of the org id.
      const user = toSessionUser(serverUserSchema.parse(profile));
      if (getSession().token === token) saveUser(user);
    } catch (error) {
      // The server saying the session or its user is gone ends it; a request cut short (the page was
      // left while it ran) or a network failure does not: ending the session then signed out a user
      // who merely navigated while the profile loaded.
      if (error instanceof ApiError && [401, 403, 404].includes(error.status)) clearSession();
    }
  }, []);

  useEffect(() => {
    if (restored.current) return;
    restored.current = true;
    const { token, user } = getSession();
    if (!token || !user) {
      // Half a session (token without user or the reverse) is no session.
      if (token || user) clearSession();
      setIsLoading(false);
      return;
    }
    void refreshProfile().finally(() => setIsLoading(false));
  }, [refreshProfile]);

  const organizationId = session.user?.organizationId;
  useEffect(() => {
    setOrganizationName('');
    if (organizationId === undefined || !session.token) return;
    const controller = new AbortController();
    apiRequest<{ name: string }>('GET', `/api/v1/organizations/${organizationId}`, undefined, { schema: organizationSchema, signal: controller.signal })
      .then((organization) => setOrganizationName(organization.name))
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        console.error('Failed to fetch organization', error);
      });
    return () => controller.abort();
  }, [organizationId, session.token]);

  const login = useCallback(async (email: string, password: string) => {
    const result = await loginRequest(email, password);
    saveSession(result.token, result.user);
    return result.user;
  }, []);

  const signup = useCallback(async (email: string, password: string, name: string) => {
    const result = await signupRequest(email, password, name);
    saveSession(result.token, result.user);
    return result.user;
  }, []);

  const logout = useCallback(async () => {
    const { token } = getSession();
    clearSession();
    if (token) await logoutRequest(token);
  }, []);

  const setOrganizationId = useCallback((id: number) => {
    const { user } = getSession();
    if (user) saveUser({ ...user, organizationId: id });
  }, []);

  const value = useMemo<AuthContextValue>(() => ({
    user: session.user,
    token: session.token,
    isLoading,
    organizationName,
    isAuthenticated: Boolean(session.token && session.user),
    permissions: permissionsFor(session.user),
    login,
    signup,
    logout,
    setOrganizationId,
    refreshProfile,
  }), [session, isLoading, organizationName, login, signup, logout, setOrganizationId, refreshProfile]);

  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
