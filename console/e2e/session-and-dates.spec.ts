/**
 * Signing out in one tab ends every tab's session at once; dates are
 * shown and typed in ISO 24 h with the zone named; the unit-operation type has no default; pickers
 * name the run; the Average Titer says what it averages and leaves out units it cannot average; a new
 * API key's secret has a Copy button.
 */
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { signInWithSession, signUp } from './support/auth.ts';
import { call, callJson, screenshot } from './pages-helpers.ts';
import { createRunWithSeries, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

test.describe('sign-out in every tab', () => {
  // The signed-out tab's requests in flight may be answered 401 by then.
  test.use({ expectedConsoleMessages: refusedRequests() });
  test('signing out in one tab shows the sign-in page in the other without a reload, and closes its edit dialog', async ({ page, request }, testInfo) => {
    const session = await signUp(request, { name: 'Two Tabs' });
    const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
    await signInWithSession(page, session, `/runs/${fixture.run.id}`);
    const other = await page.context().newPage();
    await other.goto(`/runs/${fixture.run.id}`);
    await other.getByRole('button', { name: 'Edit unit operation' }).first().click();
    const dialog = other.getByRole('dialog');
    await expect(dialog.getByRole('heading', { name: 'Edit Unit Operation' })).toBeVisible();
    // Date-time fields show ISO 24 h, with the zone they are read in.
    await expect(dialog.locator('#unit-op-start')).toHaveValue('2025-03-03 08:00:00');
    await expect(dialog.locator('#unit-op-end')).toHaveValue('2025-03-04 08:00:00');
    await expect(dialog.getByText('UTC', { exact: true }).first()).toBeVisible();
    // A mark that a reload would wipe.
    await other.evaluate(() => { (window as unknown as { stillThisDocument: boolean }).stillThisDocument = true; });

    await page.getByTestId('user-panel').click();
    await page.getByRole('menuitem', { name: 'Sign Out' }).click();
    await expect(page).toHaveURL(/\/login$/);

    await expect(other).toHaveURL(/\/login$/);
    await expect(other.getByRole('button', { name: 'Sign In', exact: true })).toBeVisible();
    await expect(other.getByRole('dialog')).toHaveCount(0);
    expect(await other.evaluate(() => (window as unknown as { stillThisDocument?: boolean }).stillThisDocument)).toBe(true);
    await screenshot(other, 'signed-out-in-other-tab', testInfo);
    // Back on the run page, the other tab is signed out: no edit button, no dialog to open.
    await other.evaluate((path) => { window.history.pushState({}, '', path); window.dispatchEvent(new PopStateEvent('popstate')); }, `/runs/${fixture.run.id}`);
    await expect(other.getByRole('heading', { name: 'Authentication Required' })).toBeVisible();
    await expect(other.getByRole('button', { name: 'Edit unit operation' })).toHaveCount(0);
    // The server ended the session too.
    expect((await call(request, session.token, 'GET', '/api/v1/auth/profile')).status()).toBe(401);
  });
});

test.describe('a profile request that fails', () => {
  test.use({ expectedConsoleMessages: refusedRequests(/Failed to load resource: net::ERR_FAILED/) });
  test('does not sign the user out: only the server saying the session is gone does', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Flaky Network' });
    await signInWithSession(page, session, '/runs/overview');
    await expect(page.getByRole('heading', { name: 'Authentication Required' })).toHaveCount(0);
    // The profile request cut off, as when the page is left while it runs, or the network drops.
    await page.route('**/api/v1/auth/profile', (route) => route.abort());
    await page.reload();
    await page.unroute('**/api/v1/auth/profile');
    await page.goto('/runs/overview');
    await expect(page.getByRole('heading', { name: 'Authentication Required' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Open user menu' })).toBeVisible();
  });
});

test.describe('run pages', () => {
  test.use({ expectedConsoleMessages: refusedRequests() });
  test('a missing run has the not-found page; a new unit operation has no type until the user picks one', async ({ page, request, browser }) => {
    const session = await signUp(request, { name: 'Run Pages' });
    const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
    await signInWithSession(page, session, `/runs/${fixture.run.id}`);
    await page.getByRole('button', { name: 'Add Unit Operation' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.locator('#unit-op-type')).toHaveValue('');
    await expect(dialog.locator('#unit-op-type option:checked')).toHaveText('Select type...');
    // Start typed in ISO 24 h is taken; a locale-style text is not a time.
    await dialog.locator('#unit-op-start').fill('2025-03-05 19:30');
    await expect(dialog.locator('#unit-op-start')).toHaveValue('2025-03-05 19:30');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await page.goto('/runs/987654321');
    await expect(page.getByRole('heading', { name: 'Run not found.' })).toBeVisible();
    await expect(page.getByText('Failed to fetch run details')).toHaveCount(0);
    // Another organisation's run is missing as well (the stranger in a browser of their own).
    const stranger = await signUp(request, { name: 'Stranger' });
    const strangerContext = await browser.newContext();
    const strangerPage = await strangerContext.newPage();
    await signInWithSession(strangerPage, stranger, `/runs/${fixture.run.id}`);
    await expect(strangerPage.getByRole('heading', { name: 'Run not found.' })).toBeVisible();
    await strangerContext.close();
  });

  test('the derived-parameter picker names each unit operation by its run', async ({ page, request }) => {
    const session = await signUp(request, { name: 'Picker User' });
    const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
    await signInWithSession(page, session, '/data?view=derived');
    await page.getByRole('button', { name: 'Create derived parameter' }).click();
    const option = page.getByRole('dialog').getByLabel('Preview on').locator(`option[value="${fixture.unitOperationId}"]`);
    await expect(option).toHaveText(`${fixture.run.name} · Fermentation #${fixture.unitOperationId} · 2025-03-03`);
  });
});

test('the Average Titer averages g/L, converts mg/L, leaves out other units and lists them', async ({ page, request }, testInfo) => {
  const session = await signUp(request, { name: 'Titer User' });
  const fixture = await createRunWithSeries(request, session, uniqueStamp(), 'A', '2025-03-03T08:00:00.000Z');
  const titers: Array<[string, string, number]> = [['HPLC titer', 'g/L', 3.6], ['Imported titer', 'mg/L', 2400], ['Imported OD as titer', 'OD600', 850]];
  const points = [];
  for (const [name, unit, value] of titers) {
    const instrument = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name, type: 'titer', unit, equipment_id: fixture.equipment.id });
    points.push({ measured_at: '2025-03-03T20:00:00.000Z', instrument_id: instrument.id, float_value: value });
  }
  const bulk = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points });
  expect(bulk.status(), await bulk.text()).toBeLessThan(300);

  await signInWithSession(page, session, '/dashboard');
  const card = page.getByLabel('Average Titer', { exact: true });
  // (3.6 + 2.4) / 2; averaged as the numbers stood, it was (3.6 + 2400 + 850) / 3 = 1084.5 g/L.
  await expect(card).toContainText('3.0 g/L');
  await card.getByRole('button', { name: 'Titer instruments behind this figure' }).click();
  const breakdown = page.getByTestId('titer-breakdown');
  await expect(breakdown.getByRole('row').filter({ hasText: 'HPLC titer' })).toContainText('3.6 g/L');
  await expect(breakdown.getByRole('row').filter({ hasText: 'Imported titer' })).toContainText('2.4 g/L');
  await expect(breakdown.getByRole('row').filter({ hasText: 'Imported OD as titer' })).toContainText('left out: OD600 is not a concentration');
  await screenshot(page, 'average-titer-made-of', testInfo);
});

test('a new API key has a Copy button that puts the secret on the clipboard', async ({ page, request, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const session = await signUp(request, { name: 'Key Maker' });
  await signInWithSession(page, session, '/settings');
  await page.getByRole('tab', { name: 'API Keys' }).click();
  await page.getByRole('button', { name: 'Create API Key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Feed for the copy button');
  await dialog.getByRole('button', { name: 'Create Key' }).click();
  const shown = page.getByTestId('created-api-key');
  const key = (await shown.locator('code').textContent())!.trim();
  expect(key).toMatch(/^bpk_/);
  await shown.getByRole('button', { name: 'Copy the key' }).click();
  await expectToast(page, 'Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
});
