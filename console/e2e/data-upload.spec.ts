/**
 * CSV upload end to end (issue 8): a real Pioreactor export from ../shared/datasets goes through the
 * unit-operation dialog, the preview of its first part, column assignment, the instrument wizard
 * (Save & Next, the unique-name rule, Save), the server-side upload with its progress bar, and ends
 * charted on the unit-operation detail.
 */
import { expect, test } from '@playwright/test';
import { adminSession, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, PIOREACTOR_OD_FILE, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

test('uploads the Pioreactor OD export through the wizard and charts it', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Pioreactor ${stamp}`);
  const run = await createRun(request, session, facility.id, `Pioreactor OD ${stamp}`, '2025-02-26T10:00:00.000Z', '2025-02-27T02:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await dialog.locator('#unit-op-start').fill('2025-02-26T10:00');
  await dialog.locator('#unit-op-end').fill('2025-02-27T02:00');

  await dialog.locator('#csv-file').setInputFiles(PIOREACTOR_OD_FILE);
  const preview = dialog.getByTestId('csv-preview');
  await expect(preview.locator('tbody tr')).toHaveCount(10);
  // Cells are cut at 10 characters plus an ellipsis.
  await expect(preview.locator('tbody tr').first().locator('td').first()).toHaveText('2025-02-26...');
  await expect(dialog.getByLabel('Assignment of timestamp')).toHaveValue('timestamp');

  // Two columns become new instruments: the submit is blocked until the wizard has created them.
  for (const column of ['od_reading', 'angle']) {
    await dialog.getByRole('checkbox', { name: column, exact: true }).check({ force: true });
    await dialog.getByLabel(`Assignment of ${column}`).selectOption('new');
  }
  const blocked = dialog.getByRole('button', { name: 'Complete Instrument Setup First' });
  await expect(blocked).toBeDisabled();
  await screenshot(page, 'upload-1-preview-and-assignment', testInfo);

  await dialog.getByRole('button', { name: 'Set up instruments' }).click();
  const wizard = page.getByRole('dialog', { name: 'Set up instruments for CSV columns' });
  await expect(wizard.getByLabel('Name')).toHaveValue('od_reading');
  await expect(wizard.getByLabel('Type')).toHaveValue('optical_density');
  await expect(wizard.getByLabel('Alias')).toHaveValue('od_reading');
  await expect(wizard.getByLabel('Alias')).toBeDisabled();
  await wizard.getByLabel('Name').fill(`OD ${stamp}`);
  await screenshot(page, 'upload-2-wizard-step-1', testInfo);
  await wizard.getByRole('button', { name: 'Save & Next' }).click();
  await expectToast(page, 'Instrument Created');

  // Step 2: a name made earlier in the same wizard is taken, whatever its case.
  await expect(wizard.getByLabel('Alias')).toHaveValue('angle');
  await wizard.getByLabel('Name').fill(`od ${stamp}`.toUpperCase());
  await wizard.getByLabel('Type').selectOption('rotational_speed');
  await wizard.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(wizard).toContainText('There is already an instrument with this name, provide a different name.');
  await wizard.getByLabel('Name').fill(`Photodiode angle ${stamp}`);
  await wizard.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(wizard).toBeHidden();

  const create = dialog.getByRole('button', { name: 'Create', exact: true });
  await expect(create).toBeEnabled();
  await create.click();
  const progress = dialog.getByTestId('csv-upload-progress');
  await expect(progress).toBeVisible();
  await expect(progress).toHaveAttribute('data-phase', 'done', { timeout: 120_000 });
  await expect(dialog.getByTestId('csv-upload-counts')).toContainText('10,944 rows read · 21,888 points written');
  await screenshot(page, 'upload-3-progress-done', testInfo);
  await expectToast(page, 'CSV Upload Success');
  await expectToast(page, 'Replaced 2 instrument(s) with 21,888 points and saved aliases.');
  await expect(dialog).toBeHidden();

  // The new unit operation charts the uploaded OD readings.
  await page.getByText('Fermentation', { exact: true }).first().click();
  await expect(page).toHaveURL(/\/unit-operations\/\d+$/);
  await expect(page.getByTestId('parameter-list')).toContainText('optical_density [OD600]');
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.highcharts-legend-item')).toContainText(['optical_density [OD600]']);
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible();
  await screenshot(page, 'upload-4-charted', testInfo);
});
