/**
 * Real instrument exports that are not plain CSV, through the unit-operation dialog accepting every
 * suggestion of the layout detection: a BioTek Gen5 .txt (a 33-line preamble, elapsed H:MM:SS counted
 * from the start its preamble states, padding rows after the table) and a Beckman Vi-CELL BLU export
 * in UTF-16BE (the time column the 27th, month-first minutes). The instruments exist with the
 * columns' names as aliases, so the mapping is the suggested one; what is stored is read back and
 * compared with the file. Then the shapes that need one choice: an Excel workbook's sheet, a plate's
 * wells made instruments by one rule, the real Tecan i-control workbook turned (time across its
 * columns) with its 96 wells, and the real SoftMax Pro file of four blocks, its second plate picked
 * under Block and read as one reading per well.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import type { Page } from '@playwright/test';
import { expect, test } from './support/quiet-console.ts';
import { adminSession, callJson, screenshot } from './pages-helpers.ts';
import { signInWithSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, expectToast, uniqueStamp } from './data-fixtures.ts';
import { realExportPath } from '../../shared/test-data/real-exports.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

type Reading = { ts: string; value: number };

/** Opens Add Unit Operation on the run page and fills a fermentation on the equipment, from start to end. */
async function addFermentation(page: Page, equipmentId: number, start: string, end: string) {
  await page.getByRole('button', { name: 'Add Unit Operation' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add Unit Operation' });
  await dialog.locator('#unit-op-type').selectOption('fermentation');
  await dialog.locator('#unit-op-equipment').selectOption(String(equipmentId));
  await dialog.locator('#unit-op-start').fill(start);
  await dialog.locator('#unit-op-end').fill(end);
  return dialog;
}

async function instrumentsFor(request: Parameters<typeof callJson>[0], token: string, equipmentId: number, stamp: string, aliases: string[]) {
  const ids = new Map<string, number>();
  for (const alias of aliases) {
    const created = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', {
      name: `${alias} ${stamp}`, type: 'optical_density', unit: null, equipment_id: equipmentId, alias,
    });
    ids.set(alias, created.id);
  }
  return ids;
}

test('a Gen5 .txt with its preamble goes in as the preview shows it, elapsed time counted from the start it states', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const wells = ['A1', 'B2', 'D6'];
  const ids = await instrumentsFor(request, session.token, equipment.id, stamp, wells);
  const run = await createRun(request, session, facility.id, `Gen5 ${stamp}`, '2023-09-15T12:00:00.000Z', '2023-09-15T14:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2023-09-15T12:00', '2023-09-15T14:00');
  await dialog.locator('#csv-file').setInputFiles(realExportPath('kinetic_helper_gene_growth_curve.txt'));

  const layout = dialog.getByTestId('csv-layout');
  await expect(layout).toHaveAttribute('data-header-line', '34');
  await expect(layout.getByTestId('csv-vendor')).toHaveText('BioTek Gen5');
  await expect(layout.getByTestId('csv-table-description')).toContainText('the 33 line(s) before it are the file\'s preamble');
  await expect(layout.getByTestId('csv-table-description')).toContainText('The table ends at line 55');
  await expect(dialog.getByLabel('Assignment of Time')).toHaveValue('timestamp');
  await expect(dialog.getByRole('radio', { name: /Elapsed time/ })).toBeChecked();
  await expect(dialog.getByTestId('csv-elapsed-start')).toHaveValue('2023-09-15T12:30:01');
  await expect(dialog.getByTestId('csv-elapsed-zero')).toContainText('2023');
  for (const well of wells) await expect(dialog.getByLabel(`Assignment of ${well}`)).not.toHaveValue('empty');
  await screenshot(page, 'csv-layout-1-gen5-preamble', testInfo);

  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 60 points to 3 instruments');

  const lines = readFileSync(realExportPath('kinetic_helper_gene_growth_curve.txt'), 'utf8').split('\n').slice(33, 54).map((line) => line.split('\t'));
  const header = lines[0]!;
  const start = Date.parse('2023-09-15T12:30:01Z');
  for (const well of wells) {
    const column = header.indexOf(well);
    const expected = lines.slice(1).map((cells) => {
      const [hours, minutes, seconds] = cells[0]!.split(':').map(Number);
      return { ts: new Date(start + ((hours! * 60 + minutes!) * 60 + seconds!) * 1000).toISOString(), value: Number(cells[column]) };
    });
    const stored = await callJson<Reading[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${ids.get(well)}`);
    expect(stored.map(({ ts, value }) => ({ ts, value }))).toEqual(expected);
  }
});

test('a UTF-16 Vi-CELL BLU export goes in decoded, read at its date column', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const columns = ['Viability (%)', 'Total (x10^6) cells/mL'];
  const ids = await instrumentsFor(request, session.token, equipment.id, stamp, columns);
  const run = await createRun(request, session, facility.id, `Vi-CELL ${stamp}`, '2022-03-21T00:00:00.000Z', '2022-03-29T00:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2022-03-21T00:00', '2022-03-29T00:00');
  await dialog.locator('#csv-file').setInputFiles(realExportPath('Beckman_Vi-Cell-BLU_example01_utf16.csv'));

  const layout = dialog.getByTestId('csv-layout');
  await expect(layout).toHaveAttribute('data-encoding', 'utf-16be');
  await expect(layout.getByTestId('csv-vendor')).toHaveText('Beckman Coulter Vi-CELL BLU');
  await expect(dialog.getByLabel('Assignment of Analysis date/time')).toHaveValue('timestamp');
  for (const column of columns) await expect(dialog.getByLabel(`Assignment of ${column}`)).not.toHaveValue('empty');
  await screenshot(page, 'csv-layout-2-vicell-utf16', testInfo);

  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 20 points to 2 instruments');

  const text = new TextDecoder('utf-16be').decode(readFileSync(realExportPath('Beckman_Vi-Cell-BLU_example01_utf16.csv')));
  const rows = text.replace(/^\uFEFF/, '').trim().split(/\r?\n/).map((line) => line.split(','));
  const header = rows[0]!;
  const timeIndex = header.indexOf('Analysis date/time');
  const instantOf = (cell: string) => {
    const [date, time] = cell.split(' ');
    const [month, day, year] = date!.split('/').map(Number);
    const [hour, minute] = time!.split(':').map(Number);
    return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!)).toISOString();
  };
  for (const column of columns) {
    const index = header.indexOf(column);
    const expected = rows.slice(1).map((cells) => ({ ts: instantOf(cells[timeIndex]!), value: Number(cells[index]) })).sort((a, b) => a.ts.localeCompare(b.ts));
    const stored = await callJson<Reading[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${ids.get(column)}`);
    expect(stored.map(({ ts, value }) => ({ ts, value }))).toEqual(expected);
  }
});

