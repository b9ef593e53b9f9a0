/**
 * Import report end to end: a scientist imports the real Nova BioProfile FLEX2 report into a unit
 * operation whose grid holds three of its sample IDs, sees the preview (matched samples, results to
 * add, the IDs it cannot match, the value it cannot read) and then the results in the grid and as
 * markers on the chart; a flagged result exported (wide) from one unit operation and imported into
 * another keeps its flag; and the real Vi-CELL XR single-sample report (key : value lines) is read in
 * the browser and imported by accepting what the dialog proposes.
 */
import { readFile } from 'node:fs/promises';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { adminSession, call, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createRunWithSeries, expectToast, uniqueStamp } from './data-fixtures.ts';
import { realExportPath } from '../../shared/test-data/real-exports.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1400 }, expectedConsoleMessages: refusedRequests() });

const NOVA = 'SampleResultsDEVICE1232021-02-18_104838.csv';
const VI_CELL_XR = 'Beckman_Vi-Cell-XR_example07_instrumentOutput.txt';

test('imports an analyzer report into the grid\'s samples, with a preview first, and shows the results on the chart', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${fixture.unitOperationId}/samples`, { samples: [
    { sample_id: 'SAMPLE 0001', drawn_at: '2025-03-03T10:00:00.000Z', results: [] },
    { sample_id: 'Sample 0002', drawn_at: '2025-03-03T16:00:00.000Z', results: [] },
    { sample_id: 'SAMPLE 0003', drawn_at: '2025-03-03T22:00:00.000Z', results: [] },
  ] });
  // The chart reads the readings just written once they are summarised (a busy machine may take a while).
  const readings = `/api/v1/time-series-data?instrument_id=${fixture.instruments.temperature}&start_time=2025-03-03T08:00:00.000Z&end_time=2025-03-04T08:00:00.000Z&limit=10`;
  await expect.poll(async () => (await call(request, session.token, 'GET', readings)).status(), { timeout: 60_000 }).toBe(200);
  await signInWithSession(page, session, `/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);
  const card = page.getByTestId('samples-card');
  await expect(card.getByRole('heading', { name: 'Samples 3' })).toBeVisible();

  await card.getByTestId('samples-import-report').click();
  const dialog = page.getByRole('dialog', { name: 'Import report' });
  await dialog.locator('#report-file').setInputFiles(realExportPath(NOVA));
  await expect(dialog.getByTestId('report-import-detected')).toHaveText("Detected: Nova Biomedical BioProfile FLEX2, ','-separated, utf-8, header on line 1, 6 rows.", { timeout: 30_000 });
  // Samples the grid lacks are created only when a drawn-time column is chosen: none is proposed.
  await expect(dialog.locator('#report-drawn')).toHaveValue('');
  await expect(dialog.getByTestId('report-sample-id')).toHaveValue('Sample ID');
  await expect(dialog.locator('#report-measured')).toHaveValue('Date  Time');

  const analytes = dialog.getByTestId('report-import-analytes');
  for (const [column, analyte, unit] of [['Gluc', 'Glucose', 'g/L'], ['Lac', 'Lactate', 'g/L'], ['Viable Density', 'VCD', '10*6/mL']]) {
    await analytes.getByRole('checkbox', { name: `Import ${column}` }).check({ force: true });
    await analytes.getByRole('textbox', { name: `Analyte of ${column}` }).fill(analyte!);
    await analytes.getByRole('textbox', { name: `Unit of ${column}` }).fill(unit!);
  }
  await dialog.locator('#report-method').fill('BioProfile FLEX2');
  await dialog.getByTestId('report-import-preview').click();

  const summary = dialog.getByTestId('report-import-summary');
  await expect(summary.getByTestId('report-import-matched')).toHaveText('3');
  await expect(summary.getByTestId('report-import-added')).toHaveText('7');
  await expect(summary.getByTestId('report-import-unmatched')).toContainText('3 sample IDs not in this unit operation');
  await expect(summary.getByTestId('report-import-unmatched').locator('.bp6-tag')).toHaveText(['SAMPLE 0004', 'SAMPLE 0005', 'SAMPLE 0006']);
  await expect(summary.getByTestId('report-import-unreadable')).toContainText("Viable Density: '10.00%' is not a number or a flagged limit (< 0.5, > 50).");
  await screenshot(page, 'samples-import-1-preview', testInfo);
  // Nothing is written by the preview.
  await expect(card.getByRole('heading', { name: 'Samples 3' })).toBeVisible();

  await dialog.getByTestId('report-import-submit').click();
  await expectToast(page, 'Report imported');
  await expect(dialog).toBeHidden();
  const grid = page.getByTestId('samples-grid');
  const cell = (row: number, column: string) => grid.locator(`[data-row="${row}"][data-column="${column}"]`);
  await expect(cell(1, 'Glucose [g/L]')).toHaveText('0.78');
  await expect(cell(2, 'Lactate [g/L]')).toHaveText('0');
  await expect(cell(1, 'VCD [10*6/mL]')).toHaveText('0');

  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    'Temperature A temperature [celsius]', 'Glucose sample [g/L]', 'Lactate sample [g/L]', 'VCD sample [10*6/mL]',
  ]);
  await expect(chart.locator('.highcharts-markers.highcharts-scatter-series .highcharts-point')).toHaveCount(7);
  await screenshot(page, 'samples-import-2-chart', testInfo);
});

