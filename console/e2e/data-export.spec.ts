/**
 * Exports end to end: the Export dialog of the unit-operation and run pages downloads the file the
 * choice describes (CSV wide by default, the whole unit operation; CSV long; downsampled; XLSX); an
 * export above EXPORT_STREAM_MAX_POINTS (500 in the e2e stack) becomes an export job whose progress bar
 * ends in a Download, and is listed among the earlier exports after a reload; viewers see no Export
 * button; the runs overview exports records; the Settings archive is prepared as a job, still shown
 * (running or ready) after a reload, and downloaded. Choices are made right after a dialog opens, once, with
 * no retry: the dialogs open in place and wait for the page's data, so a click lands on its target.
 */
import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from './support/quiet-console.ts';
import { adminSession, createUserWithRole, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createRunWithSeries, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: download.suggestedFilename(), text: await readFile((await download.path())!, 'utf8') };
}

test('exports a unit operation and a run from their pages; viewers see no Export', async ({ page, request, browser }, testInfo) => {
  // A long walk (three downloads, a second user): minutes on a busy two-core machine.
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const a = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');

  await signInWithSession(page, session, `/runs/${a.run.id}/unit-operations/${a.unitOperationId}`);
  await page.getByRole('button', { name: 'Export' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByRole('checkbox', { name: 'Temperature A [celsius]' })).toBeChecked();
  await screenshot(page, 'export-dialog', testInfo);

  // The default: CSV wide over the whole unit operation, raw readings: 578 points, more than one
  // answer may stream here, so the file is written as an export job and downloaded when ready.
  await dialog.getByRole('button', { name: 'Export' }).click();
  const job = dialog.getByTestId('export-job');
  await expect(job.getByText('Export ready')).toBeVisible({ timeout: 60_000 });
  await expect(job.getByRole('progressbar')).toBeVisible();
  await screenshot(page, 'export-dialog-job-ready', testInfo);
  const wide = await downloaded(page, () => job.getByRole('button', { name: 'Download' }).click());
  expect(wide.name).toMatch(/^unit-operation-\d+-\d{8}T\d{6}-wide\.csv$/);
  const wideLines = wide.text.trim().split('\r\n');
  expect(wideLines[0]).toBe('timestamp,elapsed_s,Temperature A [celsius],pH A [pH]');
  expect(wideLines).toHaveLength(1 + 24 * 12 + 1);
  expect(wideLines[1]).toMatch(/^2025-03-03T08:00:00\.000Z,0,37,7\.05$/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();

  // The export job outlives a reload: the dialog lists it among the earlier exports, still downloadable.
  await page.reload();
  await page.getByRole('button', { name: 'Export' }).click();
  const earlier = dialog.getByTestId('earlier-export-job').first();
  await expect(earlier.getByText('Export ready')).toBeVisible({ timeout: 30_000 });
  await expect(earlier.getByText(wide.name)).toBeVisible();

  // CSV long of one instrument, downsampled to hours.
  await dialog.getByRole('checkbox', { name: 'pH A [pH]' }).uncheck({ force: true });
  await dialog.getByRole('radio', { name: /CSV long/ }).check({ force: true });
  await dialog.getByRole('radio', { name: /Downsampled/ }).check({ force: true });
  await dialog.getByLabel('Bucket width').fill('ten');
  await expect(dialog.getByText('The bucket width must look like 10s, 5m or 1h.')).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Export' })).toBeDisabled();
  await dialog.getByLabel('Bucket width').fill('1h');
  const long = await downloaded(page, () => dialog.getByRole('button', { name: 'Export' }).click());
  const longLines = long.text.trim().split('\r\n');
  expect(longLines[0]).toBe('timestamp,elapsed_s,instrument,instrument_id,unit,avg,min,max');
  expect(longLines).toHaveLength(1 + 25);
  expect(longLines.slice(1).every((line) => line.includes(`,Temperature A,${a.instruments.temperature},celsius,`))).toBe(true);

  // The run page: every unit operation, as an Excel workbook.
  await page.goto(`/runs/${a.run.id}`);
  await page.getByRole('button', { name: 'Export' }).click();
  await expect(dialog.getByLabel('Scope')).toHaveValue(`run-${a.run.id}`);
  await dialog.getByRole('radio', { name: /Excel workbook/ }).check({ force: true });
  await dialog.getByRole('button', { name: 'Export' }).click();
  await expect(job.getByText('Export ready')).toBeVisible({ timeout: 60_000 });
  const workbook = await downloaded(page, () => job.getByRole('button', { name: 'Download' }).click());
  expect(workbook.name).toMatch(/^run-\d+-\d{8}T\d{6}\.xlsx$/);

  // Viewers may read but not export.
  const viewer = await createUserWithRole(request, session, 'viewer');
  const viewerContext = await browser.newContext({ timezoneId: 'UTC' });
  const viewerPage = await viewerContext.newPage();
  await signInWithSession(viewerPage, viewer, `/runs/${a.run.id}/unit-operations/${a.unitOperationId}`);
  await expect(viewerPage.getByTestId('unit-operation-detail')).toBeVisible({ timeout: 30_000 });
  await expect(viewerPage.getByRole('button', { name: 'Export' })).toHaveCount(0);
  await viewerPage.goto(`/runs/${a.run.id}`);
  await expect(viewerPage.getByRole('heading', { name: a.run.name })).toBeVisible({ timeout: 30_000 });
  await expect(viewerPage.getByRole('button', { name: 'Export' })).toHaveCount(0);
  await viewerContext.close();
});

test('exports records from the runs overview', async ({ page, request }) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const a = await createRunWithSeries(request, session, stamp, 'A', '2025-03-03T08:00:00.000Z');
  await signInWithSession(page, session, '/runs/overview');
  await page.getByRole('button', { name: 'Export Data' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('radio', { name: 'JSON' }).check({ force: true });
  const runs = await downloaded(page, () => dialog.getByRole('button', { name: 'Export' }).click());
  expect(runs.name).toMatch(/^runs-\d{4}-\d{2}-\d{2}\.json$/);
  const parsed = JSON.parse(runs.text) as Array<{ id: number; name: string }>;
  expect(parsed.find((run) => run.id === a.run.id)?.name).toBe(a.run.name);
});

test('prepares the organisation archive in Settings with a progress bar, keeps it across a reload, then downloads it', async ({ page, request }) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  await signInWithSession(page, session, '/settings');
  const section = page.getByTestId('organization-archive');
  const before = await section.getByTestId('recent-export').count();
  await section.getByRole('button', { name: 'Prepare archive' }).click();
  // The new archive heads the list, with its progress bar while it is written.
  await expect(section.getByTestId('recent-export')).toHaveCount(Math.min(before + 1, 3), { timeout: 30_000 });
  const id = await section.getByTestId('recent-export').first().getAttribute('data-export-id');
  await expect(section.getByTestId('recent-export').first().getByRole('progressbar')).toBeVisible();

  // A reload, running or finished meanwhile: the section still shows this archive, and ends ready.
  await page.reload();
  const job = section.locator(`[data-export-id="${id}"]`);
  await expect(job.getByRole('progressbar')).toBeVisible({ timeout: 30_000 });
  await expect(job.getByText('Export ready')).toBeVisible({ timeout: 120_000 });
  await expect(section.getByRole('button', { name: 'Prepare archive' })).toBeEnabled();
  const [download] = await Promise.all([page.waitForEvent('download'), job.getByRole('button', { name: 'Download' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^organization-\d+-\d{4}-\d{2}-\d{2}\.zip$/);
  // A ZIP: its local file header signature.
  expect((await readFile((await download.path())!)).subarray(0, 4).toString('hex')).toBe('504b0304');
});
