/**
 * Samples end to end: a day's samples pasted from a spreadsheet into the unit operation's grid, a bad
 * cell marked in place and fixed from the keyboard, a unit the api refuses marked on its column, the
 * save, and the samples as markers on the chart beside the probes with their tooltip; then samples
 * exported (wide, to paste back, and long) and drawn in Compare beside the on-line series of each run.
 */
import { readFile } from 'node:fs/promises';
import { expect, refusedRequests, test, type Page } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
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

  // The glucose marker of S-01 carries its method. Its marker sits on the temperature line, whose
  // nearer reading the shared tooltip would show: the probe is hidden first.
  await page.getByRole('checkbox', { name: /Temperature A/ }).uncheck({ force: true });
  await expect(chart.locator('.bp-chart-legend-item')).toHaveCount(4);
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

test('exports the samples wide and long, and shows them in Compare on each run\'s elapsed time', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const a = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');
  const b = await createRunWithSeries(request, session, stamp, 'B', '2025-04-10T06:00:00.000Z');
  const glucose = (value: number, flag: 'below_limit' | null = null) => ({ analyte: 'Glucose', value, flag, unit: 'g/L', method: 'Cedex Bio' });
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${a.unitOperationId}/samples`, { samples: [
    { sample_id: 'A-01', drawn_at: '2025-03-03T09:00:00.000Z', results: [glucose(5.2), { analyte: 'VCD', value: 0.45, unit: '10*6/mL' }] },
    { sample_id: 'A-02', drawn_at: '2025-03-03T20:00:00.000Z', results: [glucose(0.5, 'below_limit')] },
  ] });
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${b.unitOperationId}/samples`, { samples: [
    { sample_id: 'B-01', drawn_at: '2025-04-10T12:00:00.000Z', results: [glucose(4.1)] },
  ] });

  await signInWithSession(page, session, `/runs/${a.run.id}/unit-operations/${a.unitOperationId}`);
  const card = page.getByTestId('samples-card');
  await expect(card.getByRole('heading', { name: 'Samples 2' })).toBeVisible();
  const download = async (testId: string) => {
    const [file] = await Promise.all([page.waitForEvent('download'), card.getByTestId(testId).click()]);
    return { name: file.suggestedFilename(), text: await readFile((await file.path())!, 'utf8') };
  };
  const wide = await download('samples-export-wide');
  expect(wide.name).toMatch(new RegExp(`^unit-operation-${a.unitOperationId}-\\d{8}T\\d{6}-samples-wide\\.csv$`));
  expect(wide.text.split('\r\n')).toEqual([
    'Sample ID,Drawn,Glucose [g/L] (Cedex Bio),VCD [10*6/mL],Notes',
    'A-01,2025-03-03T09:00:00.000Z,5.2,0.45,',
    'A-02,2025-03-03T20:00:00.000Z,< 0.5,,',
    '',
  ]);
  const long = await download('samples-export-long');
  expect(long.text).toContain(`${a.unitOperationId},A-02,2025-03-03T20:00:00.000Z,43200,Glucose,,below_limit,0.5,g/L,Cedex Bio,,`);

  // The wide file pasted back into the grid it came from changes nothing.
  await card.getByTestId('samples-grid').locator('[data-row="1"][data-column="Sample ID"]').click();
  await pasteInto(page, 'samples-grid', wide.text.trim().split('\r\n').map((line) => line.split(',').join('\t')).join('\r\n'));
  await expect(page.getByTestId('samples-save')).toBeDisabled();

  await page.goto('/runs/compare');
  const search = page.getByPlaceholder('Search runs by name, ID, strain, description...');
  await search.fill(stamp);
  await page.getByRole('checkbox', { name: new RegExp(`Fed-batch A ${stamp}`) }).check({ force: true });
  await page.getByRole('checkbox', { name: new RegExp(`Fed-batch B ${stamp}`) }).check({ force: true });
  const samples = page.getByTestId('compare-samples');
  await expect(samples.getByRole('checkbox')).toHaveCount(2);
  await samples.getByRole('checkbox', { name: 'Glucose [g/L]' }).check({ force: true });
  const chart = page.getByTestId('compare-chart');
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    `Fed-batch A ${stamp} - pH A pH [pH]`, `Fed-batch B ${stamp} - pH B pH [pH]`,
    `Fed-batch A ${stamp} - Glucose sample [g/L]`, `Fed-batch B ${stamp} - Glucose sample [g/L]`,
  ]);
  const markers = chart.locator('.highcharts-markers.highcharts-scatter-series');
  await expect(markers.locator('.highcharts-point')).toHaveCount(3);
  // Each run's markers in its colour, the same as its on-line series.
  const lineColors = await chart.locator('.highcharts-series path.highcharts-graph').evaluateAll((paths) => paths.map((p) => p.getAttribute('stroke')));
  const markerColors = await markers.evaluateAll((groups) => groups.map((group) => group.querySelector('.highcharts-point')?.getAttribute('fill')));
  expect(markerColors).toEqual(lineColors);

  // Only the samples left: the tooltip is the marker's, not the nearest on-line reading's.
  await page.getByTestId('compare-parameters').getByRole('checkbox', { name: 'pH [pH]' }).uncheck({ force: true });
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([`Fed-batch A ${stamp} - Glucose sample [g/L]`, `Fed-batch B ${stamp} - Glucose sample [g/L]`]);
  // A-02 drawn 12 h after its run's start, B-01 6 h after its own: on the same elapsed axis, A-02 lies right of B-01.
  const [a02, b01] = [markers.nth(0).locator('.highcharts-point').last(), markers.nth(1).locator('.highcharts-point').first()];
  const a02Box = (await a02.boundingBox())!;
  const b01Box = (await b01.boundingBox())!;
  expect(a02Box.x).toBeGreaterThan(b01Box.x);
  await page.mouse.move(a02Box.x + a02Box.width / 2 + 40, a02Box.y + a02Box.height / 2 - 20);
  await page.mouse.move(a02Box.x + a02Box.width / 2, a02Box.y + a02Box.height / 2, { steps: 5 });
  await expect(chart.locator('.bp-chart-tooltip')).toContainText(`Fed-batch A ${stamp} - Glucose (sample A-02 · below the quantitation limit · Cedex Bio): < 0.5 g/L`);
  await screenshot(page, 'samples-3-compare-markers', testInfo);
});
