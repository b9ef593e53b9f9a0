/** Unit operation rows: organisation-scoped reads and the wire form with its derived status. */
import type pg from 'pg';
import { toIsoTimestamp, type UnitOperation } from '@bioprocess/shared/entities';
import { deriveStatus } from '@bioprocess/shared/status';
import { notFound } from '../platform/http-error.ts';
import { lockClause, type RowLock } from '../facilities/store.ts';

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
  return {
    ...row,
    start_time: toIsoTimestamp(row.start_time),
    end_time: toIsoTimestamp(row.end_time),
    status: deriveStatus(row.start_time, row.end_time, now),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

export async function requireUnitOperation(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  options: { lock?: RowLock } = {},
): Promise<UnitOperationRow> {
  const { rows } = await db.query<UnitOperationRow>(
    `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE id = $1 AND organization_id = $2${lockClause(options.lock)}`,
    [unitOperationId, organizationId],
  );
  if (!rows[0]) throw notFound(UNIT_OPERATION_NOT_FOUND);
  return rows[0];
}
