/**
 * Settings: the Account name rule, User Management (invite, role, delete), Audit Logs with
 * the CSV download holding the actions just taken, and the superuser's Organisations and switch.
 */
import { readFile } from 'node:fs/promises';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { apiSignIn, signInWithSession, SUPERUSER_EMAIL, SUPERUSER_PASSWORD, uniqueEmail, type ApiSession } from './support/auth.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';

let admin: ApiSession;

test.beforeAll(async ({ request }) => {
  admin = await adminSession(request);
});

test('account: the name update is disabled while unchanged or blank', async ({ page }, testInfo) => {
  await signInWithSession(page, admin, '/settings');
  const name = page.getByLabel('Name', { exact: true });
  const update = page.getByRole('button', { name: 'Update Name' });
  await expect(name).toHaveValue(admin.user.name);
  await expect(update).toBeDisabled();
  await name.fill('   ');
  await expect(update).toBeDisabled();
  await name.fill(`${admin.user.name} (QA)`);
  await expect(update).toBeEnabled();
  await screenshot(page, 'settings-account', testInfo);
  await update.click();
  await expect(page.getByText('Name updated successfully').first()).toBeVisible();
  await expect(update).toBeDisabled();
  await name.fill(admin.user.name);
  await update.click();
  await expect(page.getByText('Name updated successfully').first()).toBeVisible();
});

