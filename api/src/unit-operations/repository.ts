/**
 * Unit operation rows in PostgreSQL: every query of the `unit_operations` table the api makes (its
 * routes, runs' deletion, uploads, exports, Analyze, derived parameters, audit names, equipment
 * deletion), each scoped by organisation, and the wire form with its derived status. The
 * one-at-a-time windows rule, shared with the ingest-worker, is shared/src/server/unit-operation-windows.ts.
 */
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

/** A page of the unit operations of one of the organisation's runs, in process order. */
export async function listRunUnitOperations(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  runId: number,
  page: { limit: number; offset: number },
): Promise<RowPage<UnitOperationRow>> {
  const [list, count] = await Promise.all([
    db.query<UnitOperationRow>(
      `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE organization_id = $1 AND run_id = $2
        ORDER BY ${UNIT_OPERATION_SEQUENCE_ORDER} LIMIT $3 OFFSET $4`,
      [organizationId, runId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM unit_operations WHERE organization_id = $1 AND run_id = $2', [organizationId, runId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

export interface UnitOperationWithRunName extends UnitOperationRow {
  run_name: string;
}

/** The columns of UNIT_OPERATION_COLUMNS, of the table named `u`. */
const UNIT_OPERATION_COLUMNS_OF_U = UNIT_OPERATION_COLUMNS.split(', ').map((column) => `u.${column}`).join(', ');

/**
 * The organisation's unit operations with their run's name, in process order: those among `ids` (ids
 * of others, or of none, are left out), or every one of a run.
 */
export async function listUnitOperationsWithRunName(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  which: { ids: readonly number[] } | { runId: number },
): Promise<UnitOperationWithRunName[]> {
  const [filter, value] = 'ids' in which ? ['u.id = ANY($2::bigint[])', [...new Set(which.ids)]] : ['u.run_id = $2', which.runId];
  const { rows } = await db.query<UnitOperationWithRunName>(
    `SELECT ${UNIT_OPERATION_COLUMNS_OF_U}, r.name AS run_name FROM unit_operations u JOIN runs r ON r.id = u.run_id
      WHERE u.organization_id = $1 AND ${filter} ORDER BY u.start_time ASC NULLS LAST, u.id ASC`,
    [organizationId, value],
  );
  return rows;
}

/** The ids of the organisation's unit operations that can own readings (with equipment and a start), in creation order. */
export async function listUnitOperationIdsWithReadings(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    'SELECT id FROM unit_operations WHERE organization_id = $1 AND start_time IS NOT NULL AND equipment_id IS NOT NULL ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

/** The properties of the organisation's unit operations among `ids`, by id. */
export async function unitOperationProperties(db: pg.Pool | pg.PoolClient, organizationId: number, ids: readonly number[]): Promise<Map<number, Record<string, number>>> {
  const { rows } = await db.query<Pick<UnitOperationRow, 'id' | 'properties'>>(
    'SELECT id, properties FROM unit_operations WHERE organization_id = $1 AND id = ANY($2::bigint[])', [organizationId, [...ids]]);
  return new Map(rows.map((row) => [Number(row.id), row.properties ?? {}]));
}

/** Names of the unit operations among `ids` ("Fermentation of run 'R1'"), of one organisation (null: of any, for a superuser's view). */
export async function unitOperationNames(db: pg.Pool | pg.PoolClient, ids: readonly number[], organizationId: number | null): Promise<Array<{ id: number; name: string }>> {
  const { rows } = await db.query<{ id: number; name: string }>(
    `SELECT u.id, initcap(replace(u.type, '_', ' ')) || ' of run ''' || r.name || '''' AS name
       FROM unit_operations u JOIN runs r ON r.id = u.run_id
      WHERE u.id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR u.organization_id = $2)`,
    [[...ids], organizationId]);
  return rows;
}

/** How many unit operations use one piece of the organisation's equipment. */
export async function countUnitOperationsOnEquipment(db: pg.Pool | pg.PoolClient, organizationId: number, equipmentId: number): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM unit_operations WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]);
  return rows[0]!.total;
}

/** Every piece of the organisation's equipment with its type: what decides which unit-operation types it can serve. */
export async function listEquipmentKinds(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<EquipmentKind[]> {
  const { rows } = await db.query<EquipmentKind>('SELECT id, type FROM equipment WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows;
}

export type UnitOperationValues = Pick<UnitOperationRow, 'run_id' | 'type' | 'equipment_id' | 'properties'> & {
  start_time: string | Date | null;
  end_time: string | Date | null;
};

/** Inserts the row as given; the checks that come first (run, equipment, one at a time) are windows.ts's. */
export async function insertUnitOperationRow(db: pg.PoolClient, organizationId: number, values: UnitOperationValues): Promise<UnitOperationRow> {
  const { rows } = await db.query<UnitOperationRow>(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time, properties)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [organizationId, values.run_id, values.type, values.equipment_id, values.start_time, values.end_time, values.properties],
  );
  return rows[0]!;
}

export async function updateUnitOperation(
  db: pg.PoolClient,
  organizationId: number,
  unitOperationId: number,
  values: UnitOperationValues,
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

/** Deletes the unit operations of one of the organisation's runs, returning them. */
export async function deleteRunUnitOperations(db: pg.PoolClient, organizationId: number, runId: number): Promise<UnitOperationRow[]> {
  const { rows } = await db.query<UnitOperationRow>(
    `DELETE FROM unit_operations WHERE run_id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [runId, organizationId],
  );
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
