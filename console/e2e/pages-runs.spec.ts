/**
 * Dashboard, All runs and run detail as the demo organisation's admin: the cards, the recent
 * runs, the filter operators, the narrow menu, Export Data, Create Run, the unit-operation flow with
 * its zoom limits, Key Insights, the unit-operation dialog and the failure message.
 */
import { expect, refusedRequests, test, type Page } from './support/quiet-console.ts';
import { signInWithSession, type ApiSession } from './support/auth.ts';
import { adminSession, createRunFixture, screenshot, type RunFixture } from './pages-helpers.ts';

let admin: ApiSession;
let fixture: RunFixture;

test.beforeAll(async ({ request }) => {
  admin = await adminSession(request);
  fixture = await createRunFixture(request, admin);
});

async function addFilter(page: Page, column: string, operator: string, value: string, kind: 'text' | 'select' | 'date' = 'text') {
  await page.getByRole('button', { name: 'Add filter' }).click();
  const popover = page.getByTestId('filter-popover');
  await popover.getByLabel('Column').selectOption({ label: column });
  await popover.getByLabel('Operator').selectOption({ label: operator });
  if (kind === 'select') await popover.getByLabel('Value').selectOption(value);
  else await popover.getByLabel('Value').fill(value);
  await popover.getByRole('button', { name: 'Apply filter' }).click();
}

test('dashboard shows the four cards and recent runs that open the run', async ({ page }, testInfo) => {
  await signInWithSession(page, admin, '/dashboard');
  for (const label of ['Total Runs', 'Active Runs', 'Average Titer', 'Average Run Time']) {
    await expect(page.getByLabel(label)).toBeVisible();
  }
  await expect(page.getByLabel('Total Runs')).not.toContainText('...');
  await expect(page.getByLabel('Average Titer')).toContainText(/g\/L|N\/A/);
  await expect(page.getByRole('heading', { name: 'Recent Runs' })).toBeVisible();
  await expect(page.getByRole('button', { name: `Edit ${fixture.otherRun.name}` })).toBeVisible();
  await screenshot(page, 'dashboard', testInfo);
  await page.getByRole('row', { name: new RegExp(fixture.otherRun.name) }).getByRole('cell').first().click();
  await expect(page).toHaveURL(new RegExp(`/runs/${fixture.otherRun.id}$`));
});

