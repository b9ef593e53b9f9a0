/**
 * The CSV checks of the unit-operation dialog end to end: bad files answer the
 * fixed CSV messages, and a column with non-numeric values or a missing timestamp column stops the submit.
 */
import { writeFileSync } from 'node:fs';
import { expect, refusedRequests, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, uniqueStamp } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

test.use({ expectedConsoleMessages: refusedRequests(/error: (CSV upload failed|Failed to read the CSV file)/) });

test('rejects bad CSV files with the fixed CSV messages', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  await callJson(request, session.token, 'POST', '/api/v1/instruments', { name: 'temp', type: 'temperature', unit: 'celsius', equipment_id: equipment.id });
  const run = await createRun(request, session, facility.id, `CSV checks ${stamp}`, '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z');

  const file = (name: string, content: string) => {
    const target = testInfo.outputPath(name);
    writeFileSync(target, content);
    return target;
  };
  const cases: [string, string, string, string][] = [
    ['notes.docx', 'time,temp\n2025-01-01T00:00:00Z,30\n', 'Invalid file', 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)'],
    ['empty.csv', '', 'Invalid file', 'File is empty'],
    ['blank.csv', '   \n\n  \n', 'Invalid CSV content', 'File content is empty'],
    ['evil.csv', 'time,temp\n2025-01-01T00:00:00Z,<script>alert(1)</script>\n', 'Invalid CSV content', 'File contains potentially malicious content'],
  ];

  await signInWithSession(page, session, `/runs/${run.id}`);
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipment.id));
  await dialog.locator('#unit-op-start').fill('2025-01-01T00:00');
  await dialog.locator('#unit-op-end').fill('2025-01-02T00:00');

  for (const [name, content, title, message] of cases) {
    await dialog.locator('#csv-file').setInputFiles(file(name, content));
    await expectToast(page, title);
    await expectToast(page, message);
    await expect(dialog.getByTestId('csv-preview')).toHaveCount(0);
  }

  // Non-numeric values in a selected instrument column stop the submit, listing the bad values.
  await dialog.locator('#csv-file').setInputFiles(file('bad-values.csv',
    'time,temp\n2025-01-01T00:00:00Z,30.1\n2025-01-01T00:01:00Z,abc\n2025-01-01T00:02:00Z,n/a\n2025-01-01T00:03:00Z,3e1\n'));
  await expect(dialog.getByLabel('Assignment of temp')).not.toHaveValue('empty');
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'CSV Validation Error');
  // n/a is a flag (stored as missing), not a bad value: only abc stops the submit.
  await expectToast(page, "Column 'temp' has non-numeric values: abc");
  await screenshot(page, 'csv-errors-1-non-numeric', testInfo);

  // Without a timestamp column the submit asks for one.
  await dialog.locator('#csv-file').setInputFiles(file('no-time.csv', 'label,temp\nA,30\nB,31\n'));
  await expect(dialog.getByText('Please select a timestamp column from your CSV data.')).toBeVisible();
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Please select a timestamp column from your CSV data. This is required to create the unit operation.');
  await screenshot(page, 'csv-errors-2-no-timestamp', testInfo);
  await expect(dialog).toBeVisible();
});
