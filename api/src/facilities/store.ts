/** Facility rows: organisation-scoped reads shared by the facility routes and by their dependents. */
import type pg from 'pg';
import { toIsoTimestamp, type Facility } from '@bioprocess/shared/entities';
import { conflict, notFound } from '../platform/http-error.ts';

/**
 * Row locks of the organisation-scoped lookups of every metadata store: 'update' for a row about to
 * change or go, 'share' for a row a new row will point at (a concurrent delete then waits, and sees
 * the new dependent, instead of the insert failing on the foreign key).
 */
export type RowLock = 'update' | 'share';

export function lockClause(lock: RowLock | undefined): string {
  return lock === 'update' ? ' FOR UPDATE' : lock === 'share' ? ' FOR SHARE' : '';
}

export const FACILITY_NOT_FOUND = 'Facility not found';

export const FACILITY_COLUMNS = 'id, organization_id, name, type, country, address, created_at, updated_at';

export interface FacilityRow {
  id: number;
  organization_id: number;
  name: string;
  type: string;
  country: string | null;
  address: string | null;
  created_at: Date;
  updated_at: Date;
}

export function toFacility(row: FacilityRow): Facility {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

/** The facility if it belongs to the organisation; another organisation's facility is "not found". */
export async function requireFacility(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  facilityId: number,
  options: { lock?: RowLock } = {},
): Promise<FacilityRow> {
  const { rows } = await db.query<FacilityRow>(
    `SELECT ${FACILITY_COLUMNS} FROM facilities WHERE id = $1 AND organization_id = $2${lockClause(options.lock)}`,
    [facilityId, organizationId],
  );
  if (!rows[0]) throw notFound(FACILITY_NOT_FOUND);
  return rows[0];
}

/**
 * A dependent row inserted between the count and the delete makes PostgreSQL refuse the delete
 * (ON DELETE RESTRICT): that race answers the same 409 rather than a 500.
 */
export function rethrowForeignKeyViolation(message: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23503') throw conflict(message);
    throw error;
  };
}

/** "1 run", "3 runs": for the messages that name what blocks a delete. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