test("an Excel workbook goes in from the sheet picked: its info sheet says why it cannot, the data sheet is read like a text export", async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const ids = await instrumentsFor(request, session.token, equipment.id, stamp, ['pO2 [%]', 'Temp [°C]']);
  const run = await createRun(request, session, facility.id, `Workbook ${stamp}`, '2024-03-01T08:00:00.000Z', '2024-03-01T09:00:00.000Z');
  const startMs = Date.parse('2024-03-01T08:00:00Z');
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet('Info').addRow(['Batch', `B-${stamp}`]);
  const data = workbook.addWorksheet('Data');
  data.addRow(['Exported by the controller']);
  data.addRow([]);
  data.addRow(['Time', 'pO2 [%]', 'Temp [°C]']);
  for (let row = 0; row < 120; row += 1) data.addRow([new Date(startMs + row * 30_000), 40 + row / 4, { formula: `B${row + 4}/2`, result: (40 + row / 4) / 2 }]);
  const file = testInfo.outputPath('controller.xlsx');
  await workbook.xlsx.writeFile(file);

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2024-03-01T08:00', '2024-03-01T09:00');
  await dialog.locator('#csv-file').setInputFiles(file);
  // The first sheet holds no table: the reason is shown and the other sheet can be picked.
  await expect(page.locator('.bp6-toast').first()).toBeVisible();
  const sheet = dialog.locator('#csv-sheet');
  await expect(sheet).toHaveValue('Info');
  await sheet.selectOption('Data');
  const layout = dialog.getByTestId('csv-layout');
  await expect(layout).toHaveAttribute('data-header-line', '3');
  await expect(dialog.getByLabel('Assignment of Time')).toHaveValue('timestamp');
  for (const column of ids.keys()) await expect(dialog.getByLabel(`Assignment of ${column}`)).not.toHaveValue('empty');
  await screenshot(page, 'csv-layout-3-excel-workbook', testInfo);

  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 240 points to 2 instruments');
  for (const [column, scale] of [['pO2 [%]', 1], ['Temp [°C]', 2]] as const) {
    const stored = await callJson<Reading[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${ids.get(column)}`);
    expect(stored.map(({ ts, value }) => ({ ts, value }))).toEqual(Array.from({ length: 120 }, (_, row) => ({ ts: new Date(startMs + row * 30_000).toISOString(), value: (40 + row / 4) / scale })));
  }
});

test("a plate's 24 wells become instruments in one step: 'Save all alike' names each after its column", async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Plate reader ${stamp}`);
  const run = await createRun(request, session, facility.id, `Plate ${stamp}`, '2023-09-15T12:00:00.000Z', '2023-09-15T14:00:00.000Z');
  const wells = 'ABCD'.split('').flatMap((row) => [1, 2, 3, 4, 5, 6].map((column) => `${row}${column}`));

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2023-09-15T12:00', '2023-09-15T14:00');
  await dialog.locator('#csv-file').setInputFiles(realExportPath('kinetic_helper_gene_growth_curve.txt'));
  // One rule picks the plate's wells, not 24 checkboxes and 24 menus.
  const matching = dialog.getByTestId('csv-matching-columns');
  await matching.getByRole('button', { name: 'Plate wells' }).click();
  await matching.getByTestId('csv-matching-apply').click();
  for (const well of wells) await expect(dialog.getByLabel(`Assignment of ${well}`)).toHaveValue('new');
  await expect(dialog.getByLabel('Assignment of Time')).toHaveValue('timestamp');
  await dialog.getByRole('button', { name: 'Set up instruments' }).click();
  const wizard = page.getByRole('dialog', { name: 'Set up instruments for CSV columns' });
  await expect(wizard.getByLabel('Name')).toHaveValue('A1');
  await wizard.getByLabel('Type').selectOption('optical_density');
  await screenshot(page, 'csv-layout-4-plate-wizard', testInfo);
  await wizard.getByTestId('wizard-save-all').click();
  await expect(wizard).toBeHidden();
  await expectToast(page, 'for columns A1 to D6');

  const instruments = await callJson<Array<{ name: string; alias: string }>>(request, session.token, 'GET', `/api/v1/equipment/${equipment.id}/instruments`);
  expect(instruments.map((instrument) => [instrument.name, instrument.alias])).toEqual(wells.map((well) => [well, well]));
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 480 points to 24 instruments');
});

