/** The application shell: sidebar entries, sub-links and the user panel. */
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { signInWithSession, signUp } from './support/auth.ts';
import { saveScreenshot } from './support/screens.ts';

test.describe('application shell', () => {
  // The sidebar walk opens a run that does not exist on purpose; its page logs the refusal.
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to fetch run details/) });

  test('sidebar: 16rem wide, active entry by path, Runs sub-links only on runs pages, /runs redirects', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Sidebar Tester' });
    await signInWithSession(page, session, '/dashboard');
    const sidebar = page.getByRole('complementary', { name: 'Main navigation' });
    await expect(sidebar).toBeVisible();
    expect(await sidebar.evaluate((element) => element.getBoundingClientRect().width)).toBe(256);

    const dashboard = page.getByTestId('sidebar-dashboard');
    const runs = page.getByTestId('sidebar-runs');
    const data = page.getByTestId('sidebar-data');
    await expect(dashboard).toHaveClass(/bp6-active/);
    await expect(runs).not.toHaveClass(/bp6-active/);
    await expect(page.getByTestId('sidebar-runs-overview')).toHaveCount(0);
    await expect(page.getByTestId('sidebar-runs-compare')).toHaveCount(0);

    await runs.click();
    await expect(page).toHaveURL(/\/runs\/overview$/);
    await expect(runs).toHaveClass(/bp6-active/);
    await expect(dashboard).not.toHaveClass(/bp6-active/);
    await expect(page.getByTestId('sidebar-runs-overview')).toHaveClass(/bp6-active/);
    await page.getByTestId('sidebar-runs-compare').click();
    await expect(page).toHaveURL(/\/runs\/compare$/);
    await expect(page.getByTestId('sidebar-runs-compare')).toHaveClass(/bp6-active/);
    await expect(runs).toHaveClass(/bp6-active/);
    await saveScreenshot(page, 'sidebar-runs');

    await data.click();
    await expect(page).toHaveURL(/\/data$/);
    await expect(data).toHaveClass(/bp6-active/);
    await expect(page.getByTestId('sidebar-runs-overview')).toHaveCount(0);

    await page.goto('/runs');
    await expect(page).toHaveURL(/\/runs\/overview$/);
    await page.goto('/runs/999999');
    await expect(runs).toHaveClass(/bp6-active/);
    await expect(page.getByTestId('sidebar-runs-overview')).toBeVisible();
  });

  test('Analyze and Integrations open their pages', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Modal Tester' });
    await signInWithSession(page, session, '/dashboard');
    await page.getByTestId('sidebar-analyze').click();
    await expect(page).toHaveURL(/\/analyze$/);
    await expect(page.getByTestId('analyze-page')).toBeVisible();
    await page.getByTestId('sidebar-integrations').click();
    await expect(page).toHaveURL(/\/integrations$/);
    await expect(page.getByRole('heading', { name: 'Integrations' })).toBeVisible();
    await expect(page.getByTestId('sidebar-integrations')).toHaveClass(/bp6-active/);
  });

  test('user panel: initials, name, email, organisation, role, Settings and Sign Out', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Rosalind Franklin', organizationName: 'Helix Bio' });
    await signInWithSession(page, session, '/dashboard');
    const panel = page.getByTestId('user-panel');
    await expect(panel).toContainText('RF');
    await expect(panel).toContainText('Rosalind Franklin');
    await expect(panel).toContainText(session.user.email);
    await expect(page.getByTestId('organization-name')).toHaveText('Helix Bio');

    await panel.click();
    await expect(page.getByText(`Role: ${session.user.roles[0]}`)).toBeVisible();
    await saveScreenshot(page, 'user-menu');
    await page.getByRole('menuitem', { name: 'Settings' }).click();
    await expect(page).toHaveURL(/\/settings$/);

    await panel.click();
    await page.getByRole('menuitem', { name: 'Sign Out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    expect(await page.evaluate(() => [localStorage.getItem('auth_token'), localStorage.getItem('auth_user')])).toEqual([null, null]);
    // The token is no longer accepted by the server either.
    const profile = await request.get('/api/v1/auth/profile', { headers: { Authorization: `Bearer ${session.token}` } });
    expect(profile.status()).toBe(401);
  });
});
