/**
 * The signed-in session as stored in the browser (`auth_token` and `auth_user` in local storage). A tiny
 * external store so the API client can sign out on a 401 without reaching into React, and the
 * AuthProvider re-renders when it does. Other tabs of the console share the storage: the browser's
 * `storage` event tells this one when they sign in or out, so signing out in one tab ends every tab's
 * session at once (not at that tab's next request).
 */
import { DEFAULT_ORGANIZATION_ID, type SessionUser } from './user.ts';

export const TOKEN_STORAGE_KEY = 'auth_token';
export const USER_STORAGE_KEY = 'auth_user';

export interface Session {
  token: string | null;
  user: SessionUser | null;
}

type Listener = () => void;
const listeners = new Set<Listener>();

function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    // Storage can be disabled by browser policy; the session then lives only in memory.
    return null;
  }
}

function readUser(raw: string | null): SessionUser | null {
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<SessionUser> | null;
    if (!parsed || typeof parsed !== 'object' || parsed.id === undefined) return null;
    return {
      id: parsed.id,
      email: String(parsed.email ?? ''),
      name: String(parsed.name ?? ''),
      roles: Array.isArray(parsed.roles) ? parsed.roles.map(String) : [],
      organizationId: Number(parsed.organizationId ?? DEFAULT_ORGANIZATION_ID),
      superuser: parsed.superuser === true,
    };
  } catch {
    return null;
  }
}

function load(): Session {
  const store = storage();
  return {
    token: store?.getItem(TOKEN_STORAGE_KEY) ?? null,
    user: readUser(store?.getItem(USER_STORAGE_KEY) ?? null),
  };
}

let current: Session = load();

function emit(): void {
  for (const listener of listeners) listener();
}

export function getSession(): Session {
  return current;
}

export function getToken(): string | null {
  return current.token;
}

export function subscribeSession(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function saveSession(token: string, user: SessionUser): void {
  const store = storage();
  store?.setItem(TOKEN_STORAGE_KEY, token);
  store?.setItem(USER_STORAGE_KEY, JSON.stringify(user));
  current = { token, user };
  emit();
}

export function saveUser(user: SessionUser): void {
  storage()?.setItem(USER_STORAGE_KEY, JSON.stringify(user));
  current = { ...current, user };
  emit();
}

/** Takes in a change another tab made to the stored session: signed out, or signed in (again, or as someone else). */
export function followStorageChange(key: string | null): void {
  if (key !== null && key !== TOKEN_STORAGE_KEY && key !== USER_STORAGE_KEY) return;
  const stored = load();
  const ended = stored.token === null || stored.user === null;
  if (ended) {
    if (current.token === null && current.user === null) return;
    current = { token: null, user: null };
    emit();
    return;
  }
  if (stored.token === current.token && JSON.stringify(stored.user) === JSON.stringify(current.user)) return;
  current = stored;
  emit();
}

if (typeof window !== 'undefined') {
  // Fired only in the other tabs of the same origin, never in the tab that wrote.
  window.addEventListener('storage', (event) => {
    if (event.storageArea === null || event.storageArea === storage()) followStorageChange(event.key);
  });
}

const SIGNED_OUT_REASON_KEY = 'auth_signed_out_reason';

/** Why the session ended, said once on the sign-in page (kept per tab, in session storage). */
export function takeSignedOutReason(): string | null {
  try {
    const reason = window.sessionStorage.getItem(SIGNED_OUT_REASON_KEY);
    window.sessionStorage.removeItem(SIGNED_OUT_REASON_KEY);
    return reason;
  } catch {
    return null;
  }
}

/** Signs out; `reason`, when given, is shown on the sign-in page (the server ended the session for inactivity). */
export function clearSession(reason?: string): void {
  if (reason) {
    try {
      window.sessionStorage.setItem(SIGNED_OUT_REASON_KEY, reason);
    } catch {
      // Without session storage the sign-in page simply does not say why.
    }
  }
  const store = storage();
  store?.removeItem(TOKEN_STORAGE_KEY);
  store?.removeItem(USER_STORAGE_KEY);
  if (current.token === null && current.user === null) return;
  current = { token: null, user: null };
  emit();
}
