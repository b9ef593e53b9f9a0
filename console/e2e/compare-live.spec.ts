/**
 * Compare's live drawing end to end: two running fermentations compared, each on its own reactor;
 * readings a feed posts through the bulk endpoint while the page is open are drawn on the overlay
 * without a reload and without reading the runs' series again, each on its own run's line.
 */
import type { APIRequestContext } from '@playwright/test';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, call, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession, type ApiSession } from './support/auth.ts';
import { drawnPoints, postReadings } from './support/live-feed.ts';
import { createRun, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1100 } });

const MINUTE = 60_000;
const CHART = 'compare-chart';

interface RunningFermentation { runName: string; operationId: number; probeId: number }

async function runningFermentation(
  request: APIRequestContext, session: ApiSession, facilityId: number, name: string, stamp: string, startMs: number,
): Promise<RunningFermentation> {
  const equipment = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/equipment', {
    name: `Compare reactor ${name} ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facilityId,
  });
  const runName = `Live compare ${name} ${stamp}`;
  const run = await createRun(request, session, facilityId, runName, new Date(startMs).toISOString(), null);
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: new Date(startMs).toISOString(), end_time: null,
  });
  const probe = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: `Temperature ${name} ${stamp}`, type: 'temperature', unit: 'celsius', equipment_id: equipment.id,
  });
  return { runName, operationId: operation.id, probeId: probe.id };
}

test('two running fermentations compared draw the readings posted while the page is open, without a reload', async ({ page, request }, testInfo) => {
  test.setTimeout(150_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const start = now - 60 * MINUTE;
  const facility = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/facilities', { name: `Compare Lab ${stamp}`, type: 'lab' });
  const a = await runningFermentation(request, session, facility.id, 'A', stamp, start);
  // B started ten minutes after A: compared on their starts, its readings sit on other minutes than A's.
  const b = await runningFermentation(request, session, facility.id, 'B', stamp, start + 10 * MINUTE);
  const valueA = (ms: number) => Math.round((37 + Math.sin((ms - start) / (8 * MINUTE))) * 100) / 100;
  const valueB = (ms: number) => Math.round((36 + Math.cos((ms - start) / (8 * MINUTE))) * 100) / 100;
  // A reading every two minutes: 25 for A over its first 48 minutes, 20 for B over its first 38.
  await postReadings(request, session, a.probeId, Array.from({ length: 25 }, (_, index) => start + index * 2 * MINUTE), valueA);
  await postReadings(request, session, b.probeId, Array.from({ length: 20 }, (_, index) => start + 10 * MINUTE + index * 2 * MINUTE), valueB);

  // Reads wait for the rollups the stack's demo feeds owe; the page opens once both answer.
  for (const operation of [a, b]) {
    await expect.poll(async () => (await call(request, session.token, 'GET', `/api/v1/unit-operations/${operation.operationId}/instruments-with-data`)).status(),
      { timeout: 60_000 }).toBe(200);
  }

  await signInWithSession(page, session, '/runs/compare');
  await expect(page.getByRole('tab', { name: 'fermentation' })).toHaveAttribute('aria-selected', 'true');
  const search = page.getByPlaceholder('Search runs by name, ID, strain, description...');
  await search.fill(stamp);
  for (const operation of [a, b]) await page.getByRole('checkbox', { name: new RegExp(`^${operation.runName}`) }).check({ force: true });
  await expect(page.getByText('2 run(s) selected')).toBeVisible();
  await expect(page.getByTestId('compare-parameters').getByRole('checkbox', { name: 'temperature [celsius]' })).toBeChecked();

  const chart = page.getByTestId(CHART);
  await expect(chart.locator('.bp-chart-legend-item')).toHaveText([
    `${a.runName} - Temperature A ${stamp} temperature [celsius]`, `${b.runName} - Temperature B ${stamp} temperature [celsius]`,
  ]);
  const indicator = chart.getByTestId('live-indicator');
  await expect(indicator).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await expect.poll(() => drawnPoints(page, CHART)).toBe(45);
  await screenshot(page, 'compare-live-1-connected', testInfo);

  // From here on the page must not read the runs' series again: new readings come through the live stream.
  const seriesReads: string[] = [];
  page.on('request', (sent) => { if (sent.url().includes('/time-series-data?')) seriesReads.push(sent.url()); });
  await postReadings(request, session, a.probeId, [50, 52, 54, 56].map((minute) => start + minute * MINUTE), valueA);
  await expect.poll(() => drawnPoints(page, CHART), { intervals: [100] }).toBe(49);
  await postReadings(request, session, b.probeId, [50, 52, 54].map((minute) => start + minute * MINUTE), valueB);
  await expect.poll(() => drawnPoints(page, CHART), { intervals: [100] }).toBe(52);
  await screenshot(page, 'compare-live-2-new-readings-drawn', testInfo);

  // Each reading landed on its own run's line: A's series gained four points, B's three.
  const perSeries = await chart.locator('.highcharts-markers').evaluateAll((groups) => groups.map((group) => group.querySelectorAll('.highcharts-point').length));
  expect(perSeries.filter((count) => count > 0).sort((x, y) => x - y)).toEqual([23, 29]);
  expect(seriesReads).toEqual([]);
  await expect(indicator).toHaveAttribute('data-state', 'live');
});