test('a flagged result exported wide from one unit operation and imported into another keeps its flag', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const a = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');
  const b = await createRunWithSeries(request, session, stamp, 'B', '2025-04-10T06:00:00.000Z');
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${a.unitOperationId}/samples`, { samples: [
    { sample_id: 'S-01', drawn_at: '2025-03-03T09:00:00.000Z', results: [{ analyte: 'Glucose', value: 5.2, unit: 'g/L', method: 'Cedex Bio' }] },
    { sample_id: 'S-02', drawn_at: '2025-03-03T20:00:00.000Z', results: [{ analyte: 'Glucose', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio' }] },
  ] });
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${b.unitOperationId}/samples`, { samples: [
    { sample_id: 'S-01', drawn_at: '2025-04-10T07:00:00.000Z', results: [] },
    { sample_id: 'S-02', drawn_at: '2025-04-10T18:00:00.000Z', results: [] },
  ] });

  await signInWithSession(page, session, `/runs/${a.run.id}/unit-operations/${a.unitOperationId}`);
  const card = page.getByTestId('samples-card');
  const [file] = await Promise.all([page.waitForEvent('download'), card.getByTestId('samples-export-wide').click()]);
  const exported = (await file.path())!;
  expect(await readFile(exported, 'utf8')).toContain('S-02,2025-03-03T20:00:00.000Z,< 0.5,');

  await page.goto(`/runs/${b.run.id}/unit-operations/${b.unitOperationId}`);
  await expect(card.getByRole('heading', { name: 'Samples 2' })).toBeVisible();
  await card.getByTestId('samples-import-report').click();
  const dialog = page.getByRole('dialog', { name: 'Import report' });
  await dialog.locator('#report-file').setInputFiles({ name: 'samples-wide.csv', mimeType: 'text/csv', buffer: await readFile(exported) });
  // The grid's own header is read: analyte, unit and method.
  const analytes = dialog.getByTestId('report-import-analytes');
  await expect(analytes.getByRole('textbox', { name: 'Analyte of Glucose [g/L] (Cedex Bio)' })).toHaveValue('Glucose');
  await expect(analytes.getByRole('textbox', { name: 'Unit of Glucose [g/L] (Cedex Bio)' })).toHaveValue('g/L');
  await expect(dialog.locator('#report-method')).toHaveValue('Cedex Bio');
  // The drawn times of the other unit operation are not these tubes' own: the grid's are kept.
  await expect(dialog.locator('#report-drawn')).toHaveValue('');
  await analytes.getByRole('checkbox', { name: 'Import Glucose [g/L] (Cedex Bio)' }).check({ force: true });
  await dialog.getByTestId('report-import-preview').click();
  await expect(dialog.getByTestId('report-import-flags')).toHaveText('1');
  await screenshot(page, 'samples-import-3-flag-preview', testInfo);
  await dialog.getByTestId('report-import-submit').click();
  await expectToast(page, 'Report imported');
  const grid = page.getByTestId('samples-grid');
  await expect(grid.locator('[data-row="2"][data-column="Glucose [g/L]"]')).toHaveText('< 0.5');
  await expect(grid.locator('[data-row="1"][data-column="Glucose [g/L]"]')).toHaveText('5.2');
  await expect(grid.locator('[data-row="2"][data-column="Drawn"]')).toHaveText('2025-04-10 18:00');
});

test('a Vi-CELL XR key : value report is read as one sample and imported by accepting the proposal', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
  await callJson(request, session.token, 'PUT', `/api/v1/unit-operations/${fixture.unitOperationId}/samples`, { samples: [
    { sample_id: 'CLB001', drawn_at: '2025-03-03T10:00:00.000Z', results: [] },
  ] });
  await signInWithSession(page, session, `/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);
  const card = page.getByTestId('samples-card');
  await expect(card.getByRole('heading', { name: 'Samples 1' })).toBeVisible();
  await card.getByTestId('samples-import-report').click();
  const dialog = page.getByRole('dialog', { name: 'Import report' });
  await dialog.locator('#report-file').setInputFiles(realExportPath(VI_CELL_XR));
  await expect(dialog.getByTestId('report-import-detected')).toHaveText("Detected: a key/value report of one sample, ':' between key and value, utf-8, 59 keys.", { timeout: 30_000 });
  await expect(dialog.getByTestId('report-sample-id')).toHaveValue('Sample ID');
  await expect(dialog.locator('#report-measured')).toHaveValue('RunDate');
  const analytes = dialog.getByTestId('report-import-analytes');
  for (const [column, unit] of [['Viability (%)', '%'], ['Total cells / ml (x 10^6)', '10*6/mL'], ['Total viable cells / ml (x 10^6)', '10*6/mL'], ['Average diameter (microns)', 'um']]) {
    await expect(analytes.getByRole('checkbox', { name: `Import ${column}` })).toBeChecked();
    await expect(analytes.getByRole('textbox', { name: `Unit of ${column}` })).toHaveValue(unit!);
  }
  // A setting of the count is offered, not chosen.
  await expect(analytes.getByRole('checkbox', { name: 'Import Minimum diameter (microns)' })).not.toBeChecked();
  await dialog.getByTestId('report-import-preview').click();
  await expect(dialog.getByTestId('report-import-matched')).toHaveText('1');
  await expect(dialog.getByTestId('report-import-added')).toHaveText('4');
  await screenshot(page, 'samples-import-4-key-value', testInfo);
  await dialog.getByTestId('report-import-submit').click();
  await expectToast(page, 'Report imported');
  const grid = page.getByTestId('samples-grid');
  await expect(grid.locator('[data-row="1"][data-column="Viability [%]"]')).toHaveText('97');
  await expect(grid.locator('[data-row="1"][data-column="Total cells [10*6/mL]"]')).toHaveText('90.2');
  await expect(grid.locator('[data-row="1"][data-column="Average diameter [um]"]')).toHaveText('17.3');
});
