/**
 * Live charts end to end: an open unit-operation chart of a running operation draws the readings a
 * feed posts without a reload (and without reading its window again), and after its connection is
 * cut, the reconnect (with Last-Event-ID) draws the readings posted meanwhile.
 */
import type { Page } from '@playwright/test';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, call, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { drawnPoints as drawnOn, postReadings as post } from './support/live-feed.ts';
import { createRun, uniqueStamp } from './data-fixtures.ts';

// The walk takes the browser offline: the shell's polls made meanwhile (the alerts count) fail with the
// browser's own note, which is what a person offline sees too.
test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 }, expectedConsoleMessages: { patterns: [/net::ERR_INTERNET_DISCONNECTED/] } });

const MINUTE = 60_000;

/** The readings drawn on the unit operation's chart. */
const drawnPoints = (page: Page) => drawnOn(page, 'process-parameters-chart');

test('a running unit operation\'s chart draws new readings as they are stored and fills the gap after a cut connection', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const start = now - 90 * MINUTE;
  const facility = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/facilities', { name: `Live Lab ${stamp}`, type: 'lab' });
  const equipment = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/equipment', {
    name: `Live reactor ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facility.id,
  });
  const run = await createRun(request, session, facility.id, `Live batch ${stamp}`, new Date(start).toISOString(), null);
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: new Date(start).toISOString(), end_time: null,
  });
  const probe = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: `DO probe ${stamp}`, type: 'dissolved_o2', unit: '%', equipment_id: equipment.id,
  });
  const wave = (ms: number) => Math.round((40 + 10 * Math.sin((ms - start) / (12 * MINUTE))) * 100) / 100;
  // A reading a minute for the first hour.
  await post(request, session, probe.id, Array.from({ length: 61 }, (_, minute) => start + minute * MINUTE), wave);

  // Reads wait for the rollups the stack's demo feeds owe; the page opens once they answer.
  await expect.poll(async () => (await call(request, session.token, 'GET', `/api/v1/unit-operations/${operation.id}/instruments-with-data`)).status(),
    { timeout: 60_000 }).toBe(200);

  await signInWithSession(page, session, `/runs/${run.id}/unit-operations/${operation.id}`);
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible({ timeout: 30_000 });
  const indicator = chart.getByTestId('live-indicator');
  await expect(indicator).toHaveAttribute('data-state', 'live');
  await expect(indicator).toHaveText('Live');
  await expect.poll(() => drawnPoints(page)).toBe(61);
  await screenshot(page, 'live-1-connected', testInfo);

  // New readings are drawn as they are stored; the chart does not read its window again.
  const windowReads: string[] = [];
  page.on('request', (sent) => { if (sent.url().includes('/time-series-data?')) windowReads.push(sent.url()); });
  const sentAt = Date.now();
  await post(request, session, probe.id, [61, 62, 63, 64, 65].map((minute) => start + minute * MINUTE), wave);
  await expect.poll(() => drawnPoints(page), { intervals: [50] }).toBe(66);
  // A sample of post-to-pixel latency in a real browser, for the record (the bench measures the stream).
  testInfo.annotations.push({ type: 'post-to-pixel', description: `${Date.now() - sentAt} ms` });
  expect(windowReads).toEqual([]);
  await screenshot(page, 'live-2-new-readings-drawn', testInfo);

  // The connection is cut: the badge says so, and readings stored meanwhile are not drawn yet.
  const context = page.context();
  await context.setOffline(true);
  await expect(indicator).toHaveAttribute('data-state', 'offline');
  await expect(indicator).toHaveText('Reconnecting…');
  await post(request, session, probe.id, [66, 67, 68, 69].map((minute) => start + minute * MINUTE), wave);
  await screenshot(page, 'live-3-cut', testInfo);
  expect(await drawnPoints(page)).toBe(66);

  // Back: the stream resumes from the last event it had, and the gap is filled.
  const resumed = page.waitForRequest((sent) => sent.url().includes('/api/v1/live?') && sent.headers()['last-event-id'] !== undefined);
  await context.setOffline(false);
  expect((await resumed).headers()['last-event-id']).toMatch(/^\d+-\d+$/);
  await expect(indicator).toHaveAttribute('data-state', 'live');
  await expect.poll(() => drawnPoints(page)).toBe(70);
  expect(windowReads).toEqual([]);
  await screenshot(page, 'live-4-gap-filled', testInfo);
});
