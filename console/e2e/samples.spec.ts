/**
 * Samples end to end: a day's samples pasted from a spreadsheet into the unit operation's grid, a bad
 * cell marked in place and fixed from the keyboard, a unit the api refuses marked on its column, the
 * save, and the samples as markers on the chart beside the probes with their tooltip.
 */
import { expect, refusedRequests, test, type Page } from './support/quiet-console.ts';
import { adminSession, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createRunWithSeries, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1400 }, expectedConsoleMessages: refusedRequests() });

/** What a spreadsheet puts on the clipboard for a copied block: tab-separated rows. */
const DAY_OF_SAMPLES = [
  ['Sample ID', 'Drawn', 'VCD [10*6/mL] (Vi-CELL BLU)', 'Viability [%]', 'Glucose [g/L] (Cedex Bio)', 'Lactate [g/L]', 'Ammonium [grams]'],
  ['S-01', '2025-03-03 09:00', '0.45', '98.1', '5.2', '< 0.1', ''],
  ['S-02', '2025-03-03 15:00', '2.1', '97.4', '3.1', '0.4', '1.2'],
  ['S-03', '2025-03-03 21:00', '5.8', '96.0', 'n/a', '> 2', ''],
].map((row) => row.join('\t')).join('\r\n');

async function pasteInto(page: Page, testId: string, text: string): Promise<void> {
  await page.getByTestId(testId).evaluate((element, clipboard) => {
    const data = new DataTransfer();
    data.setData('text/plain', clipboard);
    element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

test('pastes a day of samples into the grid, saves them and shows them as markers on the chart', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
  await signInWithSession(page, session, `/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);

  const card = page.getByTestId('samples-card');
  await expect(card.getByRole('heading', { name: 'Samples 0' })).toBeVisible();
  const grid = page.getByTestId('samples-grid');
  const cell = (row: number, column: string) => grid.locator(`[data-row="${row}"][data-column="${column}"]`);

  await cell(1, 'Sample ID').click();
  await pasteInto(page, 'samples-grid', DAY_OF_SAMPLES);
  await expect(grid.locator('thead th')).toHaveText([
    '', 'Sample ID', 'Drawn', 'VCD [10*6/mL]Vi-CELL BLU', 'Viability [%]', 'Glucose [g/L]Cedex Bio', 'Lactate [g/L]', 'Ammonium [grams]', 'Notes',
  ]);
  await expect(cell(1, 'Lactate [g/L]')).toHaveText('< 0.1');
  await expect(cell(3, 'Lactate [g/L]')).toHaveText('> 2');

  // The console's own check: 'n/a' is no result, marked in its cell, and Save waits for it.
  await expect(cell(3, 'Glucose [g/L]')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('samples-problems')).toHaveText('1 cell needs attention; they are marked in the grid.');
  await expect(page.getByTestId('samples-save')).toBeDisabled();

  // Keyboard: from S-03's Glucose, typing replaces the cell and Enter commits and moves down.
  await cell(3, 'Glucose [g/L]').click();
  await page.keyboard.type('0,8');
  await page.keyboard.press('Enter');
  await expect(cell(3, 'Glucose [g/L]')).toHaveText('0,8');
  await expect(cell(3, 'Glucose [g/L]')).not.toHaveAttribute('aria-invalid', 'true');
  await expect(cell(4, 'Glucose [g/L]')).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Tab');
  await expect(cell(3, 'Lactate [g/L]')).toHaveAttribute('aria-selected', 'true');

  // The api refuses a unit that is not UCUM: nothing is saved, and the cell of that column says why.
  await page.getByTestId('samples-save').click();
  await expectToast(page, 'Samples not saved');
  await expect(cell(2, 'Ammonium [grams]')).toHaveAttribute('data-error', "'grams' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %).");
  await expect(card.getByRole('heading', { name: 'Samples 0' })).toBeVisible();
  await screenshot(page, 'samples-1-refused-unit', testInfo);

  // Delete clears the only result in that column, so the column saves nothing.
  await cell(2, 'Ammonium [grams]').click();
  await page.keyboard.press('Delete');
  await expect(cell(2, 'Ammonium [grams]')).toHaveText('');
  await page.getByTestId('samples-save').click();
  await expectToast(page, 'Samples saved');
  await expect(card.getByRole('heading', { name: 'Samples 3' })).toBeVisible();
  await expect(cell(3, 'Glucose [g/L]')).toHaveText('0.8');

  // On the chart: one marker series per analyte beside the temperature probe, on the axes of their units.
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    'Temperature A temperature [celsius]', 'VCD sample [10*6/mL]', 'Viability sample [%]', 'Glucose sample [g/L]', 'Lactate sample [g/L]',
  ]);
  await expect(chart.locator('.highcharts-markers.highcharts-scatter-series .highcharts-point')).toHaveCount(12);
  await expect(page.getByTestId('sample-analyte-list')).toContainText('Glucose');

  // The tooltip of S-03's lactate names the sample, its flagged result and what the flag means.
  const lactate = chart.locator('.highcharts-markers.highcharts-scatter-series').nth(3).locator('.highcharts-point').last();
  const box = (await lactate.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2 + 40, box.y + box.height / 2 + 20);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 5 });
  const tooltip = chart.locator('.bp-chart-tooltip');
  await expect(tooltip).toContainText('Lactate (sample S-03 · above the quantitation limit): > 2 g/L');
  await screenshot(page, 'samples-2-chart-markers', testInfo);

  // The glucose marker of S-01 carries its method.
  const glucose = chart.locator('.highcharts-markers.highcharts-scatter-series').nth(2).locator('.highcharts-point').first();
  const glucoseBox = (await glucose.boundingBox())!;
  await page.mouse.move(glucoseBox.x + glucoseBox.width / 2 + 30, glucoseBox.y + glucoseBox.height / 2);
  await page.mouse.move(glucoseBox.x + glucoseBox.width / 2, glucoseBox.y + glucoseBox.height / 2, { steps: 5 });
  await expect(tooltip).toContainText('Glucose (sample S-01 · Cedex Bio): 5.2 g/L');

  // After a reload the grid and the markers come from what was stored.
  await page.reload();
  await expect(card.getByRole('heading', { name: 'Samples 3' })).toBeVisible();
  await expect(cell(1, 'Lactate [g/L]')).toHaveText('< 0.1');
  await expect(cell(1, 'Drawn')).toHaveText('2025-03-03 09:00');
  await expect(chart.locator('.highcharts-markers.highcharts-scatter-series .highcharts-point')).toHaveCount(12);
});
