/** Equipment rows in PostgreSQL: every query the equipment routes make, and the lookups their dependents use. */
import type pg from 'pg';
import { countInstrumentsOnEquipment } from '@bioprocess/shared/server/instruments-repository';
import { countUnitOperationsOnEquipment } from '@bioprocess/shared/server/unit-operations-repository';
import { toIsoTimestamp, type Equipment } from '@bioprocess/shared/entities';
import {
  deleteOrganizationRow, listOrganizationRows, requireOrganizationRow, type OrganizationTable, type RowLock, type RowPage,
} from '../platform/organization-rows.ts';

export const EQUIPMENT_NOT_FOUND = 'Equipment not found';

export const EQUIPMENT_COLUMNS = 'id, organization_id, facility_id, name, type, oem, status, created_at, updated_at';

export interface EquipmentRow {
  id: number;
  organization_id: number;
  facility_id: number;
  name: string;
  type: string;
  oem: string | null;
  status: number;
  created_at: Date;
  updated_at: Date;
}

export type EquipmentValues = Pick<EquipmentRow, 'facility_id' | 'name' | 'type' | 'oem' | 'status'>;

const EQUIPMENT: OrganizationTable = { name: 'equipment', columns: EQUIPMENT_COLUMNS, notFound: EQUIPMENT_NOT_FOUND };

export function toEquipment(row: EquipmentRow): Equipment {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

/** The equipment if it belongs to the organisation; another organisation's equipment is "not found". */
export async function requireEquipment(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  equipmentId: number,
  options: { lock?: RowLock } = {},
): Promise<EquipmentRow> {
  return requireOrganizationRow<EquipmentRow>(db, EQUIPMENT, organizationId, equipmentId, options);
}

export function listEquipment(db: pg.Pool | pg.PoolClient, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<EquipmentRow>> {
  return listOrganizationRows<EquipmentRow>(db, EQUIPMENT, organizationId, { ...page, orderBy: 'id' });
}

export async function insertEquipment(db: pg.PoolClient, organizationId: number, values: EquipmentValues): Promise<EquipmentRow> {
  const { rows } = await db.query<EquipmentRow>(
    `INSERT INTO equipment (organization_id, facility_id, name, type, oem, status)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${EQUIPMENT_COLUMNS}`,
    [organizationId, values.facility_id, values.name, values.type, values.oem, values.status],
  );
  return rows[0]!;
}

export async function updateEquipment(db: pg.PoolClient, organizationId: number, equipmentId: number, values: EquipmentValues): Promise<EquipmentRow> {
  const { rows } = await db.query<EquipmentRow>(
    `UPDATE equipment SET facility_id = $3, name = $4, type = $5, oem = $6, status = $7, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${EQUIPMENT_COLUMNS}`,
    [equipmentId, organizationId, values.facility_id, values.name, values.type, values.oem, values.status],
  );
  return rows[0]!;
}

/** What still uses the equipment and so blocks its deletion. */
export async function countEquipmentDependents(db: pg.PoolClient, organizationId: number, equipmentId: number): Promise<{ instruments: number; unitOperations: number }> {
  const [instruments, unitOperations] = await Promise.all([
    countInstrumentsOnEquipment(db, organizationId, equipmentId),
    countUnitOperationsOnEquipment(db, organizationId, equipmentId),
  ]);
  return { instruments, unitOperations };
}

export function deleteEquipment(db: pg.PoolClient, organizationId: number, equipmentId: number): Promise<void> {
  return deleteOrganizationRow(db, EQUIPMENT, organizationId, equipmentId);
}
