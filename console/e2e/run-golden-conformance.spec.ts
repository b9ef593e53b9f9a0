/**
 * The run detail shows, for each unit operation, the parameters flagged against the saved golden
 * batches of its type, each with why: the demo's faulty fed-batch run, whose feed valve leaked, has
 * its feed rate flagged first; the good running fed-batch has nothing flagged; a run that has not
 * started sends no deviation request (it could not be answered).
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession, call, callJson } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1200 } });

const FAULTY = 'FB-2026-041 GFP feed valve fault';

const GOOD_RUNNING = 'FB-2026-045 GFP running';
const NOT_STARTED = 'FB-2026-048 Media screen';

test('the faulty run\'s page flags its feed rate first with why; a good run has nothing flagged; a run not started asks nothing', async ({ page, request }) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const [demoBatch] = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/golden-batches');
  const runs = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/runs');
  const operations = await callJson<Array<{ id: number; run_id: number; type: string }>>(request, session.token, 'GET', '/api/v1/unit-operations');
  const faultyRun = runs.find((run) => run.name === FAULTY)!;
  const faultyOperation = operations.find((operation) => operation.run_id === faultyRun.id && operation.type === 'fermentation')!;
  // The demo's readings load in the background after start-up: wait until the whole fermentation is there.
  await expect.poll(async () => {
    // While the readings are still being summarised the api answers 503 (try again): keep polling.
    const response = await call(request, session.token, 'POST', '/api/v1/analysis/deviation', { golden_batch_id: demoBatch!.id, target_unit_operation_ids: [faultyOperation.id] });
    if (!response.ok()) return false;
    const deviation = await response.json() as { targets: Array<{ parameters: Array<{ compared: number }> }> };
    return deviation.targets[0]?.parameters.every((parameter) => parameter.compared > 700) ?? false;
  }, { timeout: 240_000, intervals: [2_000] }).toBe(true);

  await signInWithSession(page, session, `/runs/${faultyRun.id}`);
  const card = page.getByTestId('golden-conformance-card');
  const row = card.getByTestId('conformance-row').filter({ hasText: demoBatch!.name });
  await expect(row).toContainText('Fermentation', { timeout: 60_000 });
  const flagged = row.getByTestId('conformance-parameter');
  await expect(flagged.first()).toContainText('Feed Rate', { timeout: 60_000 });
  await expect(flagged.first().getByTestId('conformance-reason')).toHaveText(/^outside for [\d.]+ h, up to [\d.]+ band widths above at \d+:\d\d, from \d+:\d\d/);
  // The controlled temperature is not among the flagged; it is behind "not flagged".
  await expect(flagged.filter({ hasText: 'Temperature' })).toHaveCount(0);
  await row.getByTestId('conformance-others').click();
  await expect(row).toContainText('Temperature');
  await card.scrollIntoViewIfNeeded();
  await card.screenshot({ path: test.info().outputPath('faulty-run-golden-batch.png') });

  const goodRun = runs.find((run) => run.name === GOOD_RUNNING)!;
  await page.goto(`/runs/${goodRun.id}`);
  const goodRow = page.getByTestId('golden-conformance-card').getByTestId('conformance-row').filter({ hasText: demoBatch!.name });
  await expect(goodRow.getByTestId('conformance-clear')).toContainText(/Nothing flagged \(\d+ parameters compared\)/, { timeout: 60_000 });
  await expect(goodRow.getByTestId('conformance-parameter')).toHaveCount(0);
  await page.getByTestId('golden-conformance-card').screenshot({ path: test.info().outputPath('good-run-golden-batch.png') });

  const notStarted = runs.find((run) => run.name === NOT_STARTED)!;
  let deviationRequests = 0;
  page.on('request', (sent) => { if (sent.url().includes('/api/v1/analysis/deviation')) deviationRequests += 1; });
  await page.goto(`/runs/${notStarted.id}`);
  await expect(page.getByText(NOT_STARTED).first()).toBeVisible();
  await page.waitForLoadState('networkidle');
  expect(deviationRequests).toBe(0);
});
