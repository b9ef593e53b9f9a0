/**
 * A long fed-batch for the chart tests: one bioreactor with the eight online and offline instruments
 * of a real stirred tank (temperature, pH, dissolved O2, stirrer, feed, OD600, off-gas CO2, titer;
 * seven units), a fermentation of about 10.8 days with readings every ten minutes from the demo's
 * fed-batch model, and two comments. Made through the API so the tests do not lean on the demo seed.
 */
import { expect, type APIRequestContext } from '@playwright/test';
import { simulateFedBatch } from '../../api/src/demo/fed-batch-simulator.ts';
import { call, callJson } from './pages-helpers.ts';
import type { ApiSession } from './support/auth.ts';
import { createRun, type Entity } from './data-fixtures.ts';

export const LONG_FERMENTATION_HOURS = 259;

const INSTRUMENTS = [
  { key: 'temperature', name: 'TIC-101 Reactor temperature', type: 'temperature', unit: 'celsius' },
  { key: 'ph', name: 'AIC-102 Broth pH', type: 'pH', unit: 'pH' },
  { key: 'dissolvedO2', name: 'AIC-103 Dissolved O2', type: 'dissolved_o2', unit: '%' },
  { key: 'stirRate', name: 'SIC-104 Stirrer speed', type: 'stir_rate', unit: 'rpm' },
  { key: 'feedRate', name: 'FIC-105 Glucose feed', type: 'feed_rate', unit: 'mL/min' },
  { key: 'opticalDensity', name: 'AI-106 Biomass OD600', type: 'optical_density', unit: 'OD600' },
  { key: 'exhaustCo2', name: 'AI-107 Off-gas CO2', type: 'exhaust_co2', unit: '%' },
  { key: 'titer', name: 'Offline titer (HPLC)', type: 'titer', unit: 'g/L' },
] as const;

export interface LongFermentation {
  run: Entity;
  unitOperationId: number;
  instrumentNames: string[];
  startMs: number;
}

export async function createLongFermentation(request: APIRequestContext, session: ApiSession, stamp: string, startIso = '2025-06-02T06:00:00.000Z'): Promise<LongFermentation> {
  const token = session.token;
  const facility = await callJson<Entity>(request, token, 'POST', '/api/v1/facilities', { name: `Chart Lab ${stamp}`, type: 'lab', country: 'NL' });
  const equipment = await callJson<Entity>(request, token, 'POST', '/api/v1/equipment', {
    name: `BR-${stamp} Biostat B 5 L`, type: 'Bioreactor', oem: 'Sartorius', facility_id: facility.id,
  });
  const startMs = Date.parse(startIso);
  const endIso = new Date(startMs + LONG_FERMENTATION_HOURS * 3_600_000).toISOString();
  const run = await createRun(request, session, facility.id, `FB-${stamp} Long fed-batch`, startIso, endIso);
  const operation = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: startIso, end_time: endIso,
  });
  const ids = new Map<string, number>();
  for (const instrument of INSTRUMENTS) {
    const { key, ...body } = instrument;
    const created = await callJson<{ id: number }>(request, token, 'POST', '/api/v1/instruments', { ...body, equipment_id: equipment.id });
    ids.set(key, created.id);
  }
  const series = simulateFedBatch({ startMs, durationHours: LONG_FERMENTATION_HOURS, intervalSeconds: 600, seed: 7 });
  const points: Array<{ measured_at: string; instrument_id: number; float_value: number }> = [];
  // The eight instruments of the chart tests; the model's other signals (off-gas O2, air flow) stay out.
  for (const [key, readings] of Object.entries(series)) {
    const instrumentId = ids.get(key);
    if (instrumentId === undefined) continue;
    for (const [ts, value] of readings) points.push({ measured_at: new Date(ts).toISOString(), instrument_id: instrumentId, float_value: value });
  }
  for (let offset = 0; offset < points.length; offset += 20_000) {
    const bulk = await call(request, token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points.slice(offset, offset + 20_000) });
    expect(bulk.status(), await bulk.text()).toBeLessThan(300);
  }
  for (const [hour, content] of [[8.5, 'Batch glucose depleted, exponential feed started'], [14, 'Induced with 0.5 mM IPTG, temperature shift to 30 °C']] as const) {
    await callJson(request, token, 'POST', '/api/v1/comments', {
      timestamp: new Date(startMs + hour * 3_600_000).toISOString(), unit_operations_id: operation.id, content,
    });
  }
  return { run, unitOperationId: operation.id, instrumentNames: INSTRUMENTS.map((i) => i.name), startMs };
}
