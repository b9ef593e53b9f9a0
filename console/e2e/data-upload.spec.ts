/**
 * CSV upload end to end: a real Pioreactor export (api/demo-data) goes through the
 * unit-operation dialog, the preview of its first part, column assignment, the instrument wizard
 * (Save & Next, the unique-name rule, Save), the server-side upload with its progress bar, and ends
 * charted on the unit-operation detail.
 */
import { writeFileSync } from 'node:fs';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
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
  await expectToast(page, 'Wrote 21,888 points to 2 instruments; aliases saved.');
  await expect(dialog).toBeHidden();

  // Editing the unit operation previews the stored data: 20 time points.
  await page.getByRole('button', { name: 'Edit unit operation' }).click();
  const editDialog = page.getByRole('dialog', { name: 'Edit Unit Operation' });
  await expect(editDialog.getByTestId('csv-edit-preview').locator('tbody tr')).toHaveCount(20);
  await expect(editDialog.getByTestId('csv-edit-preview').locator('thead')).toContainText(`OD ${stamp}`);
  await screenshot(page, 'upload-4-edit-preview', testInfo);
  await editDialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(editDialog).toBeHidden();

  // The new unit operation charts the uploaded OD readings.
  await page.getByLabel('Fermentation unit operation').click();
  await expect(page).toHaveURL(/\/unit-operations\/\d+$/);
  await expect(page.getByTestId('parameter-list')).toContainText('optical_density [{a.u.}]');
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.bp-chart-legend-item')).toContainText(['optical_density [{a.u.}]']);
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible();
  await screenshot(page, 'upload-5-charted', testInfo);
});

test('reads an elapsed-time column from the unit operation start and flags unsure date formats', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Chi.Bio ${stamp}`);
  const instrument = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: 'od_measured', type: 'optical_density', unit: 'OD600', equipment_id: equipment.id,
  });
  const run = await createRun(request, session, facility.id, `Chi.Bio ${stamp}`, '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await dialog.locator('#unit-op-start').fill('2025-01-01T06:00');
  await dialog.locator('#unit-op-end').fill('2025-01-01T18:00');

  // Day/month order that no sample settles: the notice asks the user to check the dates.
  const ambiguous = testInfo.outputPath('ambiguous-dates.csv');
  writeFileSync(ambiguous, ['time,od_measured', ...Array.from({ length: 12 }, (_, i) => `0${(i % 9) + 1}/01/2025 06:${String(10 + i).padStart(2, '0')},0.${i + 1}`)].join('\n'));
  await dialog.locator('#csv-file').setInputFiles(ambiguous);
  await expect(dialog.getByTestId('date-confidence-notice')).toContainText('low confidence');

  // Chi.Bio writes seconds since the start: 61 readings, one a minute for an hour.
  const elapsed = testInfo.outputPath('chibio-elapsed.csv');
  writeFileSync(elapsed, ['exp_time,od_measured', ...Array.from({ length: 61 }, (_, i) => `${(i * 60 + 0.14).toFixed(2)},${(0.2 + i * 0.01).toFixed(3)}`)].join('\r\n'));
  await dialog.locator('#csv-file').setInputFiles(elapsed);
  await expect(dialog.getByLabel('Assignment of exp_time')).toHaveValue('timestamp');
  await expect(dialog.getByRole('radio', { name: "Elapsed time since the unit operation's start" })).toBeChecked();
  await expect(dialog.locator('#csv-elapsed-unit')).toHaveValue('seconds');
  await expect(dialog).toContainText('0 seconds = 2025-01-01 06:00');
  await screenshot(page, 'elapsed-1-mapping', testInfo);
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 61 points to 1 instrument; aliases saved.');

  const readings = await callJson<{ ts: string }[]>(request, session.token, 'GET',
    `/api/v1/time-series-data?instrument_id=${instrument.id}&start_time=2025-01-01T00:00:00.000Z&end_time=2025-01-02T00:00:00.000Z&limit=1000`);
  expect(readings).toHaveLength(61);
  expect(readings[0]!.ts).toBe('2025-01-01T06:00:00.140Z');
});
