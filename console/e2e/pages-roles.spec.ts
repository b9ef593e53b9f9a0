/**
 * What each role sees on the data pages: a viewer no create, edit or delete anywhere; an editor
 * all of them; only an admin User Management and Audit Logs; only a superuser Organisations.
 */
import { expect, test, type Page } from './support/quiet-console.ts';
import { apiSignIn, signInWithSession, SUPERUSER_EMAIL, SUPERUSER_PASSWORD, type ApiSession } from './support/auth.ts';
import { adminSession, createRunFixture, createUserWithRole, screenshot, type RunFixture } from './pages-helpers.ts';

let admin: ApiSession;
let viewer: ApiSession;
let editor: ApiSession;
let fixture: RunFixture;

test.beforeAll(async ({ request }) => {
  admin = await adminSession(request);
  viewer = await createUserWithRole(request, admin, 'viewer');
  editor = await createUserWithRole(request, admin, 'editor');
  fixture = await createRunFixture(request, admin);
});

async function settingsTabs(page: Page): Promise<string[]> {
  // A second navigation while the start-up profile check is in flight would abort it; stay put when already there.
  if (!page.url().endsWith('/settings')) await page.goto('/settings');
  await expect(page.getByRole('tab', { name: 'Account' })).toBeVisible();
  return page.getByRole('tab').allInnerTexts();
}

test('a viewer sees no create, edit or delete anywhere', async ({ page }, testInfo) => {
  await signInWithSession(page, viewer, '/dashboard');
  await expect(page.getByRole('heading', { name: 'Recent Runs' })).toBeVisible();
  // The pending run was created last, so it is among the recent runs whatever else the organisation holds.
  await expect(page.getByTestId('runs-table')).toContainText(fixture.otherRun.name);
  await expect(page.getByRole('columnheader', { name: 'Actions' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^(Edit|Delete) / })).toHaveCount(0);

  await page.goto('/runs/overview');
  await expect(page.getByTestId('runs-table')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Create Run' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Export Data' })).toHaveCount(0);
  await expect(page.getByRole('columnheader', { name: 'Actions' })).toHaveCount(0);

  await page.goto(`/runs/${fixture.run.id}`);
  await expect(page.getByTestId('unit-operation-card')).toHaveCount(2);
  await expect(page.getByText('Add Unit Operation')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Edit unit operation' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Delete unit operation' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Edit Run' })).toHaveCount(0);
  await screenshot(page, 'viewer-run-detail', testInfo);

  await page.goto('/data');
  await expect(page.getByTestId('data-table')).toBeVisible();
  await expect(page.getByRole('button', { name: /Create/ })).toHaveCount(0);
  await expect(page.getByRole('columnheader', { name: 'Actions' })).toHaveCount(0);

  // Every member reads the organisation's own instrument types and units; only admins change them.
  expect(await settingsTabs(page)).toEqual(['Account', 'Instruments']);
});

test('an editor can create, edit and delete but not manage users', async ({ page }) => {
  await signInWithSession(page, editor, '/dashboard');
  await expect(page.getByRole('button', { name: `Edit ${fixture.otherRun.name}` })).toBeVisible();
  await page.goto('/runs/overview');
  await expect(page.getByRole('button', { name: 'Create Run' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Export Data' })).toBeVisible();
  await page.goto(`/runs/${fixture.run.id}`);
  await expect(page.getByText('Add Unit Operation')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Edit unit operation' })).toHaveCount(2);
  await page.goto('/data');
  await expect(page.getByRole('button', { name: '+ Create Equipment' })).toBeVisible();
  await expect(page.getByRole('columnheader', { name: 'Actions' })).toBeVisible();
  // Every member reads the organisation's own instrument types and units; only admins change them.
  expect(await settingsTabs(page)).toEqual(['Account', 'Instruments']);
});

test('an admin sees User Management, API Keys and Audit Logs, not Organisations', async ({ page }) => {
  await signInWithSession(page, admin, '/settings');
  const tabs = await settingsTabs(page);
  expect(tabs).toEqual(admin.user.superuser
    ? ['Account', 'User Management', 'API Keys', 'Instruments', 'Audit Logs', 'Organisations']
    : ['Account', 'User Management', 'API Keys', 'Instruments', 'Audit Logs']);
});

test('a superuser sees Organisations and the superuser actions', async ({ page, request }, testInfo) => {
  const superuser = await apiSignIn(request, SUPERUSER_EMAIL, SUPERUSER_PASSWORD);
  await signInWithSession(page, superuser, '/settings');
  const tabs = await settingsTabs(page);
  expect(tabs).toContain('Organisations');
  await expect(page.getByRole('button', { name: 'Switch Organisation' })).toBeVisible();
  if (superuser.user.roles.includes('admin')) {
    await page.getByRole('tab', { name: 'User Management' }).click();
    await expect(page.getByRole('button', { name: /Make .* superuser|Demote/ }).first()).toBeVisible();
  }
  await screenshot(page, 'superuser-settings', testInfo);
});

test('settings without a session shows the access message', async ({ page }) => {
  await page.goto('/settings');
  await expect(page.getByText(/Authentication Required|Access Denied - You need to be logged in to access the settings page\./)).toBeVisible();
});