test('the real Tecan kinetic workbook: converted, turned, its 96 wells made and stored in a few steps', async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Infinite 200Pro ${stamp}`);
  const run = await createRun(request, session, facility.id, `Tecan ${stamp}`, '2024-02-20T18:00:00.000Z', '2024-02-21T12:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2024-02-20T18:00', '2024-02-21T12:00');
  await dialog.locator('#csv-file').setInputFiles(realExportPath('sample_ODs.xlsx'));
  await expect(dialog.locator('#csv-sheet')).toHaveValue('Sheet0');
  await dialog.getByTestId('csv-turn-table').click();
  await expect(dialog.getByLabel('Assignment of Time [s]')).toHaveValue('timestamp');
  await expect(dialog.getByRole('radio', { name: /Elapsed time/ })).toBeChecked();
  await expect(dialog.getByTestId('csv-elapsed-start')).toHaveValue('2024-02-20T18:20:28');
  const matching = dialog.getByTestId('csv-matching-columns');
  await matching.getByRole('button', { name: 'Plate wells' }).click();
  await matching.getByTestId('csv-matching-apply').click();
  await expect(dialog.getByLabel('Assignment of H12')).toHaveValue('new');
  await screenshot(page, 'csv-layout-5-tecan-turned', testInfo);

  await dialog.getByRole('button', { name: 'Set up instruments' }).click();
  const wizard = page.getByRole('dialog', { name: 'Set up instruments for CSV columns' });
  await wizard.getByLabel('Type').selectOption('optical_density');
  await wizard.getByTestId('wizard-save-all').click();
  await expect(wizard).toBeHidden();
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 60,672 points to 96 instruments');
});


test('a column converted to another unit on request: an incompatible unit is refused naming both, the values are stored converted', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp);
  const feed = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: `Feed ${stamp}`, type: 'flow_rate', unit: 'L/h', equipment_id: equipment.id, alias: 'Feed (mL/h)',
  });
  const run = await createRun(request, session, facility.id, `Feed ${stamp}`, '2024-04-01T00:00:00.000Z', '2024-04-01T02:00:00.000Z');
  const values = [150, 0.7, 1234.5, 12];
  const csv = ['Time,Feed (mL/h)', ...values.map((value, index) => `2024-04-01 00:0${index}:00,${value}`)].join('\n');
  const file = testInfo.outputPath('feed.csv');
  writeFileSync(file, csv);

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2024-04-01T00:00', '2024-04-01T02:00');
  await dialog.locator('#csv-file').setInputFiles(file);
  await expect(dialog.getByLabel('Assignment of Feed (mL/h)')).toHaveValue(`existing:${feed.id}`);
  await dialog.getByRole('button', { name: 'Convert unit' }).click();
  // The header's unit is where the conversion starts; a unit of another quantity is refused, naming both.
  await expect(dialog.getByLabel('Convert Feed (mL/h) from unit')).toHaveValue('mL/h');
  await dialog.getByLabel('Convert Feed (mL/h) to unit').fill('g/L');
  await expect(dialog.getByRole('alert')).toHaveText("'mL/h' cannot be converted to 'g/L': the two units do not measure the same quantity.");
  await dialog.getByLabel('Convert Feed (mL/h) to unit').fill('L/h');
  await expect(dialog.getByRole('alert')).toHaveCount(0);
  await screenshot(page, 'csv-layout-6-unit-conversion', testInfo);

  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expectToast(page, 'Wrote 4 points to 1 instrument');
  const stored = await callJson<Reading[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${feed.id}`);
  expect(stored.map(({ value }) => value)).toEqual([0.15, 0.0007, 1.2345, 0.012]);
});

