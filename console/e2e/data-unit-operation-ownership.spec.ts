/**
 * A unit operation owns its readings, as a scientist meets it: the same DASware export chosen for a
 * second unit operation on the same bioreactor is refused at the wizard's first step with the first
 * one named (the dialog stays open, nothing is sent or created), the delete dialog counts what would go, and deleting a unit operation
 * without a window leaves the first one with every reading.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, uniqueStamp } from './data-fixtures.ts';

const DASWARE_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../api/demo-data/CTPC06603.20200714 - 5GB1 - KDB.Control.csv');
const PH_COLUMN = 'Unit 1.pH1.PV [pH]';
const DO_COLUMN = 'Unit 1.DO1.PV [%DO]';

test.use({
  timezoneId: 'UTC', viewport: { width: 1440, height: 1000 },
  // The second upload is refused on purpose (its window overlaps the first).
  expectedConsoleMessages: refusedRequests(/error: Unit operation with its upload was not created/),
});

test('uploading the same DASware file twice never costs the first unit operation a reading', async ({ page, request }, testInfo) => {
  test.setTimeout(360_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `BioFlo 320 ${stamp}`);
  const run = await createRun(request, session, facility.id, `M. buryatense ${stamp}`, '2020-07-14T00:00:00.000Z', '2020-07-17T00:00:00.000Z');
  // Named like the file's columns, so the dialog assigns them by itself.
  const ph = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name: PH_COLUMN, type: 'pH', unit: 'pH', equipment_id: equipment.id });
  const oxygen = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name: DO_COLUMN, type: 'dissolved_o2', unit: '%', equipment_id: equipment.id });
  const readingsOf = async (instrumentId: number) =>
    (await callJson<unknown[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${instrumentId}&limit=100000`)).length;
  const unitOperationsOfRun = () => callJson<Array<{ id: number; start_time: string | null }>>(request, session.token, 'GET', `/api/v1/runs/${run.id}/unit-operations`);

  await signInWithSession(page, session, `/runs/${run.id}`);
  const openWithFile = async () => {
    await page.getByRole('button', { name: 'Add Unit Operation' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
    await dialog.locator('#unit-op-type').selectOption('fermentation');
    await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
    await dialog.locator('#csv-file').setInputFiles(DASWARE_FILE);
    return dialog;
  };
  const addWithFile = async () => {
    const dialog = await openWithFile();
    await expect(dialog.getByLabel(`Assignment of ${PH_COLUMN}`)).toHaveValue(`existing:${ph.id}`);
    await expect(dialog.getByLabel(`Assignment of ${DO_COLUMN}`)).toHaveValue(`existing:${oxygen.id}`);
    // A new unit operation has nothing to replace: the option is not offered.
    await expect(dialog.getByText("Replace this unit operation's existing readings")).toHaveCount(0);
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    return dialog;
  };

  // First upload: the unit operation takes the file's first and last timestamps as its window.
  const first = await addWithFile();
  await expect(first.getByTestId('csv-upload-progress')).toHaveAttribute('data-phase', 'done', { timeout: 120_000 });
  await expectToast(page, 'CSV Upload Success');
  await expect(first).toBeHidden();
  const [created] = await unitOperationsOfRun();
  expect(created!.start_time).not.toBeNull();
  const kept = { ph: await readingsOf(ph.id), oxygen: await readingsOf(oxygen.id) };
  expect(kept.ph).toBeGreaterThan(100);
  expect(kept.oxygen).toBeGreaterThan(100);

  // The same file again: refused at the wizard's first step, before any mapping, naming the first
  // unit operation (the file's first and last readings are read in the browser); nothing is sent.
  const second = await openWithFile();
  await expect(second.getByText(`The equipment is in use by unit operation ${created!.id}`)).toBeVisible({ timeout: 30_000 });
  await expect(second.getByRole('button', { name: 'File Overlaps Another Unit Operation' })).toBeDisabled();
  await expect(second.getByLabel(`Assignment of ${PH_COLUMN}`)).toHaveCount(0);
  await screenshot(page, 'ownership-1-second-upload-refused', testInfo);
  await second.getByRole('button', { name: 'Cancel' }).click();
  await expect(second).toBeHidden();
  expect((await unitOperationsOfRun()).map((operation) => operation.id)).toEqual([created!.id]);

  // The delete dialog says what deleting the first one would remove, per instrument.
  await page.getByRole('button', { name: 'Delete unit operation' }).first().click();
  const confirm = page.getByRole('dialog', { name: 'Delete unit operation' });
  await expect(confirm.getByTestId('readings-to-remove')).toHaveAttribute('data-total', String(kept.ph + kept.oxygen));
  await expect(confirm).toContainText(PH_COLUMN);
  await expect(confirm).toContainText(kept.ph.toLocaleString('en-US'));
  await screenshot(page, 'ownership-2-delete-counts', testInfo);
  await confirm.getByRole('button', { name: 'Cancel' }).click();

  // A second unit operation without a window owns nothing: deleting it removes none of the first one's readings.
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const plain = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await plain.locator('#unit-op-type').selectOption('fermentation');
  await plain.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await plain.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(plain).toBeHidden();
  await expect(page.getByRole('button', { name: 'Delete unit operation' })).toHaveCount(2);
  const empty = (await unitOperationsOfRun()).find((operation) => operation.id !== created!.id)!;
  expect(empty.start_time).toBeNull();
  await page.getByRole('button', { name: 'Delete unit operation' }).nth(1).click();
  await expect(confirm.getByTestId('readings-to-remove')).toHaveAttribute('data-total', '0');
  await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
  await expectToast(page, 'Unit operation deleted successfully!');
  expect((await unitOperationsOfRun()).map((operation) => operation.id)).toEqual([created!.id]);
  // Deletions are queued: give any the api might have queued time to run before counting.
  await page.waitForTimeout(2_000);
  expect({ ph: await readingsOf(ph.id), oxygen: await readingsOf(oxygen.id) }).toEqual(kept);

  await page.getByLabel('Fermentation unit operation').click();
  await expect(page.getByTestId('parameter-list')).toContainText('pH [pH]', { timeout: 30_000 });
  await expect(page.getByTestId('parameter-list')).toContainText('dissolved_o2 [%]');
  await expect(page.getByTestId('parameter-list')).not.toContainText('No data logged by any instruments.');
  await screenshot(page, 'ownership-3-first-keeps-its-readings', testInfo);
});
