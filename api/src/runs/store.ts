/** Run rows: organisation-scoped reads and the wire form with its derived status. */
import type pg from 'pg';
import { toIsoTimestamp, type Run } from '@bioprocess/shared/entities';
import { requireOrganizationRow, withDerivedStatus, type RowLock } from '../platform/organization-rows.ts';

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

export function toRun(row: RunRow, now = new Date()): Run {
  return withDerivedStatus(row, now);
}

export async function requireRun(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  runId: number,
  options: { lock?: RowLock } = {},
): Promise<RunRow> {
  return requireOrganizationRow<RunRow>(db, { name: 'runs', columns: RUN_COLUMNS, notFound: RUN_NOT_FOUND }, organizationId, runId, options);
}

/**
 * Resolves an optional time of an update body against the stored one: undefined keeps the stored
 * time, null clears it, a string is normalised to ISO 8601 (the body schema checked it parses).
 */
export function mergeTime(given: string | null | undefined, stored: Date | null): string | null {
  if (given === undefined) return toIsoTimestamp(stored);
  return given === null ? null : toIsoTimestamp(given);
}
