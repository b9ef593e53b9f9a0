/**
 * The `unit_operations` table in PostgreSQL: every statement on it, for the api (its routes, runs'
 * deletion, uploads, exports, Analyze, derived parameters, audit names, equipment deletion, the demo
 * seed, the review guard and report, a run's signed content, alert evaluation), the ingest-worker
 * (the window an upload gives, audit names) and the one-at-a-time windows
 * rule both enforce (server/unit-operation-windows.ts locks the equipment first). Each is scoped by
 * organisation, except the audit names of a superuser's view. One statement on the table stays
 * elsewhere: failIngestJob (server/ingest-jobs.ts) removes the unit operation of a failed upload in
 * the statement that fails the job. What the api answers over HTTP (404, the wire form) stays in
 * api/src/unit-operations/repository.ts.
 */
import { effectiveWindow, type ConflictingUnitOperation, type TimeWindow } from '../unit-operation-windows.ts';
import type { PoolClient, Queryable } from './postgres.ts';

export const UNIT_OPERATION_COLUMNS = 'id, organization_id, run_id, type, equipment_id, start_time, end_time, properties, created_at, updated_at';

/** For the organisation-scoped lookups by id that every metadata table shares (api/src/platform/organization-rows.ts). */
export const UNIT_OPERATIONS_TABLE = { name: 'unit_operations', columns: UNIT_OPERATION_COLUMNS } as const;

/** The order of a run's unit operations: their sequence in the process, those without a start last. */
const SEQUENCE_ORDER = 'start_time ASC NULLS LAST, id ASC';

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

export type UnitOperationValues = Pick<UnitOperationRow, 'run_id' | 'type' | 'equipment_id' | 'properties'> & {
  start_time: string | Date | null;
  end_time: string | Date | null;
};

