/**
 * Integrations end to end: a new organisation's admin, from the Integrations page alone, connects the
 * demo's simulated OPC UA bioreactor controller (run by the e2e stack), browses its address space, maps
 * a reactor's tags to new instruments in one step and sees them arrive on the running unit operation's
 * chart; then the same for the lab MQTT broker's JSON off-gas topic and the Sparkplug B gateway the demo
 * publishes. An editor sees the page read-only. A connection signing in with a user certificate made
 * as docs/integrations.md says (openssl) shows the stored certificate and the server's refusal of it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './support/quiet-console.ts';
import { signInWithSession, signUp, type ApiSession } from './support/auth.ts';
import { callJson, createUserWithRole, screenshot } from './pages-helpers.ts';
import { uniqueStamp, type Entity } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC', viewport: { width: 1440, height: 1000 } });

const E2E_PORT = Number(process.env.E2E_PORT ?? 8181);
/** The e2e stack runs the demo OPC UA server on a port of its own (deploy/local/e2e-stack.mjs). */
const DEMO_OPCUA_PORT = Number(process.env.DEMO_OPCUA_PORT ?? 40000 + E2E_PORT);

interface LiveRun { run: Entity; unitOperationId: number }

/** A running fermentation on a bioreactor of its own: started an hour ago, still open. */
async function createLiveRun(request: APIRequestContext, session: ApiSession, stamp: string): Promise<LiveRun> {
  const facility = await callJson<Entity>(request, session.token, 'POST', '/api/v1/facilities', { name: `Integration Lab ${stamp}`, type: 'lab' });
  const equipment = await callJson<Entity>(request, session.token, 'POST', '/api/v1/equipment', { name: `BR-01 ${stamp}`, type: 'Bioreactor', facility_id: facility.id });
  const start = new Date(Date.now() - 3_600_000).toISOString();
  const run = await callJson<Entity>(request, session.token, 'POST', '/api/v1/runs', {
    facility_id: facility.id, name: `Live fed-batch ${stamp}`, target: 'GFP', strain: 'E. coli BL21', start_time: start, end_time: null, scale_liters: 5,
  });
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: start,
  });
  return { run, unitOperationId: operation.id };
}

