/**
 * Settings: the Account name rule, User Management (invite, acceptance, role, delete, resend, revoke), Audit Logs with
 * the CSV download holding the actions just taken, and the superuser's Organisations and switch.
 */
import { readFile } from 'node:fs/promises';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { apiSignIn, signInWithSession, signUp, SUPERUSER_EMAIL, SUPERUSER_PASSWORD, uniqueEmail, type ApiSession } from './support/auth.ts';
import { adminSession, callJson, invitationToken, inviteAndAccept, screenshot } from './pages-helpers.ts';

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
  // The resend past the per-address invitation limit is refused by the server (429).
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to resend invitation/) });
  test('user management: invite, accept through the mailed link, change role, delete; resend, limit and revoke', async ({ page, request }, testInfo) => {
    const email = uniqueEmail('pages-invite');
    await signInWithSession(page, admin, '/settings');
    await page.getByRole('tab', { name: 'User Management' }).click();
    await page.getByRole('button', { name: 'Invite User' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(dialog).toContainText('Email and role are required.');
    // The inviter writes nothing into the mail: there is no name field.
    await expect(dialog.getByLabel('Name')).toHaveCount(0);
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Role').selectOption('viewer');
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(page.getByText('Invitation sent', { exact: true })).toBeVisible();
    const invitation = page.getByTestId(`invitation-row-${email}`);
    await expect(invitation).toContainText('pending');
    // No account exists before the invitee accepts.
    await expect(page.getByTestId(`user-row-${email}`)).toHaveCount(0);
    await screenshot(page, 'settings-invitations', testInfo);

    // The invitee follows the link: organisation and role are shown, they choose name and password.
    await page.goto(`/accept-invitation?token=${encodeURIComponent(await invitationToken(request, email))}`);
    await expect(page.getByTestId('invitation-offer')).toContainText(email);
    await expect(page.getByTestId('invitation-offer')).toContainText('viewer');
    await page.getByLabel('Your name').fill('Invited Colleague');
    await page.getByLabel('Password', { exact: true }).fill('Invited-Pass1!');
    await page.getByLabel('Confirm Password').fill('Invited-Pass1!');
    await page.getByRole('button', { name: 'Accept and Create Account' }).click();
    await expect(page).toHaveURL(/\/dashboard$/);

    await signInWithSession(page, admin, '/settings');
    await page.getByRole('tab', { name: 'User Management' }).click();
    const row = page.getByTestId(`user-row-${email}`);
    await expect(row).toContainText('Invited Colleague');
    await expect(page.getByTestId(`invitation-row-${email}`)).toHaveCount(0);
    await row.getByLabel(`Role of ${email}`).selectOption('editor');
    await expect(page.getByText('Role updated successfully')).toBeVisible();
    await expect(row.getByLabel(`Role of ${email}`)).toHaveValue('editor');
    await screenshot(page, 'settings-users', testInfo);

    await row.getByRole('button', { name: `Delete ${email}` }).click();
    await expect(dialog).toContainText(`Delete Invited Colleague (${email})?`);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(page.getByText('User deleted successfully')).toBeVisible();
    await expect(dialog).toBeHidden();
    await expect(row).toBeHidden();

    // Resends count against the per-address limit (three mails a day by default); then revoke.
    const pending = uniqueEmail('pages-pending');
    await page.getByRole('button', { name: 'Invite User' }).click();
    await dialog.getByLabel('Email').fill(pending);
    await dialog.getByRole('button', { name: 'Send Invite' }).click();
    await expect(page.getByText('Invitation sent', { exact: true })).toBeVisible();
    const pendingRow = page.getByTestId(`invitation-row-${pending}`);
    for (let resend = 1; resend <= 2; resend += 1) {
      await pendingRow.getByRole('button', { name: `Resend the invitation of ${pending}` }).click();
      await expect(page.getByText('Invitation sent again').first()).toBeVisible();
      await expect(pendingRow.getByRole('button', { name: `Resend the invitation of ${pending}` })).toBeEnabled();
    }
    await pendingRow.getByRole('button', { name: `Resend the invitation of ${pending}` }).click();
    await expect(page.getByText(/Invitation limit reached: at most 3 invitation mails to one address per 24 hours/)).toBeVisible();
    await pendingRow.getByRole('button', { name: `Revoke the invitation of ${pending}` }).click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect(page.getByText('Invitation revoked')).toBeVisible();
    await expect(pendingRow).toBeHidden();
  });
});

test('invitation of an address that has an account: the inviter learns nothing, the invitee is told on the acceptance page', async ({ page, request }) => {
  const elsewhere = await signUp(request, { name: 'Has An Account' });
  const invited = await callJson<{ email: string; status: string }>(request, admin.token, 'POST', '/api/v1/auth/users/invite', { email: elsewhere.user.email, roleName: 'editor' });
  expect(invited).toMatchObject({ email: elsewhere.user.email, status: 'pending' });
  await page.goto(`/accept-invitation?token=${encodeURIComponent(await invitationToken(request, elsewhere.user.email))}`);
  await expect(page.getByTestId('invitation-account-exists')).toContainText('This email address already has an account');
  await expect(page.getByRole('button', { name: 'Accept and Create Account' })).toHaveCount(0);
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
  await inviteAndAccept(request, superuser.token, email, 'viewer', 'Promoted Person');
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