test('API keys: viewer or editor only, an optional expiry, shown once, then revoked', async ({ page, request }, testInfo) => {
  const name = `Feed ${Date.now()}`;
  await signInWithSession(page, admin, '/settings');
  await page.getByRole('tab', { name: 'API Keys' }).click();
  await page.getByRole('button', { name: 'Create API Key' }).click();
  const dialog = page.getByRole('dialog');
  const roles = await dialog.getByLabel('Role').locator('option').allTextContents();
  expect(roles).toEqual(['viewer', 'editor']);
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Role').selectOption('viewer');
  const nextYear = `${new Date().getFullYear() + 1}-06-30`;
  await dialog.getByLabel('Expires on').fill(nextYear);
  await dialog.getByRole('button', { name: 'Create Key' }).click();
  const shown = page.getByTestId('created-api-key');
  await expect(shown).toContainText('bpk_');
  const key = (await shown.locator('code').textContent())!.trim();
  const row = page.getByTestId(`api-key-row-${name}`);
  await expect(row).toContainText('viewer');
  await expect(row).toContainText('active');
  await expect(row).not.toContainText('never');
  await screenshot(page, 'settings-api-keys', testInfo);
  const listed = await callJson<{ name: string; expires_at: string | null }[]>(request, admin.token, 'GET', '/api/v1/api-keys');
  expect(listed.find((entry) => entry.name === name)?.expires_at?.startsWith(`${new Date().getFullYear() + 1}-06-`)).toBe(true);
  expect((await request.get(`/api/v1/organizations/${admin.user.organization_id}`, { headers: { Authorization: `Bearer ${key}` } })).status()).toBe(200);

  await row.getByRole('button', { name: `Revoke ${name}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
  await expect(page.getByText('API key revoked')).toBeVisible();
  await expect(row).toContainText('revoked');
  expect((await request.get(`/api/v1/organizations/${admin.user.organization_id}`, { headers: { Authorization: `Bearer ${key}` } })).status()).toBe(401);
});

test.describe('user management', () => {
  // The duplicate invitation is refused by the server.
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to invite user/) });
  test('user management: invite, change role, refuse a duplicate, delete', async ({ page }, testInfo) => {
    const email = uniqueEmail('pages-invite');
    await signInWithSession(page, admin, '/settings');
    await page.getByRole('tab', { name: 'User Management' }).click();
    await page.getByRole('button', { name: 'Invite User' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(dialog).toContainText('Email, name and role are required.');
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Name').fill('Invited Colleague');
    await dialog.getByLabel('Role').selectOption('viewer');
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(page.getByText('User invited successfully')).toBeVisible();
    const row = page.getByTestId(`user-row-${email}`);
    await expect(row).toContainText('invited');

    await row.getByLabel(`Role of ${email}`).selectOption('editor');
    await expect(page.getByText('Role updated successfully')).toBeVisible();
    await expect(row.getByLabel(`Role of ${email}`)).toHaveValue('editor');
    await screenshot(page, 'settings-users', testInfo);

    await page.getByRole('button', { name: 'Invite User' }).click();
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Name').fill('Invited Twice');
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(page.getByText(/Failed to invite user/)).toBeVisible();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();

    await row.getByRole('button', { name: `Delete ${email}` }).click();
    await expect(dialog).toContainText(`Delete Invited Colleague (${email})?`);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(page.getByText('User deleted successfully')).toBeVisible();
    await expect(dialog).toBeHidden();
    await expect(row).toBeHidden();
  });
});

test('audit logs: recent events and a CSV download with the actions just taken', async ({ page, request }, testInfo) => {
  const marker = `Audited Site ${Date.now().toString(36)}`;
  const facility = await callJson<{ id: number }>(request, admin.token, 'POST', '/api/v1/facilities', { name: marker, type: 'lab' });
  await callJson(request, admin.token, 'PUT', `/api/v1/facilities/${facility.id}`, { country: 'Netherlands' });

  await signInWithSession(page, admin, '/settings');
  await page.getByRole('tab', { name: 'Audit Logs' }).click();
  const table = page.getByTestId('audit-table');
  // The audit-worker writes asynchronously: refresh until the update shows.
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(table).toContainText(`facility '${marker}'`, { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  await expect(table.getByRole('row')).not.toHaveCount(0);
  expect(await table.locator('tbody tr').count()).toBeLessThanOrEqual(50);
  await screenshot(page, 'settings-audit', testInfo);
  // The open tab is part of the address: a reload stays on it.
  await expect(page).toHaveURL(/[?&]tab=audit/);
  await page.reload();
  await expect(page.getByRole('tab', { name: 'Audit Logs' })).toHaveAttribute('aria-selected', 'true');
  await expect(table).toContainText(`facility '${marker}'`);

  const downloadPromise = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const download = await downloadPromise;
  expect(download.suggestedFilename()).toMatch(/^audit-logs-.*\.csv$/);
  await expect(page.getByText('Export successful')).toBeVisible();
  const csv = await readFile(await download.path(), 'utf8');
  const lines = csv.split(/\r?\n/).filter((line) => line.includes('facility') && line.includes(String(facility.id)));
  expect(lines.some((line) => line.includes('create'))).toBeTruthy();
  expect(lines.some((line) => line.includes('update') && line.includes('Netherlands'))).toBeTruthy();
});

test('superuser: organisations list, create, edit, delete and switch organisation', async ({ page, request }, testInfo) => {
  const superuser = await apiSignIn(request, SUPERUSER_EMAIL, SUPERUSER_PASSWORD);
  const originalOrganization = superuser.user.organization_id;
  const name = `Pages Org ${Date.now().toString(36)}`;
  await signInWithSession(page, superuser, '/settings');
  await page.getByRole('tab', { name: 'Organisations' }).click();
  const table = page.getByTestId('organizations-table');
  await expect(table).toBeVisible();

  await page.getByRole('button', { name: 'Create Organization' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toContainText('Name is required.');
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Description').fill('Made by the page tests');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText('Organization created successfully')).toBeVisible();
  await expect(table).toContainText(name);

  await table.getByRole('button', { name: `Edit ${name}` }).click();
  await dialog.getByLabel('Name').fill(`${name} renamed`);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Organization updated successfully')).toBeVisible();
  await expect(table).toContainText(`${name} renamed`);
  await screenshot(page, 'settings-organisations', testInfo);

  // Switch into it and back again from the Account tab.
  await page.getByRole('tab', { name: 'Account' }).click();
  await page.getByLabel('Organisation').selectOption({ label: `${name} renamed` });
  await page.getByRole('button', { name: 'Switch Organisation' }).click();
  await expect(page.getByText('Organization switched successfully').first()).toBeVisible();
  await page.getByLabel('Organisation').selectOption(String(originalOrganization));
  await page.getByRole('button', { name: 'Switch Organisation' }).click();
  await expect(page.getByText('Organization switched successfully').first()).toBeVisible();

  await page.getByRole('tab', { name: 'Organisations' }).click();
  await table.getByRole('button', { name: `Delete ${name} renamed` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('Organization deleted successfully')).toBeVisible();
  await expect(table).not.toContainText(name);
});

test('superuser: make and demote superuser from User Management', async ({ page, request }) => {
  const superuser = await apiSignIn(request, SUPERUSER_EMAIL, SUPERUSER_PASSWORD);
  const email = uniqueEmail('pages-promote');
  await callJson(request, superuser.token, 'POST', '/api/v1/auth/users/invite', { email, name: 'Promoted Person', roleName: 'viewer' });
  await signInWithSession(page, superuser, '/settings');
  await page.getByRole('tab', { name: 'User Management' }).click();
  const row = page.getByTestId(`user-row-${email}`);
  await row.getByRole('button', { name: `Make ${email} superuser` }).click();
  await expect(page.getByText('User promoted to superuser').first()).toBeVisible();
  await expect(row).toContainText('superuser');
  await row.getByRole('button', { name: `Demote ${email}` }).click();
  await expect(page.getByText('User demoted from superuser').first()).toBeVisible();
  await expect(row.getByRole('button', { name: `Make ${email} superuser` })).toBeVisible();
  await row.getByRole('button', { name: `Delete ${email}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('User deleted successfully')).toBeVisible();
});
