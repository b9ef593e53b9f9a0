/**
 * Seeds the demo organisation (SEED_DEMO=true, as under `npm start`). Idempotent: an existing demo
 * organisation is left as it is (its users are only re-created when missing). Metadata is written in
 * one transaction before the api listens; the time series then go through the real ingestion path
 * (the bulk endpoint and the CSV upload endpoint, as the demo admin) without delaying start-up.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTransaction, type PoolClient } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { hashPassword } from '../auth/passwords.ts';
import { createSession } from '../auth/sessions.ts';
import { insertInstrument } from '@bioprocess/shared/server/instruments-repository';
import { insertUnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { simulateFedBatch, simulationSeed } from './fed-batch-simulator.ts';
import { demoFedBatchSamples } from './demo-samples.ts';
import { seedDemoIntegrations } from './demo-integrations.ts';
import { insertDemoAlertRule, prepareDemoAlerts } from './demo-alerts.ts';
import { insertSample } from '../samples/repository.ts';
import {
  DEMO_EQUIPMENT, DEMO_FACILITIES, DEMO_GOLDEN_BATCH, DEMO_HOUR_MS, isGoldenBatchReference, DEMO_ORGANISATION_NAME, DEMO_USERS, demoRuns, type DemoRun, type DemoUnitOperation,
} from './demo-organisation.ts';

/** The public instrument exports of the demo runs, kept in the repository (sources and licences in its SOURCES.md). */
export const DATASETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../demo-data');

/** What the built-in derived parameters need of a simulated fed-batch: its vessel, feed bottle and OD calibration. */
const FED_BATCH_PROPERTIES = { working_volume: 2.0, feed_concentration: 500, biomass_per_od: 0.4 };

type Series = Array<[number, number]>;

interface SeededUnitOperation { id: number; run: DemoRun; spec: DemoUnitOperation; startMs: number; endMs: number | null }

export interface SeedPlan {
  organizationId: number;
  adminUserId: number;
  /** instrument ids by equipment key, then instrument key */
  instruments: Map<string, Map<string, number>>;
  unitOperations: SeededUnitOperation[];
}

function demoEmail(adminEmail: string, key: string): string {
  if (key === 'admin') return adminEmail;
  const domain = adminEmail.split('@')[1] ?? 'demo.bioprocess.local';
  return `${key}@${domain}`;
}

