/** Equipment rows: organisation-scoped reads shared by the equipment routes and by their dependents. */
import type pg from 'pg';
import { toIsoTimestamp, type Equipment } from '@bioprocess/shared/entities';
import { requireOrganizationRow, type RowLock } from '../platform/organization-rows.ts';

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
  return requireOrganizationRow<EquipmentRow>(db, { name: 'equipment', columns: EQUIPMENT_COLUMNS, notFound: EQUIPMENT_NOT_FOUND }, organizationId, equipmentId, options);
}