async function addConnection(page: Page, fields: { kind: 'OPC UA server' | 'MQTT broker'; name: string; endpoint: string; clientId?: string }) {
  await page.getByRole('button', { name: 'Add Connection' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Source').selectOption({ label: fields.kind });
  await dialog.getByLabel('Name (required)').fill(fields.name);
  await dialog.getByLabel('Endpoint URL (required)').fill(fields.endpoint);
  if (fields.clientId) await dialog.getByLabel('Client ID (optional)').fill(fields.clientId);
  await dialog.getByRole('button', { name: 'Add Connection' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  const card = page.getByTestId(`connection-${fields.name}`);
  // The connector picks the connection up within its poll; the page asks again every few seconds.
  await expect(card.getByTestId('connection-state').first()).toHaveText('Connected', { timeout: 45_000 });
  return card;
}

/** The unit operation's chart, reloaded until every named instrument has readings, all shown. */
async function expectOnChart(page: Page, live: LiveRun, names: string[]) {
  await page.goto(`/runs/${live.run.id}/unit-operations/${live.unitOperationId}`);
  const parameters = page.getByTestId('parameter-list');
  const loaded = parameters.getByRole('checkbox', { name: 'All parameters' }).or(parameters.getByText('No data logged by any instruments.'));
  await expect(async () => {
    await page.reload();
    await expect(loaded).toBeVisible({ timeout: 30_000 });
    for (const name of names) await expect(parameters.getByText(name, { exact: true })).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 90_000, intervals: [2_000] });
  const all = parameters.getByRole('checkbox', { name: 'All parameters' });
  if (!(await all.isChecked())) await all.check({ force: true });
  const chart = page.getByTestId('process-parameters-chart');
  // The chart reads the readings of every chosen instrument: slow on a busy machine.
  for (const name of names) await expect(chart.locator('.bp-chart-legend-item').filter({ hasText: name })).toHaveCount(1, { timeout: 45_000 });
  await expect(chart.locator('.highcharts-series path.highcharts-graph')).toHaveCount(names.length);
}

test('a new admin connects the demo OPC UA server, maps a reactor\'s tags and sees them charted', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const stamp = uniqueStamp();
  const session = await signUp(request, { name: 'Integration Admin', organizationName: `Integrations ${stamp}` });
  const live = await createLiveRun(request, session, stamp);

  await signInWithSession(page, session, '/dashboard');
  await page.getByTestId('sidebar-integrations').click();
  await expect(page).toHaveURL(/\/integrations$/);
  await expect(page.getByText('No connections')).toBeVisible();

  const card = await addConnection(page, { kind: 'OPC UA server', name: 'Reactor controller', endpoint: `opc.tcp://127.0.0.1:${DEMO_OPCUA_PORT}/bioprocess-demo` });
  await expect(card.getByTestId('no-mappings')).toBeVisible();

  await card.getByRole('button', { name: 'Browse and Map' }).click();
  const dialog = page.getByRole('dialog');
  const tree = dialog.getByTestId('opcua-tree');
  await tree.getByText('Bioreactors', { exact: true }).click();
  await tree.getByText('BR-01', { exact: true }).click();
  await expect(tree.getByText('TIC-101 Temperature')).toBeVisible();
  await tree.getByRole('button', { name: 'Select all 5 tags' }).click();
  const rows = dialog.getByTestId('map-rows');
  // Names and units come from the server: its display names and EngineeringUnits, read as our units.
  await expect(rows.locator('tbody tr')).toHaveCount(5);
  await expect(dialog.getByLabel('Instrument name for ns=1;s=BR-01.Temperature')).toHaveValue('TIC-101 Temperature');
  await expect(dialog.getByLabel('Unit for ns=1;s=BR-01.Temperature')).toHaveValue('celsius');
  await expect(dialog.getByLabel('Unit for ns=1;s=BR-01.Agitation')).toHaveValue('rpm');
  await expect(dialog.getByLabel('Unit for ns=1;s=BR-01.FeedRate')).toHaveValue('mL/min');
  await expect(dialog.getByLabel('Unit operation')).toContainText(`Live fed-batch ${stamp} · fermentation (Active)`);
  await screenshot(page, 'integrations-opcua-browse', testInfo);
  await dialog.getByRole('button', { name: 'Create 5 Instruments' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);

  const mappings = card.getByTestId('mappings-table');
  await expect(mappings.locator('tbody tr')).toHaveCount(5);
  await expect(mappings).toContainText('TIC-101 Temperature');
  await expect(mappings).toContainText('ns=1;s=BR-01.pH');
  await expect(async () => {
    expect(Number((await card.getByTestId('points-per-minute').textContent())?.replace(/[^0-9]/g, ''))).toBeGreaterThan(0);
  }).toPass({ timeout: 60_000 });
  await expect(card.getByTestId('last-message')).not.toHaveText('none yet');
  await screenshot(page, 'integrations-opcua-connected', testInfo);

  await expectOnChart(page, live, ['TIC-101 Temperature', 'AIC-102 pH', 'AIC-103 Dissolved O2', 'SIC-104 Agitation', 'FIC-105 Feed rate']);
  await screenshot(page, 'integrations-opcua-chart', testInfo);

  // An editor of the organisation sees the state and the mappings, and nothing to change them with.
  const editor = await createUserWithRole(request, session, 'editor');
  await signInWithSession(page, editor, '/integrations');
  await expect(page.getByTestId('integrations-read-only')).toBeVisible();
  const editorCard = page.getByTestId('connection-Reactor controller');
  await expect(editorCard.getByTestId('mappings-table').locator('tbody tr')).toHaveCount(5);
  await expect(page.getByRole('button', { name: 'Add Connection' })).toHaveCount(0);
  await expect(editorCard.getByRole('button', { name: 'Browse and Map' })).toHaveCount(0);
  await screenshot(page, 'integrations-editor', testInfo);
});

test('a new admin maps the demo broker\'s JSON off-gas topic and its Sparkplug B gateway', async ({ page, request }, testInfo) => {
  test.setTimeout(180_000);
  const stamp = uniqueStamp();
  const session = await signUp(request, { name: 'Broker Admin', organizationName: `Broker ${stamp}` });
  const live = await createLiveRun(request, session, stamp);
  await signInWithSession(page, session, '/integrations');
  const card = await addConnection(page, { kind: 'MQTT broker', name: 'Lab broker', endpoint: 'mqtt://127.0.0.1:1883', clientId: `e2e-${stamp}` });

  // JSON: the off-gas analyser's topic, its numbers offered by path, its own timestamp found.
  await card.getByRole('button', { name: 'Browse and Map' }).click();
  let dialog = page.getByRole('dialog');
  const offgas = dialog.getByTestId('mqtt-topics').locator('tr', { hasText: /\/BR-01\/offgas/ }).first();
  await expect(async () => {
    if (!(await offgas.isVisible())) await dialog.getByRole('button', { name: 'Refresh' }).click();
    await expect(offgas).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 45_000, intervals: [2_000] });
  await offgas.click();
  await expect(dialog.getByLabel('Payload')).toHaveValue('json');
  await expect(dialog.getByLabel('Timestamp path')).toHaveValue('$.time');
  await dialog.getByRole('checkbox', { name: '$.co2' }).check({ force: true });
  await dialog.getByLabel('Instrument name for $.co2').fill('Off-gas CO2');
  await dialog.getByLabel('Unit for $.co2').fill('%');
  await screenshot(page, 'integrations-mqtt-json', testInfo);
  await dialog.getByRole('button', { name: 'Create 1 Instrument' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(card.getByTestId('mappings-table')).toContainText('Off-gas CO2');

  // Sparkplug B: the gateway's device topic, its metrics offered by name.
  await card.getByRole('button', { name: 'Browse and Map' }).click();
  dialog = page.getByRole('dialog');
  const gateway = dialog.getByTestId('mqtt-topics').locator('tr', { hasText: /^spBv1\.0\/.*\/DDATA\/demo-gateway\/BR-01/ }).first();
  await expect(async () => {
    if (!(await gateway.isVisible())) await dialog.getByRole('button', { name: 'Refresh' }).click();
    await expect(gateway).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 45_000, intervals: [2_000] });
  await gateway.click();
  await expect(dialog.getByLabel('Payload')).toHaveValue('sparkplug');
  await dialog.getByRole('checkbox', { name: 'OD600' }).check({ force: true });
  await dialog.getByLabel('Unit for OD600').fill('OD600');
  await screenshot(page, 'integrations-mqtt-sparkplug', testInfo);
  await dialog.getByRole('button', { name: 'Create 1 Instrument' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(card.getByTestId('mappings-table').locator('tbody tr')).toHaveCount(2);
  await expect(async () => {
    expect(Number((await card.getByTestId('points-per-minute').textContent())?.replace(/[^0-9]/g, ''))).toBeGreaterThan(0);
  }).toPass({ timeout: 60_000 });
  await screenshot(page, 'integrations-mqtt-connected', testInfo);

  await expectOnChart(page, live, ['Off-gas CO2', 'OD600']);
  await screenshot(page, 'integrations-mqtt-chart', testInfo);
});

test('an admin signs a connection in with a user certificate and sees the server refuse one it does not trust', async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const stamp = uniqueStamp();
  // The certificate and key an admin makes with the commands in docs/integrations.md.
  const folder = mkdtempSync(path.join(os.tmpdir(), 'e2e-user-certificate-'));
  const certificateFile = path.join(folder, 'connector-user.crt');
  const keyFile = path.join(folder, 'connector-user.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '30', '-subj', `/CN=Connector ${stamp}/O=Plant users`,
    '-keyout', keyFile, '-out', certificateFile], { stdio: 'ignore' });
  const session = await signUp(request, { name: 'Certificate Admin', organizationName: `Certificates ${stamp}` });
  await signInWithSession(page, session, '/integrations');

  await page.getByRole('button', { name: 'Add Connection' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name (required)').fill('Certificate controller');
  await dialog.getByLabel('Endpoint URL (required)').fill(`opc.tcp://127.0.0.1:${DEMO_OPCUA_PORT}/bioprocess-demo`);
  await dialog.getByLabel('Sign in as').selectOption({ label: 'User certificate' });
  await expect(dialog.getByLabel('Username (required)')).toHaveCount(0);
  // The certificate loaded from its file, the key pasted.
  await dialog.getByLabel('User certificate file').setInputFiles(certificateFile);
  await expect(dialog.getByLabel('User certificate (required, PEM)')).toHaveValue(/-----BEGIN CERTIFICATE-----/);
  await dialog.getByRole('button', { name: 'Add Connection' }).click();
  await expect(dialog.getByTestId('connection-error')).toHaveText("Paste or load the certificate's private key (PEM).");
  await dialog.getByLabel('Private key (required, PEM)').fill(readFileSync(keyFile, 'utf8'));
  await screenshot(page, 'integrations-user-certificate-form', testInfo);
  await dialog.getByRole('button', { name: 'Add Connection' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);

  const card = page.getByTestId('connection-Certificate controller');
  await expect(card).toContainText(`with the user certificate CN=Connector ${stamp}, O=Plant users`);
  // The demo server trusts no user certificate until an admin moves it from rejected/ to trusted/.
  await expect(card.getByTestId('connection-state').first()).toHaveText('Error', { timeout: 45_000 });
  await expect(card.getByTestId('connection-errors')).toContainText(`The server refused the user certificate CN=Connector ${stamp}, O=Plant users`);
  await expect(card.getByTestId('connection-errors')).toContainText("add the certificate to the server's trusted user certificates");
  await screenshot(page, 'integrations-user-certificate-refused', testInfo);

  // Editing shows which certificate is stored, never its key, and offers to replace it.
  await card.getByRole('button', { name: 'Edit Certificate controller' }).click();
  const edit = page.getByRole('dialog');
  const stored = edit.getByTestId('stored-user-certificate');
  await expect(stored).toContainText(`CN=Connector ${stamp}`);
  await expect(stored).toContainText(/Valid until/);
  await expect(edit.getByLabel(/Private key/)).toHaveCount(0);
  await edit.getByRole('button', { name: 'Replace' }).click();
  await expect(edit.getByLabel('Private key (stored; paste to replace)')).toHaveValue('');
  await edit.getByRole('button', { name: 'Keep the stored certificate' }).click();
  await expect(stored).toBeVisible();
  await edit.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
});
