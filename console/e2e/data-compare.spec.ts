/**
 * Compare runs end to end: a tab per unit-operation type, run search and selection, the
 * parameter chooser, both runs overlaid in their own colours, their comments, keyboard resizing of
 * the panels, and selections remembered per tab.
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createRunWithSeries, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1100 } });

test('overlays two runs and lists their comments', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const a = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');
  const b = await createRunWithSeries(request, session, stamp, 'B', '2025-04-10T06:00:00.000Z');
  await callJson(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: a.run.id, type: 'centrifugation', equipment_id: a.equipment.id, start_time: '2025-03-04T09:00:00.000Z',
  });
  await callJson(request, session.token, 'POST', '/api/v1/comments', {
    timestamp: '2025-04-10T08:00:00.000Z', unit_operations_id: b.unitOperationId, content: 'Induction with IPTG',
  });

  await signInWithSession(page, session, '/runs/compare');
  await expect(page.getByRole('heading', { name: 'Compare runs' })).toBeVisible();
  await expect(page.getByRole('tab', { name: 'fermentation' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('tab', { name: 'centrifugation' })).toBeVisible();
  await expect(page.getByText('Fermentation Comparison')).toBeVisible();
  await expect(page.getByText('Select runs to see available parameters.')).toBeVisible();
  await expect(page.getByText('0 run(s) selected')).toBeVisible();

  const search = page.getByPlaceholder('Search runs by name, ID, strain, description...');
  await search.fill(`no such run ${stamp}`);
  await expect(page.getByText('No runs found.')).toBeVisible();
  await search.fill(stamp);
  await page.getByRole('checkbox', { name: new RegExp(`Fed-batch A ${stamp}`) }).check({ force: true });
  await search.fill('W3110');
  await page.getByRole('checkbox', { name: new RegExp(`Fed-batch B ${stamp}`) }).check({ force: true });
  await expect(page.getByText('2 run(s) selected')).toBeVisible();

  // The first parameter both runs measured is drawn at once.
  const chooser = page.getByTestId('compare-parameters');
  await expect(chooser.getByRole('checkbox', { name: 'pH [pH]' })).toBeChecked();
  const chart = page.getByTestId('compare-chart');
  await expect(chart.locator('.highcharts-title')).toHaveText('Overlayed Time Series');
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    `Fed-batch A ${stamp} - pH A pH [pH]`, `Fed-batch B ${stamp} - pH B pH [pH]`,
  ]);
  await chooser.getByRole('checkbox', { name: 'temperature [celsius]' }).check({ force: true });
  // Two parameters of one run share its colour and differ by dash.
  await expect(chart.locator('.highcharts-series path.highcharts-graph')).toHaveCount(4);
  const dashes = await chart.locator('.highcharts-series path.highcharts-graph').evaluateAll((paths) => paths.map((p) => p.getAttribute('stroke-dasharray') ?? 'none'));
  expect(new Set(dashes).size).toBe(2);
  await chooser.getByRole('checkbox', { name: 'pH [pH]' }).uncheck({ force: true });
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    `Fed-batch A ${stamp} - Temperature A temperature [celsius]`, `Fed-batch B ${stamp} - Temperature B temperature [celsius]`,
  ]);
  await expect(chart.locator('.highcharts-series path.highcharts-graph')).toHaveCount(2);
  const colors = await chart.locator('.highcharts-series path.highcharts-graph').evaluateAll((paths) => paths.map((p) => p.getAttribute('stroke')));
  expect(new Set(colors).size).toBe(2);

  const comments = page.getByTestId('compare-comments');
  await expect(comments).toContainText('Comments and annotations for the selected runs and fermentation unit operation');
  await expect(comments).toContainText('Induction with IPTG');
  await expect(comments).toContainText(b.run.name);
  await expect(comments).toContainText('2025-04-10 08:00');
  await expect(comments).toContainText('2 h 00 min');
  await screenshot(page, 'compare-1-overlay', testInfo);

  // Keyboard resizing of the run panel: arrows by 10 %, within 16-40 %.
  const separator = page.getByRole('separator');
  await separator.focus();
  const before = Number(await separator.getAttribute('aria-valuenow'));
  await page.keyboard.press('ArrowRight');
  await expect.poll(async () => Number(await separator.getAttribute('aria-valuenow'))).toBeCloseTo(Math.min(40, before + 10), 0);
  await page.keyboard.press('Home');
  await expect.poll(async () => Number(await separator.getAttribute('aria-valuenow'))).toBeCloseTo(16, 0);

  // Another tab has its own selection; coming back restores this one.
  await page.getByRole('tab', { name: 'centrifugation' }).click();
  await expect(page.getByText('Centrifugation Comparison')).toBeVisible();
  await expect(page.getByText('0 run(s) selected')).toBeVisible();
  await page.getByRole('tab', { name: 'fermentation' }).click();
  await expect(page.getByText('2 run(s) selected')).toBeVisible();
  await expect(chart.locator('.bp-chart-legend-item')).toHaveCount(2);
});
