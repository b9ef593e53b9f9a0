/**
 * Alerts end to end: a rule created in the Alerts page, a feed posted to the bulk endpoint crossing
 * it; the alert worker of the stack fires, the firing is shaded on the unit operation's chart, listed
 * on the Alerts page and the run's page, counted in the shell, and acknowledged there with a comment.
 * In an organisation that requires acknowledgements to be signed (turned on in Settings), the
 * acknowledgement asks for the password and the firing shows the signature.
 */
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { adminSession, call, callJson, screenshot } from './pages-helpers.ts';
import { DEMO_EMAIL, outboxMessages, signInWithSession, signUp, type ApiSession } from './support/auth.ts';
import { createRun, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

const MINUTE = 60_000;

async function post(request: APIRequestContext, session: ApiSession, instrumentId: number, readings: Array<[ms: number, value: number]>): Promise<void> {
  const response = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', {
    data: readings.map(([ms, value]) => ({ measured_at: new Date(ms).toISOString(), instrument_id: instrumentId, float_value: value })),
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
}

/** The alert bands Highcharts drew on the process chart. */
async function drawnAlertBands(page: Page): Promise<number> {
  return page.getByTestId('process-parameters-chart').locator('.highcharts-plot-band.chart-alert-band').count();
}

test('a rule is created, a posted feed crosses it, the firing is drawn and listed, and it is acknowledged with a comment', async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const start = now - 60 * MINUTE;
  const facility = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/facilities', { name: `Alert Lab ${stamp}`, type: 'lab' });
  const equipment = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/equipment', {
    name: `Alert reactor ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facility.id,
  });
  const runName = `Alert batch ${stamp}`;
  const run = await createRun(request, session, facility.id, runName, new Date(start).toISOString(), null);
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: new Date(start).toISOString(), end_time: null,
  });
  const probe = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: `Temperature probe ${stamp}`, type: 'temperature', unit: 'celsius', equipment_id: equipment.id,
  });
  await post(request, session, probe.id, Array.from({ length: 20 }, (_, minute): [number, number] => [start + minute * MINUTE, 37]));

  // The rule, made in the console: temperature above 39 in this run.
  await signInWithSession(page, session, '/alerts?view=rules');
  await page.getByRole('button', { name: 'New rule' }).click();
  const dialog = page.getByRole('dialog', { name: 'New alert rule' });
  await dialog.getByLabel('Name').fill(`Overheating ${stamp}`);
  await dialog.getByLabel('Instrument type').selectOption('temperature');
  await dialog.getByLabel('Run').selectOption({ label: runName });
  await dialog.getByLabel('Fires when the reading is').selectOption('above');
  await dialog.getByLabel('Threshold').fill('39');
  await screenshot(page, 'alerts-1-new-rule', testInfo);
  await dialog.getByRole('button', { name: 'Create rule' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('alert-rules-table')).toContainText(`Overheating ${stamp}`);

  // The feed crosses it: 41 from minute 20 on.
  await post(request, session, probe.id, [20, 21, 22, 23].map((minute): [number, number] => [start + minute * MINUTE, 41]));
  await expect.poll(async () => {
    const events = await callJson<Array<{ id: number }>>(request, session.token, 'GET', `/api/v1/alert-events?run_id=${run.id}`);
    return events.length;
  }, { timeout: 60_000 }).toBe(1);

  // Drawn on the chart where it happened, once the readings are summarised (reads answer 503 until then).
  await expect.poll(async () => (await call(request, session.token, 'GET', `/api/v1/unit-operations/${operation.id}/instruments-with-data`)).status(),
    { timeout: 60_000 }).toBe(200);
  await page.goto(`/runs/${run.id}/unit-operations/${operation.id}`);
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible({ timeout: 60_000 });
  await expect.poll(() => drawnAlertBands(page), { timeout: 30_000 }).toBe(1);
  // The label wraps inside a narrow band: its lines are separate tspans.
  await expect(chart.locator('.highcharts-plot-band-label').filter({ hasText: stamp })).toBeVisible();
  await screenshot(page, 'alerts-2-band-on-chart', testInfo);

  // Listed on the Alerts page, counted in the shell.
  await page.goto('/alerts');
  await expect(page.getByTestId('alert-count')).toBeVisible();
  const row = page.getByTestId('alert-event-row').filter({ hasText: `Overheating ${stamp}` });
  await expect(row).toContainText('Firing');
  await expect(row).toContainText(runName);
  await screenshot(page, 'alerts-3-listed', testInfo);

  // Acknowledged on the run's page with a comment.
  await page.goto(`/runs/${run.id}`);
  const section = page.getByTestId('run-alerts');
  const runRow = section.getByTestId('alert-event-row');
  await expect(runRow).toHaveCount(1);
  await runRow.getByRole('button', { name: 'Acknowledge' }).click();
  const acknowledge = page.getByRole('dialog', { name: 'Acknowledge alert' });
  await acknowledge.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(acknowledge).toContainText('A comment is required to acknowledge an alert.');
  await acknowledge.getByLabel('Comment').fill('Jacket valve stuck open; closed by hand');
  await acknowledge.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(acknowledge).toBeHidden();
  await expect(runRow.getByTestId('alert-acknowledgement')).toContainText('Jacket valve stuck open; closed by hand');
  await runRow.scrollIntoViewIfNeeded();
  await screenshot(page, 'alerts-4-acknowledged', testInfo);
  const [event] = await callJson<Array<{ acknowledgement: string | null; state: string }>>(request, session.token, 'GET', `/api/v1/alert-events?run_id=${run.id}`);
  expect(event).toMatchObject({ acknowledgement: 'Jacket valve stuck open; closed by hand', state: 'firing' });
});

test.describe('signed acknowledgements', () => {
  // The wrong password is refused on purpose: the browser notes the 403.
  test.use({ expectedConsoleMessages: refusedRequests() });

  test('where the organisation requires it, an acknowledgement asks for the password and the firing shows its signature', async ({ page, request }, testInfo) => {
    test.setTimeout(180_000);
    // An organisation of its own: the setting applies to every member, and the other walks acknowledge unsigned.
    const owner = await signUp(request, { name: 'Signing Admin', organizationName: `Signed alerts ${uniqueStamp()}` });
    const stamp = uniqueStamp();
    const now = Math.floor(Date.now() / MINUTE) * MINUTE;
    const start = now - 30 * MINUTE;
    const facility = await callJson<{ id: number }>(request, owner.token, 'POST', '/api/v1/facilities', { name: `Signing Lab ${stamp}`, type: 'lab' });
    const equipment = await callJson<{ id: number }>(request, owner.token, 'POST', '/api/v1/equipment', {
      name: `Signing reactor ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facility.id,
    });
    const run = await createRun(request, owner, facility.id, `Signed batch ${stamp}`, new Date(start).toISOString(), null);
    await callJson(request, owner.token, 'POST', '/api/v1/unit-operations', {
      run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: new Date(start).toISOString(), end_time: null,
    });
    const probe = await callJson<{ id: number }>(request, owner.token, 'POST', '/api/v1/instruments', {
      name: `Temperature probe ${stamp}`, type: 'temperature', unit: 'celsius', equipment_id: equipment.id,
    });
    await callJson(request, owner.token, 'POST', '/api/v1/alert-rules', {
      name: `Overheating ${stamp}`, instrument_type: 'temperature', run_id: run.id, condition: { kind: 'threshold', direction: 'above', value: 39 },
    });

    // The admin turns the rule on in Settings.
    await signInWithSession(page, owner, '/settings');
    const setting = page.getByTestId('alert-acknowledgement-settings');
    const toggle = setting.getByRole('checkbox', { name: 'Acknowledging an alert requires an electronic signature' });
    await expect(toggle).toBeEnabled();
    await expect(toggle).not.toBeChecked();
    // A click, not check(): the switch shows the stored setting, so it turns on once the server has saved it.
    await toggle.click({ force: true });
    await expect(page.getByText('Alert acknowledgements now require a signature')).toBeVisible();
    await expect(toggle).toBeChecked();
    await screenshot(page, 'alerts-6-signature-setting', testInfo);
    expect(await callJson(request, owner.token, 'GET', '/api/v1/organization-settings/alert-acknowledgements')).toEqual({ requires_signature: true });

    await post(request, owner, probe.id, [[start + MINUTE, 37], [start + 2 * MINUTE, 41], [start + 3 * MINUTE, 41.5]]);
    await expect.poll(async () => (await callJson<unknown[]>(request, owner.token, 'GET', `/api/v1/alert-events?run_id=${run.id}`)).length,
      { timeout: 60_000 }).toBe(1);

    await page.goto('/alerts');
    const row = page.getByTestId('alert-event-row').filter({ hasText: `Overheating ${stamp}` });
    await row.getByRole('button', { name: 'Acknowledge' }).click();
    const dialog = page.getByRole('dialog', { name: 'Acknowledge and sign alert' });
    await dialog.getByLabel('Comment').fill('Cooling restored; batch continues');
    const sign = dialog.getByRole('button', { name: 'Acknowledge and sign' });
    await expect(sign).toBeDisabled();
    await dialog.getByLabel('Password').fill('not-my-password');
    await sign.click();
    await expect(dialog).toContainText('The password is not correct: the alert was not acknowledged and nothing was signed.');
    await dialog.getByLabel('Password').fill(owner.password);
    await screenshot(page, 'alerts-7-acknowledge-and-sign', testInfo);
    await sign.click();
    await expect(dialog).toBeHidden();
    const signature = row.getByTestId('alert-acknowledgement-signature');
    await expect(signature).toContainText('Signed');
    await expect(signature).toContainText('Reviewed by Signing Admin');
    await expect(row.getByTestId('alert-acknowledgement')).toContainText('Cooling restored; batch continues');
    await screenshot(page, 'alerts-8-signed', testInfo);
    const [event] = await callJson<Array<{ acknowledgement_signature: { meaning: string; validity: string; signer_name: string } | null }>>(
      request, owner.token, 'GET', `/api/v1/alert-events?run_id=${run.id}`);
    expect(event!.acknowledgement_signature).toMatchObject({ meaning: 'reviewed', validity: 'valid', signer_name: 'Signing Admin' });
  });
});

