/**
 * The run detail shows how far each unit operation is inside the saved golden batches of its type:
 * the demo's faulty fed-batch run, whose feed valve leaked, has its feed rate worst and listed first.
 */
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1200 } });

const FAULTY = 'FB-2026-041 GFP feed valve fault';

test('the faulty run\'s page lists its fermentation\'s parameters inside the golden batch band, worst first', async ({ page, request }) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const [demoBatch] = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/golden-batches');
  const runs = await callJson<Array<{ id: number; name: string }>>(request, session.token, 'GET', '/api/v1/runs');
  const operations = await callJson<Array<{ id: number; run_id: number; type: string }>>(request, session.token, 'GET', '/api/v1/unit-operations');
  const faultyRun = runs.find((run) => run.name === FAULTY)!;
  const faultyOperation = operations.find((operation) => operation.run_id === faultyRun.id && operation.type === 'fermentation')!;
  // The demo's readings load in the background after start-up: wait until the whole fermentation is there.
  await expect.poll(async () => {
    const deviation = await callJson<{ targets: Array<{ parameters: Array<{ compared: number }> }> }>(
      request, session.token, 'POST', '/api/v1/analysis/deviation', { golden_batch_id: demoBatch!.id, target_unit_operation_ids: [faultyOperation.id] });
    return deviation.targets[0]?.parameters.every((parameter) => parameter.compared > 700) ?? false;
  }, { timeout: 240_000, intervals: [2_000] }).toBe(true);

  await signInWithSession(page, session, `/runs/${faultyRun.id}`);
  const card = page.getByTestId('golden-conformance-card');
  const row = card.getByTestId('conformance-row').filter({ hasText: demoBatch!.name });
  await expect(row).toContainText('Fermentation');
  const tags = row.getByTestId('conformance-parameter');
  await expect(tags.first()).toContainText('Feed Rate', { timeout: 60_000 });
  // Worst first: the shares inside the band never decrease along the row.
  const shares = (await tags.allTextContents()).map((text) => Number(/([\d.]+) % inside/.exec(text)?.[1]));
  expect(shares.length).toBeGreaterThan(1);
  expect(shares.every((share, index) => index === 0 || share >= shares[index - 1]!)).toBe(true);
  expect(shares[0]).toBeLessThan(95);
});
