/**
 * Flagged cells and repeated times in the unit-operation dialog, end to end: the preview's repeated
 * time opens the duplicate choice, the user keeps the last row, and the finished upload tells how many
 * cells were flagged (with their text) and how many rows shared a time; what is stored is read back.
 */
import { writeFileSync } from 'node:fs';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

test('offers the duplicate choice when the preview repeats a time, and reports flagged cells and duplicates after the upload', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const instrument = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name: 'temp', type: 'temperature', unit: 'celsius', equipment_id: equipment.id });
  const run = await createRun(request, session, facility.id, `CSV flags ${stamp}`, '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z');

  const target = testInfo.outputPath('flags.csv');
  writeFileSync(target, [
    'time,temp', '2025-01-01T00:00:00Z,30.1', '2025-01-01T00:01:00Z,< 0.5', '2025-01-01T00:02:00Z,31.0',
    '2025-01-01T00:02:00Z,31.5', '2025-01-01T00:03:00Z,OVRFLW', '2025-01-01T00:04:00Z,32',
  ].join('\n'));

  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await dialog.locator('#unit-op-start').fill('2025-01-01T00:00');
  await dialog.locator('#unit-op-end').fill('2025-01-02T00:00');
  await dialog.locator('#csv-file').setInputFiles(target);
  await expect(dialog.getByLabel('Assignment of temp')).not.toHaveValue('empty');

  const choice = dialog.getByTestId('csv-duplicates');
  await expect(choice).toHaveAttribute('data-preview-duplicates', '1');
  await expect(dialog.getByTestId('csv-duplicates-notice')).toContainText('repeat 1 time(s) (first: 2025-01-01T00:02:00Z)');
  await expect(choice.getByLabel(/Refuse the file/)).toBeChecked();
  await choice.getByLabel('Keep the last row of each time').check({ force: true });
  await screenshot(page, 'csv-flags-1-duplicate-choice', testInfo);

  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, "2 flagged cell(s) stored as missing values: temp: 2 ('< 0.5', 'OVRFLW')");
  await expectToast(page, '1 time(s) appeared more than once for one instrument: the last row of each was kept and 1 row value(s) were not stored');
  await expectToast(page, 'Wrote 3 points to 1 instrument');
  await screenshot(page, 'csv-flags-2-result', testInfo);

  const readings = await callJson<{ ts: string; value: number }[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${instrument.id}`);
  expect(readings.map((reading) => [reading.ts, reading.value])).toEqual([
    ['2025-01-01T00:00:00.000Z', 30.1], ['2025-01-01T00:02:00.000Z', 31.5], ['2025-01-01T00:04:00.000Z', 32],
  ]);
});
