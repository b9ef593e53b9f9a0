/** Session restore, 401 handling and the guard screens. */
import { expect, refusedRequests, test, type Page } from './support/quiet-console.ts';
import { signInWithSession, signUp, type ApiSession } from './support/auth.ts';
import { saveScreenshot } from './support/screens.ts';

/** Answers the profile call with this user (e.g. one without roles) instead of the server's. */
async function serveProfile(page: Page, user: ApiSession['user']) {
  await page.route('**/api/v1/auth/profile', (route) => route.fulfill({ status: 200, json: user }));
}

test.describe('guards', () => {
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to /) });
  test('signed-out visitors of a protected page see Authentication Required with a Sign In button', async ({ page }) => {
    await page.goto('/dashboard');
    await expect(page.getByRole('heading', { name: 'Authentication Required' })).toBeVisible();
    // The sidebar's user panel offers Sign In as well.
    await expect(page.locator('.app-user-panel').getByRole('button', { name: 'Sign In' })).toBeVisible();
    await saveScreenshot(page, 'authentication-required');
    await page.locator('.app-guard').getByRole('button', { name: 'Sign In' }).click();
    await expect(page).toHaveURL(/\/login$/);
  });

  test('every guarded route is protected', async ({ page }) => {
    for (const path of ['/dashboard', '/runs/overview', '/runs/compare', '/runs/1', '/runs/1/unit-operations/2', '/data', '/settings']) {
      await page.goto(path);
      await expect(page.getByRole('heading', { name: 'Authentication Required' })).toBeVisible();
    }
  });

  test('a signed-in user without a role sees Access Denied with both role lists, and Go Back', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Roleless User' });
    await serveProfile(page, { ...session.user, roles: [] });
    await page.goto('/privacy-policy');
    await signInWithSession(page, session, '/dashboard');
    const denied = page.locator('.app-guard');
    await expect(denied.getByRole('heading', { name: 'Access Denied' })).toBeVisible();
    await expect(denied).toContainText('Required roles:');
    for (const role of ['viewer', 'editor', 'admin']) await expect(denied.getByText(role, { exact: true })).toBeVisible();
    await expect(denied).toContainText('No roles assigned');
    await saveScreenshot(page, 'access-denied');
    // The sidebar shows the missing role too.
    await page.getByTestId('user-panel').click();
    await expect(page.getByText('No role assigned')).toBeVisible();
    await page.keyboard.press('Escape');
    await denied.getByRole('button', { name: 'Go Back' }).click();
    await expect(page).toHaveURL(/\/privacy-policy$/);
  });

  test('a stored session is restored on start: profile re-fetched and stored again', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Restored User', organizationName: 'Restore Labs' });
    // A stale local copy of the user is replaced by the profile from the server.
    await signInWithSession(page, { ...session, user: { ...session.user, name: 'Stale Name' } }, '/dashboard');
    await expect(page.getByTestId('user-panel')).toContainText('Restored User');
    await expect(page.getByTestId('organization-name')).toHaveText('Restore Labs');
    const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('auth_user') ?? '{}') as { name: string });
    expect(stored.name).toBe('Restored User');
  });

  test('the page shows a loading state until the stored session is checked', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Slow Profile' });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => { release = resolve; });
    await page.route('**/api/v1/auth/profile', async (route) => {
      await held;
      await route.continue();
    });
    await signInWithSession(page, session, '/dashboard');
    await expect(page.getByRole('status')).toContainText('Loading...');
    await saveScreenshot(page, 'session-loading');
    release();
    await expect(page.getByRole('status')).toHaveCount(0);
    await expect(page.getByTestId('user-panel')).toContainText('Slow Profile');
  });

  test('an invalid stored token signs out: storage cleared, Authentication Required shown', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Expired Session' });
    await signInWithSession(page, { ...session, token: 'bps_not-a-valid-token' }, '/dashboard');
    await expect(page.getByRole('heading', { name: 'Authentication Required' })).toBeVisible();
    const stored = await page.evaluate(() => [localStorage.getItem('auth_token'), localStorage.getItem('auth_user')]);
    expect(stored).toEqual([null, null]);
  });

  test('a 401 from any authenticated call signs the user out and shows the sign-in page', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Revoked Session' });
    await signInWithSession(page, session, '/dashboard');
    await expect(page.getByTestId('user-panel')).toContainText('Revoked Session');
    // The server ends the session (e.g. signed out elsewhere); the next call answers 401.
    await request.post('/api/v1/auth/logout', { headers: { Authorization: `Bearer ${session.token}` } });
    // Client-side navigation (no reload, so no profile re-fetch) to a page whose data was never fetched.
    await page.evaluate(() => {
      window.history.pushState({}, '', '/runs/999999');
      window.dispatchEvent(new PopStateEvent('popstate'));
    });
    await expect(page).toHaveURL(/\/login$/);
    // The form, not any Sign In button: for a frame after the URL changes, the guarded page's own Sign In is still drawn.
    const form = page.getByRole('form', { name: /^Welcome to / });
    await expect(form.getByRole('button', { name: 'Sign In' })).toBeVisible();
    expect(await page.evaluate(() => localStorage.getItem('auth_token'))).toBeNull();
  });
});
