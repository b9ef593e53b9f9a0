/** Facility rows: organisation-scoped reads shared by the facility routes and by their dependents. */
import type pg from 'pg';
import { toIsoTimestamp, type Facility } from '@bioprocess/shared/entities';
import { conflict } from '../platform/http-error.ts';
import { requireOrganizationRow, type RowLock } from '../platform/organization-rows.ts';

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
  return requireOrganizationRow<FacilityRow>(db, { name: 'facilities', columns: FACILITY_COLUMNS, notFound: FACILITY_NOT_FOUND }, organizationId, facilityId, options);
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
