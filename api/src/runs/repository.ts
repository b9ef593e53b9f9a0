/** Run rows in PostgreSQL: every query the run routes make, and the wire form with its derived status. */
import type pg from 'pg';
import { toIsoTimestamp, type Run } from '@bioprocess/shared/entities';
import {
  listOrganizationRows, requireOrganizationRow, withDerivedStatus, type OrganizationTable, type RowLock, type RowPage,
} from '../platform/organization-rows.ts';
import { deleteRunUnitOperations, type UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';

export const RUN_NOT_FOUND = 'Run not found';

export const RUN_COLUMNS =
  'id, organization_id, facility_id, name, strain, target, description, start_time, end_time, scale_liters, scale_grams, created_at, updated_at';

export interface RunRow {
  id: number;
  organization_id: number;
  facility_id: number;
  name: string;
  strain: string | null;
  target: string;
  description: string | null;
  start_time: Date | null;
  end_time: Date | null;
  scale_liters: number | null;
  scale_grams: number | null;
  created_at: Date;
  updated_at: Date;
}

/** The stored fields of a run, as an insert or a whole-row update writes them. */
export type RunValues = Pick<RunRow, 'facility_id' | 'name' | 'strain' | 'target' | 'description' | 'scale_liters' | 'scale_grams'> & {
  start_time: string | null;
  end_time: string | null;
};

const RUNS: OrganizationTable = { name: 'runs', columns: RUN_COLUMNS, notFound: RUN_NOT_FOUND };

export function toRun(row: RunRow, now = new Date()): Run {
  return withDerivedStatus(row, now);
}

export async function requireRun(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  runId: number,
  options: { lock?: RowLock } = {},
): Promise<RunRow> {
  return requireOrganizationRow<RunRow>(db, RUNS, organizationId, runId, options);
}

/** Newest first. */
export function listRuns(db: pg.Pool | pg.PoolClient, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<RunRow>> {
  return listOrganizationRows<RunRow>(db, RUNS, organizationId, { ...page, orderBy: 'id DESC' });
}

export async function insertRun(db: pg.PoolClient, organizationId: number, values: RunValues): Promise<RunRow> {
  const { rows } = await db.query<RunRow>(
    `INSERT INTO runs (organization_id, facility_id, name, strain, target, description, start_time, end_time, scale_liters, scale_grams)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${RUN_COLUMNS}`,
    [
      organizationId, values.facility_id, values.name, values.strain, values.target, values.description,
      values.start_time, values.end_time, values.scale_liters, values.scale_grams,
    ],
  );
  return rows[0]!;
}

export async function updateRun(db: pg.PoolClient, organizationId: number, runId: number, values: RunValues): Promise<RunRow> {
  const { rows } = await db.query<RunRow>(
    `UPDATE runs SET facility_id = $3, name = $4, strain = $5, target = $6, description = $7, start_time = $8,
            end_time = $9, scale_liters = $10, scale_grams = $11, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${RUN_COLUMNS}`,
    [
      runId, organizationId, values.facility_id, values.name, values.strain, values.target, values.description,
      values.start_time, values.end_time, values.scale_liters, values.scale_grams,
    ],
  );
  return rows[0]!;
}

/**
 * Deletes the run and its unit operations, returning the unit operations that went: they are deleted
 * explicitly (rather than by the foreign key's cascade) so the caller can audit them and drop their points.
 */
export async function deleteRun(db: pg.PoolClient, organizationId: number, runId: number): Promise<UnitOperationRow[]> {
  const deleted = await deleteRunUnitOperations(db, organizationId, runId);
  await db.query('DELETE FROM runs WHERE id = $1 AND organization_id = $2', [runId, organizationId]);
  return deleted;
}

/**
 * Resolves an optional time of an update body against the stored one: undefined keeps the stored
 * time, null clears it, a string is normalised to ISO 8601 (the body schema checked it parses).
 */
export function mergeTime(given: string | null | undefined, stored: Date | null): string | null {
  if (given === undefined) return toIsoTimestamp(stored);
  return given === null ? null : toIsoTimestamp(given);
}
