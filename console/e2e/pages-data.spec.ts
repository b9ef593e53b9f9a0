/**
 * Data management: the entity dropdown, create/edit/delete dialogs, search, sorting, the
 * id-to-name display with its fallbacks, and the column toggle remembered across a reload.
 */
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { signInWithSession, type ApiSession } from './support/auth.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';

let admin: ApiSession;
const stamp = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

test.beforeAll(async ({ request }) => {
  admin = await adminSession(request);
  const facility = await callJson<{ id: number }>(request, admin.token, 'POST', '/api/v1/facilities', { name: `Data Facility ${stamp}`, type: 'lab' });
  for (const name of ['Alpha', 'Beta']) {
    await callJson(request, admin.token, 'POST', '/api/v1/equipment', { name: `${name} Reactor ${stamp}`, type: 'bioreactor', oem: 'Eppendorf', facility_id: facility.id });
  }
});

test.describe('entity pages', () => {
  // Deleting a facility that still has equipment is refused on purpose, and the console logs it.
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to delete/) });

test('equipment, facilities and instruments: create, search, sort, edit, delete', async ({ page }, testInfo) => {
  await signInWithSession(page, admin, '/data');
  const table = page.getByTestId('data-table');
  await expect(table).toBeVisible();
  // Hidden by design: ids, the organisation id and the equipment status.
  await expect(table.getByRole('columnheader')).toHaveText(['Name', 'Type', 'OEM', 'Facility', 'Created', 'Updated', 'Actions']);

  await page.getByPlaceholder('Search equipment...').fill(stamp);
  await expect(table.getByRole('row')).toHaveCount(3);
  await expect(table.getByRole('row').nth(1)).toContainText(`Data Facility ${stamp}`);
  await expect(table.getByRole('row').nth(1)).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
  await table.getByRole('columnheader', { name: 'Name' }).click();
  await expect(table.getByRole('row').nth(1)).toContainText('Alpha');
  await table.getByRole('columnheader', { name: 'Name' }).click();
  await expect(table.getByRole('row').nth(1)).toContainText('Beta');
  await screenshot(page, 'data-equipment', testInfo);

  await page.getByLabel('Entity').selectOption({ label: 'Facilities' });
  await page.getByRole('button', { name: '+ Create Facility' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toContainText('Name is required.');
  await dialog.getByLabel('Name').fill(`New Site ${stamp}`);
  await dialog.getByLabel('Type').selectOption('demo plant');
  await dialog.getByLabel('Country').fill('Netherlands');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await page.getByPlaceholder('Search facilities...').fill(`New Site ${stamp}`);
  await expect(table.getByRole('row')).toHaveCount(2);

  await page.getByRole('button', { name: `Edit New Site ${stamp}` }).click();
  await expect(dialog.getByLabel('Name')).toHaveValue(`New Site ${stamp}`);
  await dialog.getByLabel('Country').fill('Belgium');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(table).toContainText('Belgium');

  await page.getByRole('button', { name: `Delete New Site ${stamp}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('Facility deleted successfully')).toBeVisible();
  await expect(page.getByText('No matches')).toBeVisible();

  // A facility that still has equipment cannot go: the failure toast.
  await page.getByPlaceholder('Search facilities...').fill(`Data Facility ${stamp}`);
  await page.getByRole('button', { name: `Delete Data Facility ${stamp}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText(/Failed to delete\./)).toBeVisible();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await page.getByLabel('Entity').selectOption({ label: 'Instruments' });
  await page.getByRole('button', { name: '+ Create Instrument' }).click();
  await dialog.getByLabel('Name').fill(`DO probe ${stamp}`);
  await dialog.getByLabel('Type').selectOption('dissolved_o2');
  await dialog.getByLabel('Equipment').selectOption({ label: `Alpha Reactor ${stamp}` });
  await dialog.getByLabel('Unit').selectOption('%');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await page.getByPlaceholder('Search instruments...').fill(stamp);
  await expect(table.getByRole('row').nth(1)).toContainText(`Alpha Reactor ${stamp}`);
  await screenshot(page, 'data-instruments', testInfo);
});

});

test('the column toggle is remembered per entity across a reload', async ({ page }) => {
  await signInWithSession(page, admin, '/data');
  const table = page.getByTestId('data-table');
  await expect(table).toBeVisible();
  await page.getByRole('button', { name: 'Columns' }).click();
  await page.getByTestId('column-toggle').getByText('OEM').click();
  await page.getByTestId('column-toggle').getByText('Updated').click();
  await page.keyboard.press('Escape');
  await expect(table.getByRole('columnheader')).toHaveText(['Name', 'Type', 'Facility', 'Created', 'Actions']);

  await page.reload();
  await expect(table.getByRole('columnheader')).toHaveText(['Name', 'Type', 'Facility', 'Created', 'Actions']);
  // Another entity keeps its own columns.
  await page.getByLabel('Entity').selectOption({ label: 'Facilities' });
  await expect(table.getByRole('columnheader')).toHaveText(['Name', 'Type', 'Country', 'Address', 'Created', 'Updated', 'Actions']);
  await page.getByLabel('Entity').selectOption({ label: 'Equipment' });
  await page.getByRole('button', { name: 'Columns' }).click();
  await page.getByTestId('column-toggle').getByText('OEM').click();
  await page.getByTestId('column-toggle').getByText('Updated').click();
  await page.keyboard.press('Escape');
  await expect(table.getByRole('columnheader')).toHaveText(['Name', 'Type', 'OEM', 'Facility', 'Created', 'Updated', 'Actions']);
});
