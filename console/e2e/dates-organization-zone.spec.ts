/**
 * Dates are read and shown in the organisation's zone, named beside the fields, whatever zone the
 * browser runs in: a colleague abroad sees and types a run's times as the site does.
 */
import { expect, test } from './support/quiet-console.ts';
import { callJson } from './pages-helpers.ts';
import { signInWithSession, signUp } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'Asia/Tokyo', viewport: { width: 1440, height: 1000 } });

test("a browser in Tokyo shows and reads times in the organisation's New York zone", async ({ page, request }, testInfo) => {
  const session = await signUp(request, { name: 'Zone Admin' });
  await callJson(request, session.token, 'PUT', '/api/v1/organization-settings', { time_zone: 'America/New_York' });
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  // 15:00 UTC: 10:00 in New York, 00:00 the next day in Tokyo.
  const run = await createRun(request, session, facility.id, `Zones ${stamp}`, '2026-01-15T15:00:00.000Z', null);

  await signInWithSession(page, session, `/runs/${run.id}`);
  await expect(page.getByText('2026-01-15 10:00').first()).toBeVisible();
  await expect(page.getByText('2026-01-16 00:00')).toHaveCount(0);

  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const create = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await expect(create.locator('.app-date-time-zone').first()).toHaveText('America/New_York');
  await create.locator('#unit-op-type').selectOption('fermentation');
  await create.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await create.locator('#unit-op-start').fill('2026-01-15 11:30');
  await page.screenshot({ path: testInfo.outputPath('organization-zone-dialog.png') });
  await create.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(create).toHaveCount(0);

  const operations = await callJson<Array<{ start_time: string }>>(request, session.token, 'GET', `/api/v1/runs/${run.id}/unit-operations`);
  expect(operations.map((operation) => Date.parse(operation.start_time))).toEqual([Date.parse('2026-01-15T16:30:00.000Z')]);

  // The settings show the zone stored (they read a key the answer does not have and showed none).
  await page.goto('/settings');
  await expect(page.locator('#organization-time-zone')).toHaveValue('America/New_York');
  await expect(page.locator('main')).toHaveAttribute('data-time-zone', 'America/New_York');
});
