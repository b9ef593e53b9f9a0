/**
 * Compare runs on process time, on the demo organisation: two fed-batch runs and the Pioreactor trace
 * overlaid, aligned on the induction comment (the Pioreactor run has none and is listed as left out),
 * then on dissolved oxygen falling below 30 % (the Pioreactor has no oxygen probe), and the demo's
 * derived OUR drawn dashed for the fed-batch runs while the Pioreactor run says why it has none.
 */
import { expect as quietExpect, refusedRequests, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';

// The Pioreactor run has no off-gas instruments: its OUR answers 400 on purpose.
test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1200 }, expectedConsoleMessages: refusedRequests() });

// Each redraw reads three 40-hour runs (and computes a formula over them) on a machine shared with other work.
const expect = quietExpect.configure({ timeout: 45_000 });

const FED_BATCH = ['FB-2026-031 GFP fed-batch', 'FB-2026-034 GFP high feed'];
const PIOREACTOR = 'PIO-2025-02 Pioreactor OD trace';

test('aligns compared runs on an event and a threshold, lists the run left out, and draws a derived parameter', async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const runs = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/runs');
  const operations = await callJson<Array<{ id: number; run_id: number; type: string }>>(request, session.token, 'GET', '/api/v1/unit-operations');
  const fermentationOf = (name: string) => operations.find((operation) => operation.type === 'fermentation' && operation.run_id === runs.find((run) => run.name === name)!.id)!.id;
  // The demo's readings load in the background after start-up: wait until both fed-batch runs' oxygen crosses 30 %.
  await expect.poll(async () => {
    const result = await callJson<{ aligned: unknown[] }>(request, session.token, 'POST', '/api/v1/analysis/alignment', {
      unit_operation_ids: FED_BATCH.map(fermentationOf), alignment: { kind: 'threshold', parameter: 'dissolved_o2', value: 30, direction: 'down' },
    });
    return result.aligned.length;
  }, { timeout: 240_000, intervals: [2_000] }).toBe(FED_BATCH.length);

  await signInWithSession(page, session, '/runs/compare');
  await expect(page.getByRole('tab', { name: 'fermentation' })).toHaveAttribute('aria-selected', 'true');
  const search = page.getByPlaceholder('Search runs by name, ID, strain, description...');
  for (const name of [...FED_BATCH, PIOREACTOR]) {
    await search.fill(name);
    await page.getByRole('checkbox', { name: new RegExp(`^${name}`) }).check({ force: true });
  }
  await expect(page.getByText('3 run(s) selected')).toBeVisible();

  const chart = page.getByTestId('compare-chart');
  const axisTitle = chart.locator('.highcharts-xaxis .highcharts-axis-title');
  const legend = chart.locator('.bp-chart-legend-item');
  const leftOut = page.getByTestId('compare-left-out');
  await expect(axisTitle).toHaveText(/^Time since unit operation start/);
  // The Pioreactor measured optical density in its own unit: chosen too, every run has a line.
  await page.getByTestId('compare-parameters').getByRole('checkbox', { name: 'optical_density [AU]' }).check({ force: true });
  await expect(legend.filter({ hasText: PIOREACTOR })).not.toHaveCount(0);
  await expect(leftOut).toBeHidden();
  // Pixels between the plot's left edge and minute 0: none on the start, the time before time zero when aligned.
  const beforeZero = async () => {
    const plot = await chart.locator('.highcharts-plot-background').boundingBox();
    // Minute 0 in whatever unit the axis counts (minutes, hours or days).
    const zero = await chart.locator('.highcharts-xaxis-labels text').filter({ hasText: /^0( h| d)?$/ }).first().boundingBox();
    return plot && zero ? zero.x + zero.width / 2 - plot.x : Number.NaN;
  };
  await expect.poll(beforeZero).toBeLessThan(5);

  // Time zero at the first comment naming 'induced' (the demo's IPTG induction, 14 h in).
  const alignment = page.getByTestId('compare-alignment');
  await alignment.getByLabel('Time zero').selectOption('event');
  await expect(alignment.getByLabel('Comment word')).toHaveValue('induced');
  await expect(axisTitle).toHaveText(/^Time since first comment naming "induced"/);
  await expect(leftOut).toHaveText(`Left out: ${PIOREACTOR} (event not found)`);
  await expect(legend.filter({ hasText: PIOREACTOR })).toHaveCount(0);
  for (const name of FED_BATCH) await expect(legend.filter({ hasText: name })).not.toHaveCount(0);
  // The hours before induction lie left of minute 0.
  await expect.poll(beforeZero).toBeGreaterThan(30);
  await screenshot(page, 'compare-alignment-1-event', testInfo);

  // A word no comment holds leaves every run out.
  await alignment.getByLabel('Comment word').fill('harvested');
  await expect(leftOut).toContainText(`${FED_BATCH[0]} (event not found)`);
  await expect(leftOut).toContainText(`${PIOREACTOR} (event not found)`);

  // Time zero where dissolved oxygen first falls below 30 %.
  await alignment.getByLabel('Time zero').selectOption('threshold');
  await alignment.getByLabel('Threshold parameter').selectOption('dissolved_o2');
  await alignment.getByLabel('Direction').selectOption('down');
  await alignment.getByLabel('Threshold value').fill('30');
  await expect(axisTitle).toHaveText(/^Time since Dissolved O2 falling below 30/);
  await expect(leftOut).toHaveText(`Left out: ${PIOREACTOR} (no instrument of this type)`);
  for (const name of FED_BATCH) await expect(legend.filter({ hasText: name })).not.toHaveCount(0);
  await expect.poll(beforeZero).toBeGreaterThan(30);

  // The demo's OUR, computed per run on the server and drawn dashed in each run's colour.
  const derived = page.getByTestId('compare-derived');
  await derived.getByRole('checkbox', { name: /^OUR/ }).check({ force: true });
  for (const name of FED_BATCH) await expect(legend.filter({ hasText: `${name} - OUR` })).toBeVisible();
  await expect(derived.getByRole('alert')).toContainText(`OUR not drawn for ${PIOREACTOR}: Unknown reference`);
  const ourDashes = await chart.locator('.highcharts-series path.highcharts-graph').evaluateAll((paths) => paths.map((path) => path.getAttribute('stroke-dasharray') ?? 'none'));
  expect(ourDashes.filter((dash) => dash !== 'none')).toHaveLength(FED_BATCH.length);
  await screenshot(page, 'compare-alignment-2-derived', testInfo);

  // Back on the start, every run is drawn again and nothing is left out.
  await alignment.getByLabel('Time zero').selectOption('start');
  await expect(leftOut).toBeHidden();
  await expect(axisTitle).toHaveText(/^Time since unit operation start/);
  await expect(legend.filter({ hasText: PIOREACTOR })).not.toHaveCount(0);
});