async function ensureUsers(client: PoolClient, organizationId: number, adminEmail: string, passwordHash: string): Promise<number> {
  let adminId = 0;
  for (const user of DEMO_USERS) {
    const email = demoEmail(adminEmail, user.key);
    const existing = await client.query('SELECT id FROM users WHERE lower(email) = lower($1)', [email]);
    let id = existing.rows[0]?.id as number | undefined;
    if (!id) {
      const inserted = await client.query(
        `INSERT INTO users (email, name, password_hash, organization_id, role) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
        [email, user.name, passwordHash, organizationId, user.role],
      );
      id = inserted.rows[0].id as number;
    }
    if (user.key === 'admin') adminId = id;
  }
  return adminId;
}

async function insertReturningId(client: PoolClient, sql: string, values: unknown[]): Promise<number> {
  const { rows } = await client.query(sql, values);
  return rows[0].id as number;
}

/** Writes the demo metadata; answers null when the organisation already existed. */
export async function seedDemoMetadata(deps: AppDeps, now = Date.now()): Promise<SeedPlan | null> {
  const passwordHash = await hashPassword(deps.env.DEMO_PASSWORD);
  return withTransaction(deps.pg, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('demo-seed'))`);
    const existing = await client.query('SELECT id FROM organizations WHERE name = $1', [DEMO_ORGANISATION_NAME]);
    if (existing.rows[0]) {
      await ensureUsers(client, existing.rows[0].id, deps.env.DEMO_EMAIL, passwordHash);
      return null;
    }
    const organizationId = await insertReturningId(client,
      'INSERT INTO organizations (name, description) VALUES ($1, $2) RETURNING id',
      [DEMO_ORGANISATION_NAME, 'A process-development lab with fed-batch fermentations, harvest and capture chromatography.']);
    const adminUserId = await ensureUsers(client, organizationId, deps.env.DEMO_EMAIL, passwordHash);
    const editorId = (await client.query('SELECT id FROM users WHERE lower(email) = lower($1)', [demoEmail(deps.env.DEMO_EMAIL, 'editor')])).rows[0].id as number;

    const facilities = new Map<string, number>();
    for (const facility of DEMO_FACILITIES) {
      facilities.set(facility.key, await insertReturningId(client,
        'INSERT INTO facilities (organization_id, name, type, country, address) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [organizationId, facility.name, facility.type, facility.country, facility.address]));
    }
    const equipment = new Map<string, number>();
    const instruments = new Map<string, Map<string, number>>();
    for (const item of DEMO_EQUIPMENT) {
      const equipmentId = await insertReturningId(client,
        'INSERT INTO equipment (organization_id, facility_id, name, type, oem) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [organizationId, facilities.get(item.facility), item.name, item.type, item.oem]);
      equipment.set(item.key, equipmentId);
      const byKey = new Map<string, number>();
      for (const instrument of item.instruments) {
        const row = await insertInstrument(client, organizationId, {
          equipment_id: equipmentId, name: instrument.name, type: instrument.type, unit: instrument.unit, alias: null,
        });
        byKey.set(instrument.key, row.id);
      }
      instruments.set(item.key, byKey);
    }

    const unitOperations: SeededUnitOperation[] = [];
    for (const run of demoRuns()) {
      const runStart = run.startMs ?? now + (run.startOffsetHours ?? 0) * DEMO_HOUR_MS;
      const runEnd = run.durationHours === null ? null : runStart + run.durationHours * DEMO_HOUR_MS;
      const runId = await insertReturningId(client,
        `INSERT INTO runs (organization_id, facility_id, name, strain, target, description, start_time, end_time, scale_liters, scale_grams)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [organizationId, facilities.get(run.facility), run.name, run.strain, run.target, run.description,
          new Date(runStart), runEnd === null ? null : new Date(runEnd), run.scaleLiters, run.scaleGrams]);
      for (const spec of run.unitOperations) {
        const startMs = runStart + spec.startHour * DEMO_HOUR_MS;
        const endMs = spec.endHour === null ? null : runStart + spec.endHour * DEMO_HOUR_MS;
        const { id } = await insertUnitOperationRow(client, organizationId, {
          run_id: runId, type: spec.type, equipment_id: equipment.get(spec.equipment)!, start_time: new Date(startMs),
          end_time: endMs === null ? null : new Date(endMs), properties: spec.simulate === 'fed-batch' ? FED_BATCH_PROPERTIES : {},
        });
        for (const comment of spec.comments ?? []) {
          const at = runStart + comment.hour * DEMO_HOUR_MS;
          if (at > now) continue;
          await client.query(
            `INSERT INTO comments (organization_id, unit_operations_id, author, timestamp, content) VALUES ($1, $2, $3, $4, $5)`,
            [organizationId, id, comment.author === 'admin' ? adminUserId : editorId, new Date(at), comment.content]);
        }
        if (spec.simulate === 'fed-batch') {
          for (const sample of demoFedBatchSamples({ id, runName: run.name, startMs, endMs, feedFault: spec.feedFault }, now)) {
            await insertSample(client, organizationId, id, sample);
          }
        }
        unitOperations.push({ id, run, spec, startMs, endMs });
      }
    }
    const references = unitOperations.filter((operation) => isGoldenBatchReference(operation.spec));
    await client.query(
      `INSERT INTO golden_batches (organization_id, name, unit_operation_type, reference_unit_operation_ids, parameters, alignment, band)
       VALUES ($1, $2, 'fermentation', $3, $4, $5, $6)`,
      [organizationId, DEMO_GOLDEN_BATCH.name, references.map((operation) => operation.id), DEMO_GOLDEN_BATCH.parameters,
        JSON.stringify(DEMO_GOLDEN_BATCH.alignment), JSON.stringify(DEMO_GOLDEN_BATCH.band)]);
    const runningFedBatch = unitOperations.find((operation) => operation.endMs === null && operation.spec.simulate === 'fed-batch');
    if (runningFedBatch) await insertDemoAlertRule(client, organizationId, runningFedBatch.id, adminUserId);
    return { organizationId, adminUserId, instruments, unitOperations };
  });
}

function sampled(startMs: number, endMs: number, stepSeconds: number, value: (hour: number) => number): Series {
  const points: Series = [];
  for (let ts = startMs; ts <= endMs; ts += stepSeconds * 1000) {
    points.push([ts, Math.round(value((ts - startMs) / DEMO_HOUR_MS) * 1000) / 1000]);
  }
  return points;
}

/** Simulated readings of one unit operation, by instrument key, up to now for a running operation. */
export function simulatedSeries(operation: SeededUnitOperation, now: number): Map<string, Series> {
  const endMs = Math.min(operation.endMs ?? now, now);
  const hours = (endMs - operation.startMs) / DEMO_HOUR_MS;
  const series = new Map<string, Series>();
  if (hours <= 0) return series;
  const seed = simulationSeed(operation.id);
  const jitter = (hour: number, amplitude: number) => Math.sin(hour * 37.1 + seed) * amplitude;
  if (operation.spec.simulate === 'fed-batch') {
    const fedBatch = simulateFedBatch({ startMs: operation.startMs, durationHours: hours, seed, ...(operation.spec.feedFault ? { feedFault: operation.spec.feedFault } : {}) });
    for (const [key, points] of Object.entries(fedBatch)) series.set(key, points);
  } else if (operation.spec.simulate === 'centrifugation') {
    const rpm = (h: number) => (h < 0.1 ? 12000 * (h / 0.1) : h > 0.9 ? Math.max(0, 12000 * (1 - (h - 0.9) / 0.1)) : 12000);
    series.set('speed', sampled(operation.startMs, endMs, 10, (h) => rpm(h) + jitter(h, 15)));
    series.set('gforce', sampled(operation.startMs, endMs, 10, (h) => 1.118e-5 * 14.5 * rpm(h) ** 2 / 1000));
    series.set('temperature', sampled(operation.startMs, endMs, 10, (h) => 4 + 0.6 * Math.exp(-h * 6) + jitter(h, 0.05)));
  } else if (operation.spec.simulate === 'chromatography') {
    const peak = (h: number, centre: number, width: number, height: number) => height * Math.exp(-(((h - centre) / width) ** 2));
    series.set('uv280', sampled(operation.startMs, endMs, 5, (h) => 3 + peak(h, 0.35, 0.05, 180) + peak(h, 1.6, 0.12, 1450) + peak(h, 2.1, 0.06, 210) + jitter(h, 0.8)));
    series.set('conductivity', sampled(operation.startMs, endMs, 5, (h) => (h < 1.2 ? 4.5 : Math.min(85, 4.5 + (h - 1.2) * 60)) + jitter(h, 0.1)));
    series.set('pressure', sampled(operation.startMs, endMs, 5, (h) => 2.1 + (h > 1.2 ? 0.3 : 0) + jitter(h, 0.03)));
    series.set('yield', [[endMs, 78 + (operation.id % 7) * 2.1]]);
  }
  return series;
}

const BULK_CHUNK = 50_000;

function multipartBody(mapping: unknown, fileName: string, content: Buffer): { body: Buffer; contentType: string } {
  const boundary = `----bioprocess-demo-${Date.now().toString(16)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\n${JSON.stringify(mapping)}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName.replace(/"/g, '')}"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, content, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Loads the demo time series through the bulk and CSV upload endpoints, as the demo admin. */
export async function seedDemoTimeSeries(app: App, deps: AppDeps, plan: SeedPlan, now = Date.now()): Promise<void> {
  const token = await createSession(deps.pg, plan.adminUserId, 1);
  const authorization = `Bearer ${token}`;
  const points: Array<{ measured_at: string; instrument_id: number; float_value: number }> = [];
  const flush = async () => {
    if (points.length === 0) return;
    const response = await app.inject({ method: 'POST', url: '/api/v1/time-series-data/bulk', headers: { authorization }, payload: { data: points.splice(0) } });
    if (response.statusCode >= 300) throw new Error(`bulk seed rejected: ${response.statusCode} ${response.body.slice(0, 200)}`);
  };
  for (const operation of plan.unitOperations) {
    const instruments = plan.instruments.get(operation.spec.equipment);
    for (const [key, series] of simulatedSeries(operation, now)) {
      const instrumentId = instruments?.get(key);
      if (!instrumentId) continue;
      for (const [ts, value] of series) {
        points.push({ measured_at: new Date(ts).toISOString(), instrument_id: instrumentId, float_value: value });
        if (points.length >= BULK_CHUNK) await flush();
      }
    }
  }
  await flush();

  for (const operation of plan.unitOperations) {
    const dataset = operation.run.dataset;
    if (!dataset) continue;
    const instruments = plan.instruments.get(dataset.equipment)!;
    const mapping = {
      timestamp_column: dataset.timestampColumn,
      timestamp_mode: dataset.elapsedUnit ? 'elapsed' : 'absolute',
      ...(dataset.elapsedUnit ? { elapsed_unit: dataset.elapsedUnit } : {}),
      columns: Object.entries(dataset.columns).map(([column, key]) => ({ column, instrument_id: instruments.get(key)! })),
      replace_existing: false,
    };
    let content: Buffer;
    try {
      content = await readFile(path.join(DATASETS_DIR, dataset.file));
    } catch {
      deps.logger.warn({ file: dataset.file }, 'demo dataset not found; its run stays without readings');
      continue;
    }
    const { body, contentType } = multipartBody(mapping, dataset.file, content);
    const response = await app.inject({
      method: 'POST', url: `/api/v1/unit-operations/${operation.id}/csv-uploads`,
      headers: { authorization, 'content-type': contentType }, payload: body,
    });
    if (response.statusCode >= 300) deps.logger.warn({ file: dataset.file, status: response.statusCode, body: response.body.slice(0, 300) }, 'demo dataset upload rejected');
  }
}

/** Start-up entry: metadata now, time series in the background once the app can take requests. */
export async function seedDemo(app: App, deps: AppDeps): Promise<void> {
  const plan = await seedDemoMetadata(deps);
  if (!plan) {
    deps.logger.info('demo organisation already seeded');
    return;
  }
  deps.logger.info({ organizationId: plan.organizationId }, 'demo organisation seeded; loading its time series');
  prepareDemoAlerts(deps).then(() => seedDemoTimeSeries(app, deps, plan))
    .then(() => deps.logger.info('demo time series queued'))
    .catch((error: unknown) => deps.logger.error({ err: error }, 'demo time series could not be queued'));
  const running = plan.unitOperations.find((operation) => operation.endMs === null && operation.spec.simulate === 'fed-batch');
  const instruments = running && plan.instruments.get(running.spec.equipment);
  if (deps.env.DEMO_INTEGRATIONS && instruments) {
    createSession(deps.pg, plan.adminUserId, 1)
      .then((token) => seedDemoIntegrations(app, deps, `Bearer ${token}`, { instruments }))
      .then(() => deps.logger.info('demo integrations connected to the running demo run'))
      .catch((error: unknown) => deps.logger.error({ err: error }, 'demo integrations could not be created'));
  }
}
