/**
 * The unit-operation chart with real process data: eight instruments of a stirred tank in seven
 * units over a 10.8-day fed-batch. Series carry their instrument names, at most three y axes carry
 * labels (the others picked from the axis buttons, or one panel per unit), the time axis counts hours,
 * comment lines carry a short label, and one tooltip lists the readings with the comment under them.
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { uniqueStamp } from './data-fixtures.ts';
import { createLongFermentation } from './process-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1100 } });

test('charts eight parameters of a 10-day fermentation readably', async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const fixture = await createLongFermentation(request, session, uniqueStamp());

  await signInWithSession(page, session, `/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);
  // The run is named, not numbered.
  await expect(page.getByTestId('unit-operation-detail')).toContainText(fixture.run.name);
  const parameters = page.getByTestId('parameter-list');
  await expect(parameters).toContainText('TIC-101 Reactor temperature');
  await expect(parameters).toContainText('temperature [celsius]');
  await parameters.getByText('All parameters').click();

  const chart = page.getByTestId('process-parameters-chart');
  const legend = chart.locator('.bp-chart-legend-item');
  await expect(legend).toHaveCount(8);
  for (const [index, name] of fixture.instrumentNames.entries()) await expect(legend.nth(index)).toContainText(name);
  await expect(legend.first()).toContainText('temperature [celsius]');

  // Seven units, three labelled axes: the first three units until others are picked.
  // Axes dropped from view stay in the SVG, hidden.
  const axisTitles = chart.locator('.highcharts-yaxis .highcharts-axis-title').filter({ visible: true });
  await expect(axisTitles).toHaveText(['celsius', 'pH', '%']);
  const picker = chart.getByRole('group', { name: /Y axes shown/ });
  await expect(picker.getByRole('button')).toHaveText(['celsius', 'pH', '%', 'rpm', 'mL/min', 'OD600', 'g/L']);
  await picker.getByRole('button', { name: 'rpm' }).click();
  await expect(axisTitles).toHaveText(['pH', '%', 'rpm']);
  await expect(picker.getByRole('button', { name: 'celsius' })).toHaveAttribute('aria-pressed', 'false');

  // Days on the time axis of a 10.8-day operation (hours up to five days), never thousands of minutes.
  await expect(chart.locator('.highcharts-xaxis .highcharts-axis-title')).toHaveText('Time since unit operation start (days)');
  const ticks = await chart.locator('.highcharts-xaxis-labels text').allTextContents();
  expect(ticks.length).toBeGreaterThan(3);
  expect(ticks.length).toBeLessThanOrEqual(12);
  for (const tick of ticks) expect(tick).toMatch(/^\d+ d$/);

  // Comment lines carry the start of their text.
  await expect(chart.locator('.bp-chart-comment-line')).toHaveCount(2);
  await expect(chart.locator('.bp-chart-comment-label').first()).toContainText('Batch glucose');
  await page.screenshot({ path: testInfo.outputPath('chart-1-eight-parameters.png') });

  // One tooltip: the minute, the readings by instrument name, and the comment under them.
  // The line is found from its own label (drawn 4 px right of it): the lines' order in the SVG changes
  // as a hovered one is drawn again, so the first line is not always this comment's.
  // Measured once it stands still: the axis change above lays the plot out again, animated.
  const batchLabel = chart.locator('.bp-chart-comment-label').filter({ hasText: 'Batch glucose' });
  let labelBox = (await batchLabel.boundingBox())!;
  await expect.poll(async () => {
    const now = (await batchLabel.boundingBox())!;
    const still = now.x === labelBox.x;
    labelBox = now;
    return still;
  }, { intervals: [250] }).toBe(true);
  const plot = (await chart.locator('.highcharts-plot-background').boundingBox())!;
  await page.mouse.move(plot.x + plot.width * 0.5, plot.y + plot.height * 0.6);
  await page.mouse.move(labelBox.x - 4 + 1, plot.y + plot.height * 0.6, { steps: 10 });
  const tooltip = chart.locator('.bp-chart-tooltip');
  await expect(tooltip).toContainText('(minute ');
  await expect(tooltip).toContainText('TIC-101 Reactor temperature');
  await expect(tooltip.getByTestId('chart-comment-tooltip')).toContainText('Batch glucose depleted, exponential feed started');
  // The comment's own time (as in the comment list), not when it was written.
  await expect(tooltip.getByTestId('chart-comment-tooltip')).toContainText('2025-06-02 14:30');
  await page.screenshot({ path: testInfo.outputPath('chart-2-tooltip.png') });

  // One panel per unit, sharing the time axis.
  await chart.getByText('Panel per unit').click();
  await expect(chart).toHaveAttribute('data-layout', 'stacked');
  await expect(axisTitles).toHaveCount(7);
  await expect(chart.getByRole('group', { name: /Y axes shown/ })).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath('chart-3-stacked.png'), fullPage: true });
});