test('all runs: filters with every operator kind, export dialog, create run, narrow menu', async ({ page }, testInfo) => {
  await signInWithSession(page, admin, '/runs/overview');
  const table = page.getByTestId('runs-table');
  await expect(table).toBeVisible();

  await addFilter(page, 'Name', 'contains', fixture.stamp);
  await expect(table.getByRole('row')).toHaveCount(3);
  await addFilter(page, 'Scale (L)', 'greater than', '10');
  await expect(table.getByRole('row')).toHaveCount(2);
  await expect(table).toContainText(fixture.otherRun.name);
  await page.getByRole('button', { name: 'Clear filters' }).click();

  await addFilter(page, 'Strain', 'equals', `Strain-${fixture.stamp}`, 'select');
  await addFilter(page, 'Status', 'equals', 'Completed', 'select');
  await expect(table.getByRole('row')).toHaveCount(2);
  await expect(table).toContainText(fixture.run.name);
  await page.getByRole('button', { name: 'Clear filters' }).click();

  await addFilter(page, 'Name', 'contains', fixture.stamp);
  await addFilter(page, 'Start Time', 'less or equal', '2025-03-03', 'date');
  await expect(table.getByRole('row')).toHaveCount(2);
  await expect(page.getByTestId('active-filter')).toHaveCount(2);
  await screenshot(page, 'runs-overview-filtered', testInfo);
  await page.getByTestId('active-filter').nth(1).getByRole('button').click();
  await addFilter(page, 'Start Time', 'greater than', '2025-03-03', 'date');
  await expect(page.getByText('No runs match the filters')).toBeVisible();
  await page.getByRole('button', { name: 'Clear filters' }).click();

  // The column and a non-blank value are required.
  await page.getByRole('button', { name: 'Add filter' }).click();
  await expect(page.getByTestId('filter-popover').getByRole('button', { name: 'Apply filter' })).toBeDisabled();
  await page.keyboard.press('Escape');

  await page.getByRole('button', { name: 'Export Data' }).click();
  await expect(page.getByRole('dialog')).toContainText("Your organisation's records as a file.");
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('button', { name: 'Create Run' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toContainText('Name is required.');
  await dialog.getByLabel('Name').fill(`Created ${fixture.stamp}`);
  await dialog.getByLabel('Facility').selectOption({ label: fixture.facility.name });
  await dialog.getByLabel('Target').fill('Lysozyme');
  await dialog.getByLabel('Scale (L)').fill('5');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await addFilter(page, 'Name', 'equals', `Created ${fixture.stamp}`);
  await expect(table.getByRole('row')).toHaveCount(2);

  await page.setViewportSize({ width: 1100, height: 800 });
  await expect(page.getByRole('button', { name: 'Export Data' })).toBeHidden();
  await page.getByRole('button', { name: 'Run actions' }).click();
  await expect(page.getByRole('menuitem', { name: 'Create Run' })).toBeVisible();
  await expect(page.getByRole('menuitem', { name: 'Export Data' })).toBeVisible();
  await screenshot(page, 'runs-overview-narrow', testInfo);
});

test.describe('run detail', () => {
  // After a delete the dialog's dry-run counts are asked once more for the deleted unit operation,
  // and the browser notes the 404 (the console handles it).
  test.use({ expectedConsoleMessages: refusedRequests() });

test('run detail: header, flow, zoom limits, key insights, unit operation dialog and delete', async ({ page }, testInfo) => {
  await signInWithSession(page, admin, `/runs/${fixture.run.id}`);
  await expect(page.getByRole('heading', { name: fixture.run.name })).toBeVisible();
  await expect(page.getByText('A fed-batch made by the page tests.')).toBeVisible();
  const cards = page.getByTestId('unit-operation-card');
  await expect(cards).toHaveCount(2);
  await expect(cards.nth(0)).toContainText('Fermentation');
  await expect(cards.nth(1)).toContainText('Centrifugation');
  await expect(cards.nth(1)).toContainText('End-');
  await expect(page.getByText('Add Unit Operation')).toBeVisible();

  await expect(page.getByTestId('insight-max-titer')).toContainText('12.5 g/L');
  await expect(page.getByTestId('insight-yield')).toContainText('80.0%');
  await expect(page.getByTestId('insight-run-time')).toContainText('2.0 days');
  await expect(page.getByTestId('insight-status')).toContainText('Completed');
  await screenshot(page, 'run-detail', testInfo);

  const zoom = page.getByTestId('zoom-level');
  await expect(zoom).toHaveText('100%');
  for (let step = 0; step < 12; step += 1) {
    const zoomIn = page.getByRole('button', { name: 'Zoom in' });
    if (await zoomIn.isDisabled()) break;
    await zoomIn.click();
  }
  await expect(zoom).toHaveText('200%');
  await expect(page.getByRole('button', { name: 'Zoom in' })).toBeDisabled();
  for (let step = 0; step < 20; step += 1) {
    const zoomOut = page.getByRole('button', { name: 'Zoom out' });
    if (await zoomOut.isDisabled()) break;
    await zoomOut.click();
  }
  await expect(zoom).toHaveText('30%');
  await page.getByRole('button', { name: 'Reset' }).click();
  await expect(zoom).toHaveText('100%');
  await page.getByTestId('unit-operation-flow').hover();
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -100);
  await page.keyboard.up('Control');
  await expect(zoom).toHaveText('110%');

  // Add a unit operation: required fields first, then a real one.
  await page.getByText('Add Unit Operation').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText('Please fill in all required fields.')).toBeVisible();
  await dialog.getByLabel('Type').selectOption({ label: 'Filtration' });
  await dialog.getByLabel('Equipment').selectOption({ label: fixture.equipment.name });
  // Between the fermentation and the centrifugation: the equipment runs one unit operation at a time.
  await dialog.getByLabel('Start Time').fill('2025-03-04T20:10');
  await dialog.getByLabel('End Time').fill('2025-03-04T20:05');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText('End time must be after start time.')).toBeVisible();
  await dialog.getByLabel('End Time').fill('2025-03-04T20:50');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText('Unit operation created successfully.')).toBeVisible();
  await expect(cards).toHaveCount(3);
  // Cards follow start times: the filtration sits between the fermentation and the centrifugation.
  const filtration = cards.filter({ hasText: 'Filtration' });
  await expect(filtration).toHaveCount(1);

  // Edit locks the fields; delete asks first.
  await filtration.getByRole('button', { name: 'Edit unit operation' }).click();
  await expect(dialog.getByLabel('Type')).toBeDisabled();
  await expect(dialog.getByLabel('Equipment')).toBeDisabled();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await filtration.getByRole('button', { name: 'Delete unit operation' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByText('Unit operation deleted successfully!')).toBeVisible();
  await expect(cards).toHaveCount(2);

  await cards.nth(0).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${fixture.run.id}/unit-operations/${fixture.unitOperations[0]!.id}$`));
});
});

test.describe('a missing run', () => {
  test.use({ expectedConsoleMessages: refusedRequests(/error: Failed to /) });
  test('a missing run has the same not-found page as a missing unit operation', async ({ page }) => {
    await signInWithSession(page, admin, '/runs/987654321');
    await expect(page.getByRole('heading', { name: 'Run not found.' })).toBeVisible();
    await expect(page.getByText('There is no run 987654321 in this organisation.')).toBeVisible();
    await expect(page.getByText('Failed to fetch run details')).toHaveCount(0);
    await page.goto('/runs/not-a-number');
    await expect(page.getByRole('heading', { name: 'Run not found.' })).toBeVisible();
    await page.goto(`/runs/${fixture.run.id}/unit-operations/987654321`);
    await expect(page.getByRole('heading', { name: 'Unit operation not found for this step.' })).toBeVisible();
  });
});

test('the runs table stays light with 10,000 runs (only visible rows are rendered)', async ({ page }) => {
  const total = 10_000;
  const runs = Array.from({ length: total }, (_, index) => ({
    id: index + 1, organization_id: admin.user.organization_id, facility_id: fixture.facility.id, name: `Bulk Run ${String(index + 1).padStart(5, '0')}`,
    strain: index % 2 ? 'E. coli' : 'P. pastoris', target: 'GFP', description: null, start_time: '2025-01-01T00:00:00.000Z',
    end_time: index % 3 ? '2025-01-02T00:00:00.000Z' : null, scale_liters: index % 50, scale_grams: null,
    status: index % 3 ? 'Completed' : 'Active', created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z',
  }));
  // Served by the browser itself: the point is the table, not the server's paging.
  await page.route(/\/api\/v1\/runs\?limit=/, (route) => {
    const url = new URL(route.request().url());
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const limit = Number(url.searchParams.get('limit'));
    return route.fulfill({ json: runs.slice(offset, offset + limit), headers: { 'X-Total-Count': String(total) } });
  });
  await signInWithSession(page, admin, '/runs/overview');
  const table = page.getByTestId('runs-table');
  await expect(page.getByTestId('runs-count')).toHaveText(`${total} of ${total} runs`);
  expect(await table.locator('tbody tr.app-run-row').count()).toBeLessThan(80);
  await table.evaluate((element) => { element.scrollTop = element.scrollHeight; });
  await expect(table).toContainText('Bulk Run 10000');
  expect(await table.locator('tbody tr.app-run-row').count()).toBeLessThan(80);
  await addFilter(page, 'Scale (L)', 'greater or equal', '49');
  await expect(page.getByTestId('runs-count')).toHaveText(`200 of ${total} runs`);
});
