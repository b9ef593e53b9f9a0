/**
 * A unit operation's window follows its data, walked as a scientist would:
 * an open-ended unit operation filled from the Pioreactor export through the wizard (accepting the
 * default) closes at the file's last reading, reads Completed, is charted over its 15 hours of data
 * (the x axis read from Highcharts in the page), and offers only the instruments holding readings
 * (the others one switch away); a second upload on the same equipment overlapping it is refused in
 * the wizard's first step, naming the first unit operation, before anything is mapped.
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, PIOREACTOR_OD_FILE, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

const START = '2025-02-26T10:00:00.000Z';
/** The export's first and last reading (2025-02-26T10:27:40.854742Z, 2025-02-27T01:39:35.841555Z). */
const FIRST_READING_MS = Date.parse('2025-02-26T10:27:40.854Z');
const LAST_READING_MS = Date.parse('2025-02-27T01:39:35.841Z');

interface XAxisExtremes { min: number; max: number; dataMin: number; dataMax: number; points: number }

test('an upload closes an open-ended unit operation at its last reading; an overlapping file is refused before mapping', async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Pioreactor ${stamp}`);
  const od = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: 'od_reading', type: 'optical_density', unit: 'OD600', equipment_id: equipment.id,
  });
  // An instrument of the same equipment that this file never feeds.
  const idle = await callJson<{ id: number; name: string }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: `Temperature ${stamp}`, type: 'temperature', unit: 'celsius', equipment_id: equipment.id,
  });
  const runName = `Pioreactor OD ${stamp}`;
  const run = await createRun(request, session, facility.id, runName, '2025-02-26T09:00:00.000Z', null);
  const first = await callJson<{ id: number; end_time: string | null; status: string }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: START, end_time: null,
  });
  expect(first.end_time).toBeNull();

  // The wizard reads the file's end before anything is mapped, and asks to close at its last reading.
  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Edit unit operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Edit Unit Operation' });
  await dialog.locator('#csv-file').setInputFiles(PIOREACTOR_OD_FILE);
  await expect(dialog.getByTestId('window-check-fits')).toContainText('Readings from 2025-02-26 10:27 to 2025-02-27 01:39');
  const openEnd = dialog.getByTestId('open-end-choice');
  await expect(openEnd).toContainText("This unit operation has no end. Close it at the file's last reading (2025-02-27 01:39)?");
  await expect(openEnd.getByRole('radio', { name: "Close it at the file's last reading" })).toBeChecked();
  await expect(dialog.getByLabel('Assignment of od_reading')).toHaveValue(`existing:${od.id}`);
  await openEnd.scrollIntoViewIfNeeded();
  await screenshot(page, 'window-1-open-end-question', testInfo);

  await dialog.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(dialog.getByTestId('csv-upload-progress')).toHaveAttribute('data-phase', 'done', { timeout: 120_000 });
  await expectToast(page, 'Wrote 10,944 points to 1 instrument');
  await expect(dialog).toBeHidden();

  // Closed at the last reading written, so the unit operation is Completed.
  const closed = await callJson<{ end_time: string | null; status: string }>(request, session.token, 'GET', `/api/v1/unit-operations/${first.id}`);
  expect(Math.floor(Date.parse(closed.end_time ?? ''))).toBe(LAST_READING_MS);
  expect(closed.status).toBe('Completed');

  await page.goto(`/runs/${run.id}/unit-operations/${first.id}`);
  const detail = page.getByTestId('unit-operation-detail');
  await expect(detail.locator('.uo-header-card')).toContainText('Completed');
  await expect(detail.locator('.uo-header-fields')).toContainText('2025-02-27 01:39');

  // The parameters offered are the instruments with data; the equipment's others sit behind the switch.
  const parameters = page.getByTestId('parameter-list');
  await expect(parameters).toContainText('od_reading');
  await expect(parameters).not.toContainText(idle.name);
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible();
  const extremes = await page.evaluate(() => {
    const hc = (window as unknown as { _Highcharts?: { charts: unknown[] }; Highcharts?: { charts: unknown[] } });
    const charts = (hc._Highcharts ?? hc.Highcharts)?.charts ?? [];
    type Axis = { getExtremes(): { min: number; max: number; dataMin: number; dataMax: number } };
    type Chart = { renderTo: HTMLElement; xAxis: Axis[]; series: Array<{ points?: unknown[] }> };
    const drawn = (charts as Array<Chart | undefined>).find((c) => c?.renderTo.closest('[data-testid="process-parameters-chart"]'));
    if (!drawn) return null;
    const axis = drawn.xAxis[0]!.getExtremes();
    return { min: axis.min, max: axis.max, dataMin: axis.dataMin, dataMax: axis.dataMax, points: drawn.series[0]?.points?.length ?? 0 };
  }) as XAxisExtremes | null;
  expect(extremes).not.toBeNull();
  // Minutes since the start: drawn from the start to the last reading (15.7 h), never before the start nor to 'now'.
  expect(extremes!.min).toBeGreaterThanOrEqual(0);
  expect(extremes!.max / 60).toBeGreaterThan(15);
  expect(extremes!.max / 60).toBeLessThan(16.5);
  expect(extremes!.dataMin).toBeGreaterThanOrEqual((FIRST_READING_MS - Date.parse(START)) / 60_000 - 1);
  expect(extremes!.dataMax).toBeLessThanOrEqual((LAST_READING_MS - Date.parse(START)) / 60_000 + 1);
  expect(extremes!.points).toBeGreaterThan(100);
  await screenshot(page, 'window-2-charted-over-its-data', testInfo);

  await parameters.getByText('Show all instruments of the equipment').click();
  await expect(parameters).toContainText(idle.name);

  // The export dialog offers only the instrument with data, the others behind the same switch.
  await page.getByRole('button', { name: 'Export', exact: true }).click();
  const exportDialog = page.getByRole('dialog', { name: 'Export Data' });
  await expect(exportDialog.getByRole('checkbox', { name: 'od_reading [OD600]' })).toBeChecked();
  await expect(exportDialog.getByRole('checkbox', { name: `${idle.name} [celsius]` })).toHaveCount(0);
  await screenshot(page, 'window-3-export-instruments-with-data', testInfo);
  await exportDialog.getByText('Show all instruments of the equipment').click();
  await expect(exportDialog.getByRole('checkbox', { name: `${idle.name} [celsius]` })).toBeVisible();
  await exportDialog.getByRole('button', { name: 'Cancel' }).click();

  // Formula references offer, on the unit operation previewed, its instruments with data; the rest behind the switch.
  await page.goto('/data?view=derived');
  await page.getByRole('button', { name: 'Create derived parameter' }).click();
  const formula = page.getByRole('dialog', { name: 'Create derived parameter' });
  await formula.getByLabel('Preview on').selectOption(String(first.id));
  const references = formula.getByTestId('formula-references');
  await expect(references.getByRole('button', { name: '[od_reading]' })).toBeVisible();
  await expect(references).not.toContainText(idle.name);
  await references.getByRole('button', { name: '[od_reading]' }).click();
  await expect(formula.getByLabel('Formula')).toHaveValue('[od_reading]');
  await screenshot(page, 'window-4-formula-references', testInfo);
  await formula.getByText('Show all instruments of the equipment').click();
  await expect(references.getByRole('button', { name: `["${idle.name}"]` })).toBeVisible();
  await formula.getByRole('button', { name: 'Cancel' }).click();

  // A second unit operation on the same equipment whose file overlaps the first: refused at once, naming it.
  await page.goto(`/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const create = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await create.locator('#unit-op-type').selectOption('fermentation');
  await create.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await create.locator('#unit-op-start').fill('2025-02-26T12:00');
  await create.locator('#csv-file').setInputFiles(PIOREACTOR_OD_FILE);
  const conflict = create.getByTestId('window-check-conflict');
  await expect(conflict).toContainText("The file's time range overlaps another unit operation");
  await expect(conflict).toContainText(`unit operation ${first.id} (Fermentation of run '${runName}')`);
  await expect(create.getByTestId('csv-preview')).toHaveCount(0);
  await expect(create.getByRole('button', { name: 'File Overlaps Another Unit Operation' })).toBeDisabled();
  await screenshot(page, 'window-5-overlap-refused', testInfo);

  const operations = await callJson<Array<{ id: number }>>(request, session.token, 'GET', `/api/v1/runs/${run.id}/unit-operations`);
  expect(operations.map((operation) => operation.id)).toEqual([first.id]);
});
