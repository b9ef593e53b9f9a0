/**
 * Reason for change in the browser: an admin makes runs require a reason and keeps a pick-list in
 * Settings; editing a run then asks for a reason (Continue stays disabled until one is given), a
 * cancelled dialog changes nothing, and the reason given is in the audit log.
 */
import { expect, test } from './support/quiet-console.ts';
import { signInWithSession, signUp, type ApiSession } from './support/auth.ts';
import { callJson, screenshot } from './pages-helpers.ts';

// The cancelled dialog is a failure the run form logs (and shows as a toast) on purpose.
test.use({ expectedConsoleMessages: { patterns: [/Failed to update run\. ChangeReasonCancelled: The change was not made: no reason for change was given/] } });

let admin: ApiSession;
let run: { id: number; name: string };

test.beforeAll(async ({ request }) => {
  admin = await signUp(request, { name: 'Reason Admin', organizationName: `Reason lab ${Date.now()}` });
  const facility = await callJson<{ id: number }>(request, admin.token, 'POST', '/api/v1/facilities', { name: 'Reason hall', type: 'pilot plant' });
  run = await callJson<{ id: number; name: string }>(request, admin.token, 'POST', '/api/v1/runs', { facility_id: facility.id, name: 'Reason run', target: 'Lysozyme' });
});

test('runs require a reason: the settings, the dialog on an edit, and the reason in the audit log', async ({ page, request }, testInfo) => {
  await signInWithSession(page, admin, '/settings');
  const section = page.getByTestId('change-reason-settings');
  await expect(section.getByLabel('Runs')).toHaveValue('off');
  await section.getByLabel('Runs').selectOption('required');
  await section.getByLabel('Samples').selectOption('optional');
  const pickList = section.getByLabel('Reasons to pick from');
  await pickList.fill('Transcription error');
  await pickList.press('Enter');
  await pickList.fill('Instrument recalibrated');
  await pickList.press('Enter');
  await section.scrollIntoViewIfNeeded();
  await screenshot(page, 'change-reason-settings', testInfo);
  await section.getByRole('button', { name: 'Save Reason Settings' }).click();
  await expect(page.getByText('Reason for change settings saved').first()).toBeVisible();
  const saved = await callJson<{ policies: Record<string, string>; reasons: string[] }>(request, admin.token, 'GET', '/api/v1/organization-settings/change-reasons');
  expect(saved).toMatchObject({ policies: { runs: 'required', samples: 'optional', golden_batches: 'off' }, reasons: ['Transcription error', 'Instrument recalibrated'] });

  await page.goto('/runs/overview');
  await page.getByRole('button', { name: `Edit ${run.name}` }).click();
  const form = page.getByRole('dialog', { name: 'Edit Run' });
  await form.getByLabel(/^Name/).fill('Reason run (renamed)');
  await form.getByRole('button', { name: 'Save' }).click();

  const reason = page.getByRole('dialog', { name: 'Reason for change' });
  await expect(reason).toBeVisible();
  await expect(reason).toContainText('requires a reason for every change of runs');
  await expect(reason.getByRole('button', { name: 'Continue' })).toBeDisabled();
  // Cancelled: nothing is sent.
  await reason.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByText('no reason for change was given').first()).toBeVisible();
  // The cancelled dialog is gone (after its closing transition) before the next save asks again.
  await expect(reason).toHaveCount(0);
  expect((await callJson<{ name: string }>(request, admin.token, 'GET', `/api/v1/runs/${run.id}`)).name).toBe('Reason run');

  await form.getByRole('button', { name: 'Save' }).click();
  await expect(reason).toBeVisible();
  await reason.getByLabel('Reason', { exact: true }).selectOption('Transcription error');
  await reason.getByLabel('Details').fill('Batch record says "Reason run (renamed)" — typo at entry');
  await screenshot(page, 'change-reason-dialog', testInfo);
  await reason.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByRole('button', { name: 'Edit Reason run (renamed)' })).toBeVisible();

  await page.goto('/settings');
  await page.getByRole('tab', { name: 'Audit Logs' }).click();
  const table = page.getByTestId('audit-table');
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(table).toContainText('Transcription error: Batch record says "Reason run (renamed)" — typo at entry', { timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
  await screenshot(page, 'change-reason-audit-log', testInfo);
});
