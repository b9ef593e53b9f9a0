/** Facility rows in PostgreSQL: every query the facility routes make, and the lookups their dependents use. */
import type pg from 'pg';
import { toIsoTimestamp, type Facility } from '@bioprocess/shared/entities';
import { conflict } from '../platform/http-error.ts';
import {
  deleteOrganizationRow, listOrganizationRows, requireOrganizationRow, type OrganizationTable, type RowLock, type RowPage,
} from '../platform/organization-rows.ts';

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

export type FacilityValues = Pick<FacilityRow, 'name' | 'type' | 'country' | 'address'>;

const FACILITIES: OrganizationTable = { name: 'facilities', columns: FACILITY_COLUMNS, notFound: FACILITY_NOT_FOUND };

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
  return requireOrganizationRow<FacilityRow>(db, FACILITIES, organizationId, facilityId, options);
}

export function listFacilities(db: pg.Pool | pg.PoolClient, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<FacilityRow>> {
  return listOrganizationRows<FacilityRow>(db, FACILITIES, organizationId, { ...page, orderBy: 'id' });
}

export async function insertFacility(db: pg.PoolClient, organizationId: number, values: FacilityValues): Promise<FacilityRow> {
  const { rows } = await db.query<FacilityRow>(
    `INSERT INTO facilities (organization_id, name, type, country, address)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${FACILITY_COLUMNS}`,
    [organizationId, values.name, values.type, values.country, values.address],
  );
  return rows[0]!;
}

export async function updateFacility(db: pg.PoolClient, organizationId: number, facilityId: number, values: FacilityValues): Promise<FacilityRow> {
  const { rows } = await db.query<FacilityRow>(
    `UPDATE facilities SET name = $3, type = $4, country = $5, address = $6, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${FACILITY_COLUMNS}`,
    [facilityId, organizationId, values.name, values.type, values.country, values.address],
  );
  return rows[0]!;
}

/** What still belongs to the facility and so blocks its deletion. */
export async function countFacilityDependents(db: pg.PoolClient, facilityId: number): Promise<{ equipment: number; runs: number }> {
  const { rows } = await db.query<{ equipment: number; runs: number }>(
    `SELECT (SELECT count(*)::int FROM equipment WHERE facility_id = $1) AS equipment,
            (SELECT count(*)::int FROM runs WHERE facility_id = $1) AS runs`,
    [facilityId],
  );
  return rows[0]!;
}

export function deleteFacility(db: pg.PoolClient, organizationId: number, facilityId: number): Promise<void> {
  return deleteOrganizationRow(db, FACILITIES, organizationId, facilityId);
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
