/** Unit operation rows: organisation-scoped reads and the wire form with its derived status. */
import type pg from 'pg';
import type { UnitOperation } from '@bioprocess/shared/entities';
import { requireOrganizationRow, withDerivedStatus, type RowLock } from '../platform/organization-rows.ts';

export const UNIT_OPERATION_NOT_FOUND = 'Unit operation not found';

export const UNIT_OPERATION_COLUMNS = 'id, organization_id, run_id, type, equipment_id, start_time, end_time, created_at, updated_at';

/** The order of a run's unit operations: their sequence in the process (spec/02 §2, run detail). */
export const UNIT_OPERATION_SEQUENCE_ORDER = 'start_time ASC NULLS LAST, id ASC';

export interface UnitOperationRow {
  id: number;
  organization_id: number;
  run_id: number;
  type: string;
  equipment_id: number | null;
  start_time: Date | null;
  end_time: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toUnitOperation(row: UnitOperationRow, now = new Date()): UnitOperation {
  return withDerivedStatus(row, now);
}

export async function requireUnitOperation(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  options: { lock?: RowLock } = {},
): Promise<UnitOperationRow> {
  return requireOrganizationRow<UnitOperationRow>(db, { name: 'unit_operations', columns: UNIT_OPERATION_COLUMNS, notFound: UNIT_OPERATION_NOT_FOUND }, organizationId, unitOperationId, options);
}