/** The organisation's unit operations in creation order, optionally only those of one run or one type. */
export async function listUnitOperations(
  db: Queryable,
  organizationId: number,
  query: { limit: number; offset: number; runId: number | null; type: string | null },
): Promise<{ rows: UnitOperationRow[]; total: number }> {
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
  db: Queryable,
  organizationId: number,
  runId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: UnitOperationRow[]; total: number }> {
  const [list, count] = await Promise.all([
    db.query<UnitOperationRow>(
      `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE organization_id = $1 AND run_id = $2
        ORDER BY ${SEQUENCE_ORDER} LIMIT $3 OFFSET $4`,
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
  db: Queryable,
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
export async function listUnitOperationIdsWithReadings(db: Queryable, organizationId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    'SELECT id FROM unit_operations WHERE organization_id = $1 AND start_time IS NOT NULL AND equipment_id IS NOT NULL ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

/** The properties of the organisation's unit operations among `ids`, by id. */
export async function unitOperationProperties(db: Queryable, organizationId: number, ids: readonly number[]): Promise<Map<number, Record<string, number>>> {
  const { rows } = await db.query<Pick<UnitOperationRow, 'id' | 'properties'>>(
    'SELECT id, properties FROM unit_operations WHERE organization_id = $1 AND id = ANY($2::bigint[])', [organizationId, [...ids]]);
  return new Map(rows.map((row) => [Number(row.id), row.properties ?? {}]));
}

/** Names of the unit operations among `ids` ("Fermentation of run 'R1'"), of one organisation (null: of any, for a superuser's view). */
export async function unitOperationNames(db: Queryable, ids: readonly number[], organizationId: number | null): Promise<Array<{ id: number; name: string }>> {
  const { rows } = await db.query<{ id: number; name: string }>(
    `SELECT u.id, initcap(replace(u.type, '_', ' ')) || ' of run ''' || r.name || '''' AS name
       FROM unit_operations u JOIN runs r ON r.id = u.run_id
      WHERE u.id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR u.organization_id = $2)`,
    [[...ids], organizationId]);
  return rows;
}

/** The run of one of the organisation's unit operations; null when there is none. */
export async function runIdOfUnitOperation(db: Queryable, organizationId: number, unitOperationId: number): Promise<number | null> {
  const { rows } = await db.query<{ run_id: number }>(
    'SELECT run_id FROM unit_operations WHERE id = $2 AND organization_id = $1', [organizationId, unitOperationId]);
  return rows[0]?.run_id ?? null;
}

/** The run of one of the organisation's samples (by its row id, not its tube id), through its unit operation; null when there is none. */
export async function runIdOfSample(db: Queryable, organizationId: number, sampleRowId: number): Promise<number | null> {
  const { rows } = await db.query<{ run_id: number }>(
    `SELECT u.run_id FROM samples s JOIN unit_operations u ON u.id = s.unit_operation_id
      WHERE s.id = $2 AND s.organization_id = $1`, [organizationId, sampleRowId]);
  return rows[0]?.run_id ?? null;
}

/**
 * The runs of the organisation's unit operations on these pieces of equipment whose window overlaps
 * startMs..endMs (epoch milliseconds, both ends included; an open window has no end), once per unit
 * operation. The window is compared in milliseconds as PostgreSQL rounds it, as ranges of readings are.
 */
export async function runIdsOfUnitOperationsOnEquipmentDuring(
  db: Queryable,
  organizationId: number,
  equipmentIds: readonly number[],
  startMs: number,
  endMs: number,
): Promise<number[]> {
  const { rows } = await db.query<{ run_id: number }>(
    `SELECT u.run_id FROM unit_operations u
      WHERE u.organization_id = $1 AND u.start_time IS NOT NULL
        AND u.equipment_id = ANY($2::bigint[])
        AND (extract(epoch FROM u.start_time) * 1000)::bigint <= $4
        AND (u.end_time IS NULL OR (extract(epoch FROM u.end_time) * 1000)::bigint >= $3)`,
    [organizationId, [...equipmentIds], startMs, endMs],
  );
  return rows.map((row) => row.run_id);
}

/** The ids of every unit operation of one of the organisation's runs, in creation order. */
export async function listRunUnitOperationIds(db: Queryable, organizationId: number, runId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    'SELECT id FROM unit_operations WHERE organization_id = $1 AND run_id = $2 ORDER BY id', [organizationId, runId]);
  return rows.map((row) => row.id);
}

/** A unit operation with its window in epoch milliseconds as PostgreSQL rounds it (null: no start, or no end). */
export interface UnitOperationWithWindowMs extends UnitOperationRow {
  start_ms: number | null;
  end_ms: number | null;
}

/**
 * Every unit operation of one of the organisation's runs, in creation order, each with its window in
 * milliseconds: rounded here, once, the way ranges of readings (and their deletions) are compared.
 */
export async function listRunUnitOperationsWithWindowMs(db: Queryable, organizationId: number, runId: number): Promise<UnitOperationWithWindowMs[]> {
  const { rows } = await db.query<UnitOperationWithWindowMs>(
    `SELECT ${UNIT_OPERATION_COLUMNS}, (extract(epoch FROM start_time) * 1000)::bigint AS start_ms, (extract(epoch FROM end_time) * 1000)::bigint AS end_ms
       FROM unit_operations WHERE organization_id = $1 AND run_id = $2 ORDER BY id`,
    [organizationId, runId],
  );
  return rows;
}

/** A unit operation with equipment and a start: one that owns the readings of its equipment's instruments in its window. */
export type UnitOperationOnEquipment = Pick<UnitOperationRow, 'id' | 'run_id' | 'type' | 'end_time'> & { equipment_id: number; start_time: Date };

/**
 * The organisation's unit operations on these pieces of equipment whose window overlaps fromMs..toMs
 * (epoch milliseconds, both ends included; an open window has no end), in no particular order.
 */
export async function listUnitOperationsOnEquipmentBetween(
  db: Queryable,
  organizationId: number,
  equipmentIds: readonly number[],
  fromMs: number,
  toMs: number,
): Promise<UnitOperationOnEquipment[]> {
  const { rows } = await db.query<UnitOperationOnEquipment>(
    `SELECT id, run_id, type, equipment_id, start_time, end_time FROM unit_operations
      WHERE organization_id = $1 AND equipment_id = ANY($2::bigint[]) AND start_time IS NOT NULL
        AND start_time <= to_timestamp($4 / 1000.0) AND (end_time IS NULL OR end_time >= to_timestamp($3 / 1000.0))`,
    [organizationId, [...equipmentIds], fromMs, toMs],
  );
  return rows;
}

/**
 * The organisation's unit operations running at `atMs` (started then or before, not ended by then),
 * only those of one type or of one run when given, in no particular order. One without equipment may
 * be among them.
 */
export async function listUnitOperationsRunningAt(
  db: Queryable,
  organizationId: number,
  atMs: number,
  only: { type: string | null; runId: number | null },
): Promise<Array<Pick<UnitOperationRow, 'id' | 'run_id' | 'type' | 'equipment_id' | 'end_time'> & { start_time: Date }>> {
  const { rows } = await db.query<Pick<UnitOperationRow, 'id' | 'run_id' | 'type' | 'equipment_id' | 'end_time'> & { start_time: Date }>(
    `SELECT id, run_id, type, equipment_id, start_time, end_time FROM unit_operations
      WHERE organization_id = $1 AND start_time <= to_timestamp($2 / 1000.0) AND (end_time IS NULL OR end_time > to_timestamp($2 / 1000.0))
        AND ($3::text IS NULL OR type = $3) AND ($4::bigint IS NULL OR run_id = $4)`,
    [organizationId, atMs, only.type, only.runId],
  );
  return rows;
}

/** How many unit operations use one piece of the organisation's equipment. */
export async function countUnitOperationsOnEquipment(db: Queryable, organizationId: number, equipmentId: number): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM unit_operations WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]);
  return rows[0]!.total;
}

interface WindowRow {
  id: number;
  type: string;
  run_name: string;
  start_time: Date;
  end_time: Date | null;
}

/**
 * The first unit operation on the equipment (other than `excludeId`) whose window overlaps
 * start..end (an open end runs until now). Call with the equipment locked
 * (server/unit-operation-windows.ts), or a concurrent writer's window may be missed.
 */
export async function findOverlappingUnitOperation(
  db: Queryable,
  query: { organizationId: number; equipmentId: number; startMs: number; endMs: number | null; excludeId?: number | null },
): Promise<ConflictingUnitOperation | null> {
  const { rows } = await db.query<WindowRow>(
    `SELECT u.id, u.type, r.name AS run_name, u.start_time, u.end_time
       FROM unit_operations u JOIN runs r ON r.id = u.run_id
      WHERE u.organization_id = $1 AND u.equipment_id = $2 AND u.id <> $3 AND u.start_time IS NOT NULL
        AND u.start_time <= COALESCE($5::timestamptz, GREATEST(now(), $4::timestamptz))
        AND COALESCE(u.end_time, GREATEST(now(), u.start_time)) >= $4::timestamptz
      ORDER BY u.start_time, u.id
      LIMIT 1`,
    [query.organizationId, query.equipmentId, query.excludeId ?? 0, new Date(query.startMs), query.endMs === null ? null : new Date(query.endMs)],
  );
  const row = rows[0];
  if (!row) return null;
  return { id: row.id, type: row.type, runName: row.run_name, startMs: row.start_time.getTime(), endMs: row.end_time?.getTime() ?? null };
}

/** The windows of the equipment's other unit operations, as they stand at `nowMs`. */
export async function otherWindowsOnEquipment(
  db: Queryable,
  query: { organizationId: number; equipmentId: number; excludeId: number },
  nowMs: number,
): Promise<TimeWindow[]> {
  const { rows } = await db.query<{ start_time: Date; end_time: Date | null }>(
    `SELECT start_time, end_time FROM unit_operations
      WHERE organization_id = $1 AND equipment_id = $2 AND id <> $3 AND start_time IS NOT NULL`,
    [query.organizationId, query.equipmentId, query.excludeId],
  );
  return rows.map((row) => effectiveWindow(row.start_time.getTime(), row.end_time?.getTime() ?? null, nowMs)!);
}

/**
 * The equipment and window of one of the organisation's unit operations, its row locked until the
 * transaction ends (an upload deciding whether to give it a window); null when there is none.
 */
export async function lockUnitOperationWindow(
  client: PoolClient,
  organizationId: number,
  unitOperationId: number,
): Promise<Pick<UnitOperationRow, 'equipment_id' | 'start_time' | 'end_time'> | null> {
  const { rows } = await client.query<Pick<UnitOperationRow, 'equipment_id' | 'start_time' | 'end_time'>>(
    'SELECT equipment_id, start_time, end_time FROM unit_operations WHERE id = $1 AND organization_id = $2 FOR UPDATE',
    [unitOperationId, organizationId],
  );
  return rows[0] ?? null;
}

/** The equipment of one of the organisation's unit operations, its row share-locked until the transaction ends; undefined when there is none. */
export async function shareLockUnitOperationEquipment(client: PoolClient, organizationId: number, unitOperationId: number): Promise<{ equipment_id: number | null } | undefined> {
  const { rows } = await client.query<{ equipment_id: number | null }>(
    'SELECT equipment_id FROM unit_operations WHERE id = $1 AND organization_id = $2 FOR SHARE', [unitOperationId, organizationId]);
  return rows[0];
}

/**
 * Locks one unit operation's row against changes of itself (not of rows that merely point at it:
 * NO KEY UPDATE leaves comments and samples free to be inserted), so that changes to its children
 * (a samples grid save) are serialised with each other.
 */
export async function lockUnitOperationForChildren(client: PoolClient, unitOperationId: number): Promise<void> {
  await client.query('SELECT id FROM unit_operations WHERE id = $1 FOR NO KEY UPDATE', [unitOperationId]);
}

/** Gives a unit operation its start and, unless it has one, its end: the window an upload found in its file. */
export async function setUnitOperationWindow(client: PoolClient, organizationId: number, unitOperationId: number, window: TimeWindow): Promise<void> {
  await client.query(
    'UPDATE unit_operations SET start_time = $3, end_time = COALESCE(end_time, $4), updated_at = now() WHERE id = $1 AND organization_id = $2',
    [unitOperationId, organizationId, new Date(window.startMs), new Date(window.endMs)],
  );
}

/**
 * Closes an open-ended unit operation at `endMs` (the last reading an upload wrote), answering the row
 * before and after; null when there is nothing to close (it has an end, no start, or starts after `endMs`).
 */
export async function closeOpenUnitOperationWindow(
  client: PoolClient,
  organizationId: number,
  unitOperationId: number,
  endMs: number,
): Promise<{ before: UnitOperationRow; after: UnitOperationRow } | null> {
  const { rows: locked } = await client.query<UnitOperationRow>(
    `SELECT ${UNIT_OPERATION_COLUMNS} FROM unit_operations WHERE id = $1 AND organization_id = $2 FOR UPDATE`, [unitOperationId, organizationId]);
  const before = locked[0];
  if (!before || before.end_time !== null || before.start_time === null || before.start_time.getTime() > endMs) return null;
  const { rows } = await client.query<UnitOperationRow>(
    `UPDATE unit_operations SET end_time = $3, updated_at = now() WHERE id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [unitOperationId, organizationId, new Date(endMs)]);
  return { before, after: rows[0]! };
}

/** Inserts the row as given; the checks that come first (run, equipment, one at a time) are api/src/unit-operations/windows.ts's. */
export async function insertUnitOperationRow(db: PoolClient, organizationId: number, values: UnitOperationValues): Promise<UnitOperationRow> {
  const { rows } = await db.query<UnitOperationRow>(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time, properties)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [organizationId, values.run_id, values.type, values.equipment_id, values.start_time, values.end_time, values.properties],
  );
  return rows[0]!;
}

export async function updateUnitOperation(
  db: PoolClient,
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
export async function deleteUnitOperation(db: PoolClient, organizationId: number, unitOperationId: number): Promise<UnitOperationRow | null> {
  const { rows } = await db.query<UnitOperationRow>(
    `DELETE FROM unit_operations WHERE id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [unitOperationId, organizationId],
  );
  return rows[0] ?? null;
}

/** Deletes the unit operations of one of the organisation's runs, returning them. */
export async function deleteRunUnitOperations(db: PoolClient, organizationId: number, runId: number): Promise<UnitOperationRow[]> {
  const { rows } = await db.query<UnitOperationRow>(
    `DELETE FROM unit_operations WHERE run_id = $1 AND organization_id = $2 RETURNING ${UNIT_OPERATION_COLUMNS}`,
    [runId, organizationId],
  );
  return rows;
}
