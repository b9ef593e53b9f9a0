import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearSession, followStorageChange, getSession, getToken, saveSession, saveUser, subscribeSession } from './session-store.ts';

const user = { id: 1, email: 'a@example.com', name: 'A', roles: ['viewer'], organizationId: 1, superuser: false };

describe('session store', () => {
  it('saves, updates and clears the session and tells subscribers each time', () => {
    const listener = vi.fn();
    const unsubscribe = subscribeSession(listener);
    saveSession('bps_token', user);
    expect(getToken()).toBe('bps_token');
    expect(getSession().user).toEqual(user);
    saveUser({ ...user, organizationId: 4 });
    expect(getSession().user?.organizationId).toBe(4);
    clearSession();
    expect(getSession()).toEqual({ token: null, user: null });
    expect(listener).toHaveBeenCalledTimes(3);
    // Clearing an empty session is not a change.
    clearSession();
    expect(listener).toHaveBeenCalledTimes(3);
    unsubscribe();
    saveSession('bps_other', user);
    expect(listener).toHaveBeenCalledTimes(3);
    clearSession();
  });
});

/** The browser's local storage, which the console's tabs share; the unit tests run without a browser. */
function sharedStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() { return items.size; },
    key: (index: number) => [...items.keys()][index] ?? null,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => { items.set(key, String(value)); },
    removeItem: (key: string) => { items.delete(key); },
    clear: () => items.clear(),
  };
}

describe('session store across tabs', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('ends this tab\'s session when another tab signs out, and takes up another tab\'s sign-in', () => {
    const localStorage = sharedStorage();
    vi.stubGlobal('window', { localStorage });
    const listener = vi.fn();
    const unsubscribe = subscribeSession(listener);
    saveSession('bps_token', user);
    listener.mockClear();
    // Another tab signs out: the shared storage is emptied and this tab hears of it by the storage event.
    localStorage.removeItem('auth_token');
    localStorage.removeItem('auth_user');
    followStorageChange('auth_token');
    expect(getSession()).toEqual({ token: null, user: null });
    expect(listener).toHaveBeenCalledTimes(1);
    followStorageChange('auth_user');
    expect(listener).toHaveBeenCalledTimes(1);
    // Another tab signs in.
    localStorage.setItem('auth_token', 'bps_second');
    localStorage.setItem('auth_user', JSON.stringify(user));
    followStorageChange('auth_user');
    expect(getToken()).toBe('bps_second');
    expect(listener).toHaveBeenCalledTimes(2);
    // Keys that are not the session's change nothing; a storage.clear() (key null) is a sign-out.
    followStorageChange('something-else');
    expect(listener).toHaveBeenCalledTimes(2);
    localStorage.clear();
    followStorageChange(null);
    expect(getToken()).toBeNull();
    expect(listener).toHaveBeenCalledTimes(3);
    unsubscribe();
  });
});
