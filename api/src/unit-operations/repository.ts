/**
 * What the api adds to the unit operations repository (shared/src/server/unit-operations-repository.ts,
 * which holds every statement on the table for the api and the ingest-worker): the
 * organisation-scoped lookup that answers 404, the wire form with its derived status, the merge of
 * edited properties, and the equipment types that decide which unit operations a plant can run.
 */
import type pg from 'pg';
import type { UnitOperation } from '@bioprocess/shared/entities';
import { UNIT_OPERATIONS_TABLE, type UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { requireOrganizationRow, withDerivedStatus, type RowLock } from '../platform/organization-rows.ts';
import type { EquipmentKind } from './allowed-equipment.ts';

export const UNIT_OPERATION_NOT_FOUND = 'Unit operation not found';

export function toUnitOperation(row: UnitOperationRow, now = new Date()): UnitOperation {
  return withDerivedStatus(row, now);
}

export async function requireUnitOperation(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  options: { lock?: RowLock } = {},
): Promise<UnitOperationRow> {
  return requireOrganizationRow<UnitOperationRow>(db, { ...UNIT_OPERATIONS_TABLE, notFound: UNIT_OPERATION_NOT_FOUND }, organizationId, unitOperationId, options);
}

/** Every piece of the organisation's equipment with its type: what decides which unit-operation types it can serve. */
export async function listEquipmentKinds(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<EquipmentKind[]> {
  const { rows } = await db.query<EquipmentKind>('SELECT id, type FROM equipment WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows;
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
