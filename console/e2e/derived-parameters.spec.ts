/**
 * Derived parameters end to end: the library in Data management, a formula written with a mistake
 * (marked at its position), previewed on a unit operation, saved, edited into a new version, and drawn
 * dashed beside the readings on the unit-operation chart.
 */
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { signInWithSession } from './support/auth.ts';
import { adminSession, screenshot } from './pages-helpers.ts';
import { createRunWithSeries, expectToast, uniqueStamp } from './data-fixtures.ts';

// OUR needs off-gas instruments the fixture's equipment lacks: its 400 is asked for on purpose.
test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1100 }, expectedConsoleMessages: refusedRequests() });

test('write, preview, save and chart a derived parameter', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const fixture = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');
  const name = `Temperature F ${stamp}`;

  await signInWithSession(page, session, '/data');
  await page.getByRole('tab', { name: 'Derived Parameters' }).click();
  await expect(page).toHaveURL(/view=derived/);
  const table = page.getByTestId('derived-table');
  for (const builtIn of ['OUR', 'CER', 'RQ', 'Specific growth rate', 'Cumulative feed']) await expect(table).toContainText(builtIn);

  await page.getByRole('button', { name: 'Create derived parameter' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Unit').fill('degF');
  await dialog.getByLabel('Formula').fill('[temperature] * * 9 / 5 + 32');
  await expect(dialog.getByTestId('expression-error')).toContainText('Position 17: Expected expression after *');
  await dialog.getByLabel('Formula').fill('[temperature] * 9 / 5 + 32');
  await expect(dialog.getByTestId('expression-error')).toBeHidden();
  await dialog.getByLabel('Preview on').selectOption(String(fixture.unitOperationId));
  await expect(dialog.getByTestId('derived-preview').locator('.highcharts-series path.highcharts-graph')).toHaveCount(1);
  await screenshot(page, 'derived-1-editor', testInfo);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expectToast(page, 'Derived parameter created');
  const row = table.getByRole('row').filter({ hasText: name });
  await expect(row).toContainText('[temperature] * 9 / 5 + 32');
  await expect(row.getByRole('cell').nth(3)).toHaveText('1');

  await row.getByRole('button', { name: `Edit ${name}` }).click();
  await expect(dialog).toContainText('version 1');
  await dialog.getByLabel('Formula').fill('([temperature] * 9 / 5) + 32');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expectToast(page, 'Derived parameter updated');
  await expect(row.getByRole('cell').nth(3)).toHaveText('2');

  await page.goto(`/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);
  const derivedList = page.getByTestId('derived-parameter-list');
  await derivedList.getByRole('checkbox', { name: new RegExp(name) }).check({ force: true });
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.bp-chart-legend-item').filter({ hasText: name })).toBeVisible();
  await expect(chart.locator('.highcharts-series path.highcharts-graph')).toHaveCount(2);
  // A formula this unit operation cannot compute says why.
  await derivedList.getByRole('checkbox', { name: /^OUR/ }).check({ force: true });
  await expect(derivedList.getByRole('alert')).toContainText('Unknown reference');
  await screenshot(page, 'derived-2-chart', testInfo);
});
