import { describe, expect, it, vi } from 'vitest';
import { clearSession, getSession, getToken, saveSession, saveUser, subscribeSession } from './session-store.ts';

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
