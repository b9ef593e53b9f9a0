/**
 * The CSV wizard says which time zone it will read timestamps in, beside the first timestamps as they
 * will be stored: the file's own (the real DASware export writes UTC), or a choice that starts at the
 * organisation's zone. The browser's own zone plays no part (this browser runs in Tokyo).
 */
import { writeFileSync } from 'node:fs';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, realExportPath, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'Asia/Tokyo', viewport: { width: 1440, height: 1000 } });

test('shows the zone the upload will use beside full timestamps', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const run = await createRun(request, session, facility.id, `Zones ${stamp}`, '2020-07-14T00:00:00.000Z', null);

  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));

  await dialog.locator('#csv-file').setInputFiles(realExportPath('CTPC06603.20200714 - 5GB1 - KDB.Control.csv'));
  const zone = dialog.getByTestId('csv-time-zone');
  await expect(zone).toHaveAttribute('data-zone-source', 'file');
  await expect(zone.getByTestId('csv-time-zone-name')).toHaveText('UTC');
  await expect(zone).toContainText('TimezoneBias 120');
  await expect(zone.getByTestId('csv-zone-preview').locator('tbody tr').first()).toContainText('2020-07-14 09:55:33');
  await expect(zone.getByTestId('csv-zone-preview').locator('tbody tr').first()).toContainText('2020-07-14 09:55:33 UTC');

  const local = testInfo.outputPath('local-times.csv');
  writeFileSync(local, 'time,v\n2021-10-31 02:30:00,1\n2021-10-31 03:30:00,2\n');
  await dialog.locator('#csv-file').setInputFiles(local);
  await expect(zone).toHaveAttribute('data-zone-source', 'user');
  const select = zone.getByTestId('csv-time-zone-name');
  const settings = await callJson<{ time_zone: string }>(request, session.token, 'GET', '/api/v1/organization-settings');
  await expect(select).toHaveValue(settings.time_zone);
  await select.selectOption('Europe/Amsterdam');
  const rows = zone.getByTestId('csv-zone-preview').locator('tbody tr');
  await expect(rows.nth(0)).toContainText('2021-10-31 00:30:00 UTC');
  await expect(rows.nth(1)).toContainText('2021-10-31 02:30:00 UTC');

  // The Chronograf export is long format: one instrument per reactor position, all 48 keys offered.
  await dialog.locator('#csv-file').setInputFiles(realExportPath('O2_2021-10-01-10-59 Chronograf Data.csv'));
  await expect(zone).toHaveAttribute('data-zone-source', 'file');
  await dialog.getByRole('checkbox', { name: 'Presens_data.O2_value', exact: true }).check({ force: true });
  await dialog.getByTestId('csv-long-format-toggle').check({ force: true });
  const long = dialog.getByTestId('csv-long-format');
  await long.locator('#csv-key-column').selectOption('position');
  await expect(long).toContainText('48 key(s) in the first rows');
  await expect(long).toContainText('48 instrument(s) to create');
  await expect(long).toContainText('Presens_data.O2_value (position 0)');
  await expect(dialog.getByRole('button', { name: 'Complete Instrument Setup First' })).toBeDisabled();
});
