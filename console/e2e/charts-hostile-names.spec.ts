/**
 * Names that look like markup, on every chart: runs, equipment, instruments, a derived parameter (name
 * and unit), a comment and its author are given a link and an image with an error handler, then the
 * unit-operation chart (legend, axes, comment line and its tooltip), compare, Analyze (title, axis,
 * legend, tooltip), the derived-parameter preview and the dashboard are opened. Each must show the
 * characters as typed and hold no element made from them. The organisation is a fresh one (signup),
 * so its author is hostile too and nothing else is listed beside these runs.
 */
import { expect, test, type Locator, type Page } from './support/quiet-console.ts';
import { signInWithSession, signUp } from './support/auth.ts';
import { call, callJson, screenshot } from './pages-helpers.ts';
import { uniqueStamp, type Entity } from './data-fixtures.ts';

const LINK = '<a href="//example.com" id="evil">x</a>';
const IMAGE = '<img src=x onerror=alert(1)>';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1100 } });

/** A RegExp matching the text literally (accessible names hold the hostile characters as typed). */
function literally(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

/** Nothing was made of the names: no link or image in any chart, nor anywhere on the page. */
async function expectNoMarkup(page: Page): Promise<void> {
  await expect(page.locator('.highcharts-container')).not.toHaveCount(0);
  for (const selector of ['a#evil', 'img', 'a[href*="example.com"]']) {
    await expect(page.locator(`.highcharts-container ${selector}`), selector).toHaveCount(0);
  }
  await expect(page.locator('a#evil')).toHaveCount(0);
  await expect(page.locator('img[src="x"]')).toHaveCount(0);
}

/**
 * Expects the text as typed in what the locator shows. Highcharts wraps long titles into lines, and
 * the browser reads the break between two lines as a zero-width space.
 */
async function expectShows(locator: Locator, text: string): Promise<void> {
  await expect.poll(async () => (await locator.allTextContents()).join(' ').replace(/\u200B/g, ' ').replace(/\s+/g, ' ')).toContain(text);
}

/** Moves the pointer over a chart's plot as a hand does, so Highcharts draws its tooltip. */
async function hover(page: Page, chart: Locator, share: number): Promise<void> {
  const box = (await chart.locator('.highcharts-plot-background').boundingBox())!;
  await page.mouse.move(box.x + box.width * share + 60, box.y + box.height / 2);
  await page.mouse.move(box.x + box.width * share, box.y + box.height / 2, { steps: 4 });
}

test('names that look like markup are shown as text on every chart', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const stamp = uniqueStamp();
  const session = await signUp(request, { name: `${IMAGE} Scientist` });
  const token = session.token;
  const facility = await callJson<Entity>(request, token, 'POST', '/api/v1/facilities', { name: `${LINK} Lab ${stamp}`, type: 'lab' });
  const startMs = Date.parse('2025-03-03T08:00:00.000Z');
  const runs: Array<{ run: Entity; unitOperationId: number; instrumentName: string }> = [];
  for (const [index, label] of (['A', 'B', 'C'] as const).entries()) {
    const equipment = await callJson<Entity>(request, token, 'POST', '/api/v1/equipment', {
      name: `${LINK} reactor ${label} ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facility.id,
    });
    const runStart = new Date(startMs + index * 86_400_000);
    const runEnd = new Date(runStart.getTime() + 6 * 3_600_000);
    const run = await callJson<Entity>(request, token, 'POST', '/api/v1/runs', {
      facility_id: facility.id, name: `${index % 2 === 0 ? LINK : IMAGE} ${label} ${stamp}`, target: 'GFP',
      start_time: runStart.toISOString(), end_time: runEnd.toISOString(),
    });
    const operation = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/unit-operations', {
      run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: runStart.toISOString(), end_time: runEnd.toISOString(),
    });
    const instrumentName = `${IMAGE} probe ${label}`;
    const instrument = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', {
      name: instrumentName, alias: 'probe', type: 'temperature', unit: 'celsius', equipment_id: equipment.id,
    });
    const data = Array.from({ length: 73 }, (_, i) => ({
      ts: new Date(runStart.getTime() + i * 5 * 60_000).toISOString(), instrument_id: instrument.id, value: 37 + index * 0.4 + Math.sin(i / 10),
    }));
    const bulk = await call(request, token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data });
    expect(bulk.status(), await bulk.text()).toBeLessThan(300);
    runs.push({ run, unitOperationId: operation.id, instrumentName });
  }
  const [a, b, c] = runs as [typeof runs[number], typeof runs[number], typeof runs[number]];
  const derivedName = `${LINK} doubled ${stamp}`;
  await callJson<Entity>(request, token, 'POST', '/api/v1/derived-parameters', {
    name: derivedName, unit: IMAGE, expression: '[probe] * 2', description: LINK,
  });
  const commentText = `${LINK} ${IMAGE}`;
  await callJson(request, token, 'POST', '/api/v1/comments', {
    timestamp: new Date(startMs + 2 * 3_600_000).toISOString(), unit_operations_id: a.unitOperationId, content: commentText, color: '#2d72d2',
  });
  const hostileColour = await call(request, token, 'POST', '/api/v1/comments', {
    timestamp: new Date(startMs + 3 * 3_600_000).toISOString(), unit_operations_id: a.unitOperationId, content: 'colour', color: `#fff">${LINK}`,
  });
  expect(hostileColour.status()).toBe(400);
  expect((await hostileColour.json()).error).toMatch(/^color: /);

  // The unit-operation chart: legend, y axis of the derived unit, the comment line and its tooltip.
  await signInWithSession(page, session, `/runs/${a.run.id}/unit-operations/${a.unitOperationId}`);
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.bp-chart-legend')).toContainText(a.instrumentName);
  await page.getByTestId('derived-parameter-list').getByRole('checkbox', { name: literally(derivedName) }).check({ force: true });
  await expect(chart.locator('.bp-chart-legend')).toContainText(derivedName);
  await expectShows(chart.locator('.highcharts-yaxis .highcharts-axis-title'), IMAGE);
  // Adding the derived unit's axis makes the chart anew: its comment line is still drawn once.
  await expect(chart.locator('.bp-chart-comment-line')).toHaveCount(1);
  await expect(chart.locator('.bp-chart-comment-label')).toContainText('<a href="//exampl');
  const line = chart.locator('.bp-chart-comment-line');
  const lineBox = (await line.boundingBox())!;
  await page.mouse.move(lineBox.x + lineBox.width / 2 + 60, lineBox.y + lineBox.height / 2);
  await page.mouse.move(lineBox.x + lineBox.width / 2 + 12, lineBox.y + lineBox.height / 2, { steps: 4 });
  const tooltip = chart.locator('.bp-chart-tooltip');
  await expect(tooltip).toContainText(commentText);
  await expect(tooltip).toContainText(`${IMAGE} Scientist`);
  await expect(tooltip).toContainText(a.instrumentName);
  await expect(tooltip).toContainText(derivedName);
  await expectNoMarkup(page);
  await screenshot(page, 'hostile-1-unit-operation', testInfo);

  // Compare: run names and instrument names in the legend and the tooltip.
  await page.goto('/runs/compare');
  await page.getByRole('checkbox', { name: literally(a.run.name) }).check({ force: true });
  await page.getByRole('checkbox', { name: literally(b.run.name) }).check({ force: true });
  const compare = page.getByTestId('compare-chart');
  await expect(compare.locator('.bp-chart-legend-item')).toHaveCount(2);
  await expect(compare.locator('.bp-chart-legend')).toContainText(`${a.run.name} - ${a.instrumentName}`);
  await expect(compare.locator('.bp-chart-legend')).toContainText(`${b.run.name} - ${b.instrumentName}`);
  await hover(page, compare, 0.4);
  await expect(compare.locator('.bp-chart-tooltip')).toContainText(b.run.name);
  await expectNoMarkup(page);
  await screenshot(page, 'hostile-2-compare', testInfo);

  // Analyze: the derived parameter's name in the title and on the axis, the target run in the legend and tooltip.
  await page.goto('/analyze');
  await page.getByRole('checkbox', { name: `Reference ${a.run.name}` }).check({ force: true });
  await page.getByRole('checkbox', { name: `Reference ${b.run.name}` }).check({ force: true });
  await page.getByRole('checkbox', { name: `Overlay ${c.run.name}` }).check({ force: true });
  await page.getByRole('checkbox', { name: literally(derivedName) }).check({ force: true });
  await page.getByTestId('analyze-run').click();
  const analyze = page.getByTestId('analyze-chart');
  await expectShows(analyze.locator('.highcharts-title'), `${derivedName} (derived) — P5–P95 over 2 references`);
  await expectShows(analyze.locator('.highcharts-yaxis .highcharts-axis-title'), `${derivedName} (derived)`);
  await expect(analyze.locator('.highcharts-legend')).toContainText(c.run.name);
  await hover(page, analyze, 0.5);
  await expect(analyze.locator('.highcharts-tooltip')).toContainText(c.run.name);
  await expectNoMarkup(page);
  await screenshot(page, 'hostile-3-analyze', testInfo);

  // The derived parameter's editor: its live preview names the series and its unit.
  await page.goto('/data?view=derived');
  await page.getByRole('button', { name: `Edit ${derivedName}`, exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Preview on').selectOption(String(a.unitOperationId));
  const preview = dialog.getByTestId('derived-preview');
  await expect(preview.locator('.bp-chart-legend')).toContainText(derivedName);
  await expectShows(preview.locator('.highcharts-yaxis .highcharts-axis-title'), IMAGE);
  await expectNoMarkup(page);
  await screenshot(page, 'hostile-4-derived', testInfo);
  await page.keyboard.press('Escape');

  // The dashboard lists the runs by their names, as text.
  await page.goto('/dashboard');
  await expect(page.getByText(a.run.name, { exact: true }).first()).toBeVisible();
  await expect(page.getByText(b.run.name, { exact: true }).first()).toBeVisible();
  await expect(page.locator('a#evil')).toHaveCount(0);
  await expect(page.locator('img[src="x"]')).toHaveCount(0);
  await screenshot(page, 'hostile-5-dashboard', testInfo);
});
