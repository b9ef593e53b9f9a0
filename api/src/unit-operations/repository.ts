/** Unit operation rows in PostgreSQL: the queries the unit-operation routes make, and the wire form with its derived status. */
import type pg from 'pg';
import type { UnitOperation } from '@bioprocess/shared/entities';
import { requireOrganizationRow, withDerivedStatus, type RowLock, type RowPage } from '../platform/organization-rows.ts';
import type { EquipmentKind } from './allowed-equipment.ts';

export const UNIT_OPERATION_NOT_FOUND = 'Unit operation not found';

export const UNIT_OPERATION_COLUMNS = 'id, organization_id, run_id, type, equipment_id, start_time, end_time, properties, created_at, updated_at';

/** The order of a run's unit operations: their sequence in the process, those without a start last. */
export const UNIT_OPERATION_SEQUENCE_ORDER = 'start_time ASC NULLS LAST, id ASC';

export interface UnitOperationRow {
  id: number;
  organization_id: number;
  run_id: number;
  type: string;
  equipment_id: number | null;
  start_time: Date | null;
  end_time: Date | null;
  properties: Record<string, number>;
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

/** The organisation's unit operations in creation order, optionally only those of one run or one type. */
export async function listUnitOperations(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  query: { limit: number; offset: number; runId: number | null; type: string | null },
): Promise<RowPage<UnitOperationRow>> {
  const filter = 'organization_id = $1 AND ($2::bigint IS NULL OR run_id = $2) AND ($3::text IS NULL OR type = $3)';
  const filterValues = [organizationId, query.runId, query.type];
  const [list, count] = await Promise.all([
    db.query<UnitOperationRow>(
      `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE ${filter} ORDER BY id LIMIT $4 OFFSET $5`,
      [...filterValues, query.limit, query.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM unit_operations WHERE ${filter}`, filterValues),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/** The unit operations of one run (already checked to be the organisation's), in process order. */
export async function listRunUnitOperations(
  db: pg.Pool | pg.PoolClient,
  runId: number,
  page: { limit: number; offset: number },
): Promise<RowPage<UnitOperationRow>> {
  const [list, count] = await Promise.all([
    db.query<UnitOperationRow>(
      `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE run_id = $1
        ORDER BY ${UNIT_OPERATION_SEQUENCE_ORDER} LIMIT $2 OFFSET $3`,
      [runId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM unit_operations WHERE run_id = $1', [runId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/** Every piece of the organisation's equipment with its type: what decides which unit-operation types it can serve. */
export async function listEquipmentKinds(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<EquipmentKind[]> {
  const { rows } = await db.query<EquipmentKind>('SELECT id, type FROM equipment WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows;
}

export async function updateUnitOperation(
  db: pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  values: {
    run_id: number; type: string; equipment_id: number | null; start_time: string | null; end_time: string | null;
    properties: Record<string, number>;
  },
): Promise<UnitOperationRow> {
  const { rows } = await db.query<UnitOperationRow>(
    `UPDATE unit_operations SET run_id = $3, type = $4, equipment_id = $5, start_time = $6, end_time = $7, properties = $8,
            updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [unitOperationId, organizationId, values.run_id, values.type, values.equipment_id, values.start_time, values.end_time, values.properties],
  );
  return rows[0]!;
}

/** The deleted unit operation (its comments go with it by the foreign key's cascade), or null when there is none. */
export async function deleteUnitOperation(db: pg.PoolClient, organizationId: number, unitOperationId: number): Promise<UnitOperationRow | null> {
  const { rows } = await db.query<UnitOperationRow>(
    `DELETE FROM unit_operations WHERE id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [unitOperationId, organizationId],
  );
  return rows[0] ?? null;
}

/** The stored properties with the given ones applied: a number sets one, null clears it, a missing one stays. */
export function mergeProperties(stored: Record<string, number>, given: Record<string, number | null | undefined> | undefined): Record<string, number> {
  const merged: Record<string, number> = { ...stored };
  for (const [name, value] of Object.entries(given ?? {})) {
    if (value === null) delete merged[name];
    else if (value !== undefined) merged[name] = value;
  }
  return merged;
}