test('the demo\'s alert fires on the running fed-batch\'s readings, is drawn on its chart and its email is in the outbox', async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  const session = await adminSession(request);
  type Firing = { id: number; rule_name: string; run_id: number | null; unit_operation_id: number | null };
  let firing: Firing | undefined;
  await expect.poll(async () => {
    const events = await callJson<Firing[]>(request, session.token, 'GET', '/api/v1/alert-events?limit=200');
    firing = events.find((event) => event.rule_name === 'Dissolved oxygen low');
    return firing !== undefined;
  }, { timeout: 180_000 }).toBe(true);
  await expect.poll(async () => (await outboxMessages(request, DEMO_EMAIL)).some((message) => message.subject === 'Alert: Dissolved oxygen low'), { timeout: 60_000 }).toBe(true);
  await expect.poll(async () => (await call(request, session.token, 'GET', `/api/v1/unit-operations/${firing!.unit_operation_id}/instruments-with-data`)).status(),
    { timeout: 60_000 }).toBe(200);
  await signInWithSession(page, session, `/runs/${firing!.run_id}/unit-operations/${firing!.unit_operation_id}`);
  const chart = page.getByTestId('process-parameters-chart');
  await expect(chart.locator('.highcharts-series path.highcharts-graph').first()).toBeVisible({ timeout: 60_000 });
  await expect.poll(() => drawnAlertBands(page), { timeout: 30_000 }).toBeGreaterThan(0);
  await screenshot(page, 'alerts-5-demo-alert', testInfo);
});
