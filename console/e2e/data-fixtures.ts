/**
 * Fixtures of the data tests (CSV upload, unit-operation chart and comments, compare runs): facilities,
 * equipment, instruments, runs, unit operations and readings made through the API, so the tests do
 * not depend on what the demo seed holds. Readings go through the bulk endpoint with ?wait=true.
 */
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { call, callJson } from './pages-helpers.ts';
import type { ApiSession } from './support/auth.ts';
import { realExportPath } from '../../shared/test-data/real-exports.ts';

export { realExportPath };
export const PIOREACTOR_OD_FILE = realExportPath('od_readings_with_too_frequently_outlier_detections.csv');

export function uniqueStamp(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
}

export interface Entity {
  id: number;
  name: string;
}

export async function createFacilityAndEquipment(request: APIRequestContext, session: ApiSession, stamp: string, equipmentName = `Bioreactor ${stamp}`) {
  const facility = await callJson<Entity>(request, session.token, 'POST', '/api/v1/facilities', { name: `Data Lab ${stamp}`, type: 'lab', country: 'NL' });
  const equipment = await callJson<Entity>(request, session.token, 'POST', '/api/v1/equipment', {
    name: equipmentName, type: 'Stirred-tank bioreactor', oem: 'Eppendorf', facility_id: facility.id,
  });
  return { facility, equipment };
}

export async function createRun(request: APIRequestContext, session: ApiSession, facilityId: number, name: string, startIso: string, endIso: string | null, strain = 'E. coli BL21') {
  return callJson<Entity>(request, session.token, 'POST', '/api/v1/runs', {
    facility_id: facilityId, name, target: 'GFP', strain, description: `Made by the data tests (${name}).`, start_time: startIso, end_time: endIso, scale_liters: 2,
  });
}

export interface RunWithSeries {
  run: Entity;
  equipment: Entity;
  unitOperationId: number;
  instruments: { temperature: number; ph: number };
  startMs: number;
}

/**
 * A run with a 24 h fermentation on its own bioreactor, logging temperature (celsius) and pH every
 * 5 minutes: a slow temperature shift and a pH drift the chart shows clearly.
 */
export async function createRunWithSeries(request: APIRequestContext, session: ApiSession, stamp: string, label: string, startIso: string, facilityId?: number): Promise<RunWithSeries> {
  const facility = facilityId ?? (await callJson<Entity>(request, session.token, 'POST', '/api/v1/facilities', { name: `Data Lab ${stamp} ${label}`, type: 'lab' })).id;
  const equipment = await callJson<Entity>(request, session.token, 'POST', '/api/v1/equipment', {
    name: `Bioreactor ${label} ${stamp}`, type: 'Stirred-tank bioreactor', facility_id: facility,
  });
  const startMs = Date.parse(startIso);
  const endIso = new Date(startMs + 24 * 3_600_000).toISOString();
  const run = await createRun(request, session, facility, `Fed-batch ${label} ${stamp}`, startIso, endIso, label === 'A' ? 'E. coli BL21' : 'E. coli W3110');
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: startIso, end_time: endIso,
  });
  const temperature = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name: `Temperature ${label}`, type: 'temperature', unit: 'celsius', equipment_id: equipment.id });
  const ph = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', { name: `pH ${label}`, type: 'pH', unit: 'pH', equipment_id: equipment.id });
  const offset = label === 'A' ? 0 : 1.5;
  const points = [];
  for (let minute = 0; minute <= 24 * 60; minute += 5) {
    const measuredAt = new Date(startMs + minute * 60_000).toISOString();
    const hours = minute / 60;
    points.push({ measured_at: measuredAt, instrument_id: temperature.id, float_value: Math.round((37 - (hours > 12 ? 7 : 0) + offset + Math.sin(hours) * 0.3) * 100) / 100 });
    points.push({ measured_at: measuredAt, instrument_id: ph.id, float_value: Math.round((7 - hours * 0.02 + Math.cos(hours * 2) * 0.05) * 1000) / 1000 });
  }
  const bulk = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points });
  expect(bulk.status(), await bulk.text()).toBeLessThan(300);
  return { run, equipment, unitOperationId: operation.id, instruments: { temperature: temperature.id, ph: ph.id }, startMs };
}

/** Waits for a toast holding the text (the previous toast may still be fading out next to it). */
export async function expectToast(page: Page, text: string): Promise<void> {
  await expect(page.getByTestId('toast').filter({ hasText: text }).first()).toBeVisible();
}
