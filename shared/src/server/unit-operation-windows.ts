/**
 * The one-at-a-time rule of a piece of equipment, as the api (create, edit, upload) and the
 * ingest-worker (a window taken from an uploaded file) enforce it. Whoever sets a window locks the
 * equipment row first, in the transaction that saves the window: concurrent writers on the same
 * equipment then take turns, and each one's check sees the windows the others committed.
 */
import type pg from 'pg';
import { effectiveWindow, type ConflictingUnitOperation, type TimeWindow } from '../unit-operation-windows.ts';

/** Locks the equipment row until the transaction ends; false when it is not the organisation's. */
export async function lockEquipmentForWindows(client: pg.PoolClient, organizationId: number, equipmentId: number): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM equipment WHERE id = $1 AND organization_id = $2 FOR UPDATE', [equipmentId, organizationId]);
  return rowCount === 1;
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
 * start..end (an open end runs until now). Call with the equipment locked.
 */
export async function findOverlappingUnitOperation(
  db: pg.Pool | pg.PoolClient,
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
  db: pg.Pool | pg.PoolClient,
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
