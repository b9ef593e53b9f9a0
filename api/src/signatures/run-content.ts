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
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import { listSamplesOfUnitOperations, toSample } from '../samples/repository.ts';
import { requireRun } from '../runs/repository.ts';
import { canonicalJson } from './canonical-json.ts';

export const RUN_CONTENT_VERSION = 1;

interface UnitOperationContentRow {
  id: string;
  type: string;
  equipment_id: string | null;
  start_time: Date | null;
  end_time: Date | null;
  properties: Record<string, number>;
}

export async function runContentDocument(db: Queryable, organizationId: number, runId: number): Promise<unknown> {
  const run = await requireRun(db, organizationId, runId);
  const { rows: unitOperations } = await db.query<UnitOperationContentRow>(
    `SELECT id, type, equipment_id, start_time, end_time, properties
       FROM unit_operations WHERE organization_id = $1 AND run_id = $2 ORDER BY id`,
    [organizationId, runId],
  );
  const unitOperationIds = unitOperations.map((row) => Number(row.id));
  const samples = unitOperationIds.length === 0 ? [] : await listSamplesOfUnitOperations(db, organizationId, unitOperationIds);
  const { rows: jobs } = await db.query<{ id: string; kind: string; version_seq: string }>(
    `SELECT j.id::text AS id, j.kind, j.version_seq::text AS version_seq
       FROM ingest_jobs j
      WHERE j.organization_id = $1
        AND (NULLIF(j.request->>'unit_operation_id', '')::bigint = ANY($2::bigint[])
             OR NULLIF(j.request->>'created_unit_operation_id', '')::bigint = ANY($2::bigint[]))
     UNION
     SELECT d.job_id::text, 'deletion', d.version_seq::text
       FROM time_series_deletions d
       JOIN unit_operations u ON u.organization_id = d.organization_id AND u.run_id = $3 AND u.start_time IS NOT NULL
      WHERE d.organization_id = $1
        AND d.end_ms >= (extract(epoch FROM u.start_time) * 1000)::bigint
        AND (u.end_time IS NULL OR d.start_ms <= (extract(epoch FROM u.end_time) * 1000)::bigint)
        AND d.instrument_ids && ARRAY(SELECT i.id FROM instruments i WHERE i.equipment_id = u.equipment_id)
      ORDER BY 1`,
    [organizationId, unitOperationIds, runId],
  );
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