test('a SoftMax Pro file of four blocks: the second plate picked under Block, its grid read as one reading per well at the time the file states', async ({ page, request }, testInfo) => {
  test.setTimeout(240_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `SpectraMax ${stamp}`);
  const run = await createRun(request, session, facility.id, `ELISA ${stamp}`, '2023-11-27T10:00:00.000Z', '2023-11-27T11:00:00.000Z');

  await signInWithSession(page, session, `/runs/${run.id}`);
  const dialog = await addFermentation(page, equipment.id, '2023-11-27T10:00', '2023-11-27T11:00');
  await dialog.locator('#csv-file').setInputFiles(realExportPath('MD_SMP_absorbance_endpoint_example01.txt'));
  const layout = dialog.getByTestId('csv-layout');
  const block = layout.getByTestId('csv-block');
  await expect(block).toHaveValue('1');
  await expect(block.locator('option')).toHaveText([
    '1. Plate: Plate01 (line 3: plate grid)', '2. Plate: Plate02 (line 24: plate grid)',
    '3. Group: Standards (line 45: table, 42 row(s))', '4. Group: UnknownsNoDiln (line 105: table, 144 row(s))',
  ]);
  await block.selectOption('2');
  await expect(layout).toHaveAttribute('data-header-line', '24');
  await expect(layout.getByTestId('csv-layout-notice').filter({ hasText: 'plate grid' })).toHaveText(
    'This table is a plate grid (rows A-H x columns 1-12): each well is read as one column (96 wells) at one read time.');
  await expect(dialog.getByLabel('Assignment of Read time')).toHaveValue('timestamp');
  await expect(dialog.getByRole('textbox', { name: 'Read time', exact: true })).toHaveValue('2023-11-27T10:43:25');
  const matching = dialog.getByTestId('csv-matching-columns');
  await matching.getByRole('button', { name: 'Plate wells' }).click();
  await matching.getByTestId('csv-matching-apply').click();
  await expect(dialog.getByLabel('Assignment of H12')).toHaveValue('new');
  await screenshot(page, 'csv-layout-7-softmax-block', testInfo);

  await dialog.getByRole('button', { name: 'Set up instruments' }).click();
  const wizard = page.getByRole('dialog', { name: 'Set up instruments for CSV columns' });
  await wizard.getByLabel('Type').selectOption('optical_density');
  await wizard.getByTestId('wizard-save-all').click();
  // 96 instruments are made one request each: on a loaded machine that takes longer than a locator's default wait.
  await expect(wizard).toBeHidden({ timeout: 60_000 });
  await dialog.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(dialog.getByText('1 rows read · 96 points written')).toBeVisible({ timeout: 60_000 });
  await expectToast(page, 'Wrote 96 points to 96 instruments');

  // Plate02's grid as the file writes it (UTF-16LE): rows A-H under line 24, columns 1-12 after the temperature.
  const lines = readFileSync(realExportPath('MD_SMP_absorbance_endpoint_example01.txt')).toString('utf16le').replace(/^\uFEFF/, '').split('\r\n');
  const instruments = await callJson<Array<{ id: number; alias: string }>>(request, session.token, 'GET', `/api/v1/equipment/${equipment.id}/instruments`);
  for (const [well, row, column] of [['A1', 0, 1], ['D7', 3, 7], ['H12', 7, 12]] as const) {
    const cell = lines[24 + row]!.split('\t')[1 + column]!;
    const id = instruments.find((instrument) => instrument.alias === well)!.id;
    const stored = await callJson<Reading[]>(request, session.token, 'GET', `/api/v1/time-series-data?instrument_id=${id}`);
    expect(stored.map(({ ts, value }) => ({ ts, value })), well).toEqual([{ ts: '2023-11-27T10:43:25.000Z', value: Number(cell) }]);
  }
});
