/**
 * What a signature on a run signs: the run's content as one canonical document and its SHA-256.
 *
 * The document holds the run's metadata (not its derived status, which moves with the clock), its
 * unit operations (type, equipment, window, properties), every sample of each with its results, and
 * the id, kind and version of every ingest job that wrote into or deleted from the run's readings (CSV
 * uploads to its unit operations, and range deletions overlapping a unit operation's window on its
 * equipment's instruments). The readings themselves are not hashed: an accepted write always gets a new
 * job and version, so any change to them changes the document. The record's type and id are part of
 * the document, so a hash cannot be carried over to another run with equal content.
 */
import { createHash } from 'node:crypto';
import { listJobsTouchingUnitOperations, type InstrumentWindow } from '@bioprocess/shared/server/ingest-jobs';
import { listInstrumentsOfEquipment } from '@bioprocess/shared/server/instruments-repository';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { listRunUnitOperationsWithWindowMs, type UnitOperationWithWindowMs } from '@bioprocess/shared/server/unit-operations-repository';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { listSamplesOfUnitOperations, toSample } from '../samples/repository.ts';
import { requireRun } from '../runs/repository.ts';
import { canonicalJson } from './canonical-json.ts';

export const RUN_CONTENT_VERSION = 1;

/**
 * Where a range deletion touches the run's readings: each instrument of the equipment of each unit
 * operation with a start, in that unit operation's window.
 */
async function readingWindowsOf(db: Queryable, organizationId: number, unitOperations: readonly UnitOperationWithWindowMs[]): Promise<InstrumentWindow[]> {
  const owning = unitOperations.filter((row) => row.start_ms !== null && row.equipment_id !== null);
  const instruments = await listInstrumentsOfEquipment(db, organizationId, [...new Set(owning.map((row) => row.equipment_id!))]);
  return owning.flatMap((row) => instruments.filter((instrument) => instrument.equipment_id === row.equipment_id)
    .map((instrument) => ({ instrumentId: instrument.id, startMs: row.start_ms!, endMs: row.end_ms })));
}

export async function runContentDocument(db: Queryable, organizationId: number, runId: number): Promise<unknown> {
  const run = await requireRun(db, organizationId, runId);
  const unitOperations = await listRunUnitOperationsWithWindowMs(db, organizationId, runId);
  const unitOperationIds = unitOperations.map((row) => Number(row.id));
  const samples = unitOperationIds.length === 0 ? [] : await listSamplesOfUnitOperations(db, organizationId, unitOperationIds);
  const jobs = await listJobsTouchingUnitOperations(db, organizationId, unitOperationIds, await readingWindowsOf(db, organizationId, unitOperations));
  return {
    content_version: RUN_CONTENT_VERSION,
    record_type: 'run',
    run: {
      id: Number(run.id), organization_id: Number(run.organization_id), facility_id: Number(run.facility_id), name: run.name,
      strain: run.strain, target: run.target, description: run.description,
      start_time: toIsoTimestamp(run.start_time), end_time: toIsoTimestamp(run.end_time),
      scale_liters: run.scale_liters, scale_grams: run.scale_grams,
    },
    unit_operations: unitOperations.map((row) => ({
      id: Number(row.id), type: row.type, equipment_id: row.equipment_id === null ? null : Number(row.equipment_id),
      start_time: toIsoTimestamp(row.start_time), end_time: toIsoTimestamp(row.end_time), properties: row.properties ?? {},
    })),
    samples: samples.map(toSample).map((sample) => ({ ...sample, created_at: undefined, updated_at: undefined }))
      .sort((a, b) => a.id - b.id),
    ingest_jobs: jobs.map((job) => ({ id: job.id, kind: job.kind, version: job.version_seq })),
  };
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export async function runContentHash(db: Queryable, organizationId: number, runId: number): Promise<string> {
  return sha256Hex(canonicalJson(await runContentDocument(db, organizationId, runId)));
}
