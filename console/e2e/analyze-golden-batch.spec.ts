/**
 * Analyze end to end on the demo organisation: build a golden batch from the good fed-batch runs,
 * overlay the run whose feed valve leaked, see the deviation table name the feed rate first (flagged,
 * with why) and leave the controlled temperature unflagged, open another parameter's chart from its
 * row, export the envelope, save and delete the golden batch; with three references it warns.
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1200 } });

const REFERENCES = ['FB-2026-031', 'FB-2026-034', 'FB-2026-037', 'FB-2026-040', 'FB-2026-043'];
const FAULTY = 'FB-2026-041 GFP feed valve fault';
const PARAMETERS = ['Temperature', 'pH', 'Dissolved O2', 'Stir Rate', 'Feed Rate', 'Optical Density', 'Exhaust Co2'];

test('a golden batch from the demo runs ranks the drifting feed rate of the faulty run first', async ({ page, request }) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  // The demo's readings are loaded in the background after start-up: wait until the saved demo
  // golden batch sees all five references and the faulty run's whole fermentation.
  const [demoBatch] = await callJson<Array<{ id: number }>>(request, session.token, 'GET', '/api/v1/golden-batches');
  const runs = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/runs');
  const operations = await callJson<Array<{ id: number; run_id: number; type: string }>>(request, session.token, 'GET', '/api/v1/unit-operations');
  const faultyRun = runs.find((run) => run.name === FAULTY)!;
  const faultyOperation = operations.find((operation) => operation.run_id === faultyRun.id && operation.type === 'fermentation')!;
  await expect.poll(async () => {
    const deviation = await callJson<{ envelopes: Array<{ references: unknown[] }>; targets: Array<{ parameters: Array<{ compared: number }> }> }>(
      request, session.token, 'POST', '/api/v1/analysis/deviation', { golden_batch_id: demoBatch!.id, target_unit_operation_ids: [faultyOperation.id] });
    const everyReference = deviation.envelopes.every((envelope) => envelope.references.length === REFERENCES.length);
    const wholeRun = deviation.targets[0]?.parameters.every((parameter) => parameter.compared > 700) ?? false;
    return everyReference && wholeRun;
  }, { timeout: 240_000, intervals: [2_000] }).toBe(true);

  await signInWithSession(page, session, '/dashboard');
  await page.getByTestId('sidebar-analyze').click();
  await expect(page).toHaveURL(/\/analyze$/);
  await page.getByLabel('Unit operation type').selectOption('fermentation');
  for (const name of REFERENCES) await page.getByRole('checkbox', { name: new RegExp(`^Reference ${name}`) }).check({ force: true });
  await page.getByRole('checkbox', { name: `Overlay ${FAULTY}` }).check({ force: true });
  for (const parameter of PARAMETERS) await page.getByRole('checkbox', { name: parameter, exact: true }).check({ force: true });
  await page.getByLabel('Band').selectOption('sigma');
  await page.getByLabel('k', { exact: true }).fill('3');
  await page.getByTestId('analyze-run').click();

  const rows = page.getByTestId('deviation-row');
  // Seven envelopes over five 40-hour runs: allow for a machine busy with other work.
  await expect(rows).toHaveCount(PARAMETERS.length, { timeout: 60_000 });
  await expect(rows.first().locator('td').first()).toHaveText('Feed Rate');
  await expect(rows.first()).toContainText(FAULTY);
  await expect(rows.first()).toHaveAttribute('data-flagged', 'true');
  await expect(rows.first().getByTestId('deviation-reason')).toHaveText(/^outside for [\d.]+ h, up to [\d.]+ band widths above at \d+:\d\d, from \d+:\d\d/);
  await expect(rows.filter({ hasText: 'Temperature' })).toHaveAttribute('data-flagged', 'false');
  await expect(rows.filter({ hasText: 'Temperature' }).getByTestId('deviation-reason')).toHaveText('inside the band throughout');
  await expect(page.getByTestId('analyze-warnings')).toHaveCount(0);
  await page.getByTestId('deviation-table').screenshot({ path: test.info().outputPath('deviation-ranking.png') });
  await expect(page.getByTestId('analyze-chart')).toContainText('Feed Rate');

  await rows.filter({ hasText: 'Dissolved O2' }).click();
  await expect(page.getByTestId('analyze-chart')).toContainText('Dissolved O2 — Mean ± 3σ over 5 references');
  await expect(page.getByTestId('analyze-chart')).toContainText('at least ±');

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Envelope CSV' }).click();
  expect((await download).suggestedFilename()).toMatch(/^envelope-.*\.csv$/);

  const name = `E2E golden batch ${Date.now()}`;
  await page.getByLabel('Golden batch name').fill(name);
  await page.getByRole('button', { name: 'Save' }).click();
  const saved = page.getByTestId('golden-batches').getByRole('button', { name, exact: true });
  await expect(saved).toBeVisible();
  await page.getByRole('button', { name: `Delete ${name}` }).click();
  await expect(saved).toHaveCount(0);

  // Three references: the band is warned about, and the feed rate is still first.
  for (const name of REFERENCES.slice(3)) await page.getByRole('checkbox', { name: new RegExp(`^Reference ${name}`) }).uncheck({ force: true });
  await page.getByTestId('analyze-run').click();
  await expect(page.getByTestId('analyze-warnings')).toContainText('made from 3 references; fewer than 5', { timeout: 60_000 });
  await expect(rows.first().locator('td').first()).toHaveText('Feed Rate');
  await page.screenshot({ path: test.info().outputPath('analyze-three-references.png'), fullPage: true });
});
