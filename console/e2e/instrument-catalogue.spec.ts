/**
 * An organisation's own units: an admin adds a UCUM unit in Settings > Instruments (a code
 * that is not UCUM is refused, named), and the CSV wizard offers it beside the header's own unit,
 * which it keeps as written (mL/h, not L/h).
 */
import { writeFileSync } from 'node:fs';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { callJson } from './pages-helpers.ts';
import { signInWithSession, signUp } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 }, expectedConsoleMessages: refusedRequests(/error: Failed to add unit/) });

test('adds a unit in Settings and picks it in the instrument wizard', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  // A fresh organisation: its catalogue starts empty, whatever other tests add to the demo's.
  const session = await signUp(request, { name: 'Catalogue Admin' });
  const stamp = uniqueStamp();

  await signInWithSession(page, session, '/settings?tab=instruments');
  const units = page.getByTestId('catalogue-units');
  await expect(units).toContainText('No units of your own yet.');
  await page.getByLabel('UCUM code').fill('furlongs');
  await page.getByLabel('Label').fill('not a unit');
  await page.getByRole('button', { name: 'Add Unit' }).click();
  await expectToast(page, "'furlongs' is not a UCUM unit code");
  await page.getByLabel('UCUM code').fill('umol/L');
  await page.getByLabel('Label').fill('micromolar');
  await page.getByRole('button', { name: 'Add Unit' }).click();
  await expectToast(page, 'Unit added');
  await expect(units.locator('tbody tr')).toHaveText([/umol\/L\s*micromolar/]);

  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const run = await createRun(request, session, facility.id, `Catalogue ${stamp}`, '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z');
  const file = testInfo.outputPath('feed-and-glucose.csv');
  writeFileSync(file, ['timestamp,Feed [mL/h],Glucose probe',
    ...Array.from({ length: 12 }, (_, i) => `2025-01-01T06:${String(10 + i).padStart(2, '0')}:00Z,${12 + i},${300 + i}`)].join('\n'));

  await page.goto(`/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await dialog.locator('#unit-op-start').fill('2025-01-01T06:00');
  await dialog.locator('#unit-op-end').fill('2025-01-01T08:00');
  await dialog.locator('#csv-file').setInputFiles(file);
  for (const column of ['Feed [mL/h]', 'Glucose probe']) {
    await dialog.getByRole('checkbox', { name: column, exact: true }).check({ force: true });
    await dialog.getByLabel(`Assignment of ${column}`).selectOption('new');
  }
  await dialog.getByRole('button', { name: 'Set up instruments' }).click();
  const wizard = page.getByRole('dialog', { name: 'Set up instruments for CSV columns' });

  // The header's unit, as written: a factor of 1,000 away from L/h.
  await expect(wizard.getByLabel('Type')).toHaveValue('feed_rate');
  await expect(wizard.getByLabel('Unit')).toHaveValue('mL/h');
  await expect(wizard).toContainText("From the column's header: mL/h, stored as written.");
  await wizard.getByRole('button', { name: 'Save & Next' }).click();
  await expectToast(page, 'Instrument Created');

  // No unit in the header: arbitrary units, until the user picks the organisation's own.
  await expect(wizard.getByLabel('Type')).toHaveValue('metabolite_concentration');
  await expect(wizard.getByLabel('Unit')).toHaveValue('{a.u.}');
  await expect(wizard.getByLabel('Unit').locator('option', { hasText: 'umol/L (micromolar)' })).toHaveCount(1);
  await wizard.getByLabel('Unit').selectOption('umol/L');
  await wizard.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(wizard).toBeHidden();

  const instruments = await callJson<{ name: string; type: string; unit: string }[]>(request, session.token, 'GET', `/api/v1/equipment/${equipment.id}/instruments`);
  expect(instruments.map(({ name, type, unit }) => ({ name, type, unit }))).toEqual([
    { name: 'Feed [mL/h]', type: 'feed_rate', unit: 'mL/h' },
    { name: 'Glucose probe', type: 'metabolite_concentration', unit: 'umol/L' },
  ]);
});
