/**
 * Run review and release in the browser: an editor signs a run as its author (password asked again)
 * and submits it; the run's edit buttons are disabled saying why and the api refuses an edit with 409;
 * an admin approves with a second signature; the admin reopens it with a reason and both signatures
 * show revoked; the review report lists the steps and downloads as CSV and PDF.
 */
import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from './support/quiet-console.ts';
import { apiSignIn, signInWithSession, signUp, type ApiSession } from './support/auth.ts';
import { call, callJson, createRunFixture, createUserWithRole, screenshot, type RunFixture } from './pages-helpers.ts';

const EDITOR_PASSWORD = 'Pages-Role-Pass1!';

let admin: ApiSession & { password: string };
let editor: ApiSession;
let fixture: RunFixture;

test.beforeAll(async ({ request }) => {
  admin = await signUp(request, { name: 'Review Admin', organizationName: `Review org ${Date.now()}` });
  editor = await createUserWithRole(request, admin, 'editor');
  fixture = await createRunFixture(request, admin);
  // Every signature asks for the password, however recent the sign-in.
  await callJson(request, admin.token, 'PUT', '/api/v1/session-policy', { inactivity_minutes: 60, signing_reauth_minutes: 0 });
});

async function signWithPassword(page: Page, buttonName: string, password: string, submitLabel: string) {
  await page.getByTestId('run-review-panel').getByRole('button', { name: buttonName, exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel('Password')).toBeVisible();
  await expect(dialog.getByRole('button', { name: submitLabel })).toBeDisabled();
  await dialog.getByLabel('Password').fill(password);
  await dialog.getByRole('button', { name: submitLabel }).click();
  await expect(dialog).toBeHidden();
}

test('a run goes through review with two signatures, refuses edits, is reopened with a reason, and its report downloads', async ({ page, request }, testInfo) => {
  const runUrl = `/runs/${fixture.run.id}`;
  const panel = page.getByTestId('run-review-panel');
  const signatures = page.getByTestId('run-signature');

  // The editor signs as author, with the password asked again, and submits the run.
  await signInWithSession(page, editor, runUrl);
  await expect(panel.getByTestId('review-state')).toHaveText('Draft');
  await signWithPassword(page, 'Sign', EDITOR_PASSWORD, 'Sign');
  await expect(signatures).toHaveCount(1);
  await expect(signatures.first()).toContainText(editor.user.name);
  await expect(signatures.first()).toContainText('Authored');
  await expect(signatures.first()).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC \(UTC\+00:00\)/);
  await expect(signatures.first()).toContainText('Valid');
  await panel.getByRole('button', { name: 'Submit for review' }).click();
  await expect(panel.getByTestId('review-state')).toHaveText('In review');

  // Locked: the edit buttons say why, and the api refuses an edit naming the state.
  const editRun = page.getByRole('button', { name: 'Edit Run' });
  await expect(editRun).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Delete', exact: true })).toBeDisabled();
  const lockedText = `Run "${fixture.run.name}" is In review: reopen it with a reason to change it`;
  await expect(page.getByTestId('run-locked')).toHaveText(lockedText);
  await page.locator('.bp6-popover-target', { has: editRun }).hover();
  await expect(page.locator('.bp6-tooltip')).toHaveText(lockedText);
  await screenshot(page, 'run-review-in-review', testInfo);
  const refused = await call(request, editor.token, 'PUT', `/api/v1/runs/${fixture.run.id}`, { name: 'Changed under review' });
  expect(refused.status()).toBe(409);
  expect(await refused.json()).toEqual({ error: `Run "${fixture.run.name}" is In review: it cannot be changed until it is reopened with a reason` });

  // The admin approves: a second signature, password asked again.
  await signInWithSession(page, admin, runUrl);
  await signWithPassword(page, 'Approve', admin.password, 'Approve and sign');
  await expect(panel.getByTestId('review-state')).toHaveText('Approved');
  await expect(signatures).toHaveCount(2);
  await expect(signatures.nth(1)).toContainText(admin.user.name);
  await expect(signatures.nth(1)).toContainText('Approved');
  await expect(page.getByText('Valid', { exact: true })).toHaveCount(2);
  await screenshot(page, 'run-review-approved', testInfo);

  // Reopened with a reason: both signatures stay, revoked.
  await panel.getByRole('button', { name: 'Reopen' }).click();
  const reopen = page.getByRole('dialog');
  await expect(reopen.getByRole('button', { name: 'Reopen' })).toBeDisabled();
  await reopen.getByLabel('Reason').fill('Feed rate entered for the wrong vessel');
  await reopen.getByRole('button', { name: 'Reopen' }).click();
  await expect(panel.getByTestId('review-state')).toHaveText('Draft');
  await expect(signatures.filter({ hasText: 'Revoked' })).toHaveCount(2);
  await expect(signatures.first()).toContainText('Reason: Feed rate entered for the wrong vessel');
  await expect(editRun).toBeEnabled();
  await screenshot(page, 'run-review-reopened', testInfo);

  // The review report: the steps with the reason, and its downloads.
  await panel.getByRole('button', { name: 'Review report' }).click();
  const report = page.getByRole('dialog', { name: /^Review report/ });
  const entries = report.getByTestId('review-report-entries');
  await expect(entries.getByRole('row')).toHaveCount(4);
  await expect(entries).toContainText('In review → Approved');
  await expect(entries).toContainText('Feed rate entered for the wrong vessel');
  await screenshot(page, 'run-review-report', testInfo);
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), report.getByRole('button', { name: 'Download CSV' }).click()]);
  expect(csvDownload.suggestedFilename()).toMatch(/^review-report-.*\.csv$/);
  const csv = await readFile((await csvDownload.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toBe('kind,at,at_local,who,record,field,old_value,new_value,reason,detail');
  expect(csv.match(/^signature,/gm)).toHaveLength(2);
  const [pdfDownload] = await Promise.all([page.waitForEvent('download'), report.getByRole('button', { name: 'Download PDF' }).click()]);
  expect(pdfDownload.suggestedFilename()).toMatch(/^review-report-.*\.pdf$/);
  expect((await readFile((await pdfDownload.path())!)).subarray(0, 5).toString()).toBe('%PDF-');
});

test('Account settings list the user\'s sessions; ending another one signs that session out', async ({ page, request }, testInfo) => {
  const other = await apiSignIn(request, editor.user.email, EDITOR_PASSWORD);
  await signInWithSession(page, editor, '/settings');
  const section = page.getByTestId('account-sessions');
  const rows = section.getByTestId('account-session');
  // The settings page and its lists load lazily; a busy machine takes its time.
  await expect(rows.first()).toBeVisible({ timeout: 30_000 });
  const count = await rows.count();
  expect(count).toBeGreaterThanOrEqual(2);
  await expect(section.getByText('This session')).toHaveCount(1);
  await expect(section).toContainText('Chrome on Linux');
  await expect(page.getByTestId('session-policy')).toBeVisible();
  await screenshot(page, 'account-sessions', testInfo);
  await section.getByRole('button', { name: 'End all other sessions' }).click();
  await expect(rows).toHaveCount(1);
  expect((await call(request, other.token, 'GET', '/api/v1/auth/profile')).status()).toBe(401);
  expect((await call(request, editor.token, 'GET', '/api/v1/auth/profile')).status()).toBe(200);
});
