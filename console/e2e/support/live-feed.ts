/**
 * What the live walks share: a feed posting readings through the bulk endpoint (as an instrument feed
 * does), and the readings a chart has drawn, counted by their point markers (drawn while a series has
 * few points).
 */
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { call } from '../pages-helpers.ts';
import type { ApiSession } from './auth.ts';

export async function postReadings(
  request: APIRequestContext, session: ApiSession, instrumentId: number, times: readonly number[], value: (ms: number) => number,
): Promise<void> {
  const response = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', {
    data: times.map((ms) => ({ measured_at: new Date(ms).toISOString(), instrument_id: instrumentId, float_value: value(ms) })),
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
}

export async function drawnPoints(page: Page, chartTestId: string): Promise<number> {
  return page.getByTestId(chartTestId).locator('.highcharts-markers .highcharts-point').count();
}
