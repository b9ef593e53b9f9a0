/** Instrument ownership and lookups in PostgreSQL, always scoped by organisation. */
import type { Pool } from '@bioprocess/shared/server/postgres';
import { notFound } from '../platform/http-error.ts';

/** The subset of `ids` that are instruments of the organisation (one query for any number of ids). */
export async function ownedInstrumentIds(pool: Pool, organizationId: number, ids: Iterable<number>): Promise<Set<number>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Set();
  const { rows } = await pool.query<{ id: number }>(
    'SELECT id FROM instruments WHERE organization_id = $1 AND id = ANY($2::bigint[])',
    [organizationId, wanted],
  );
  return new Set(rows.map((row) => row.id));
}

/** Every instrument id of the organisation. */
export async function organizationInstrumentIds(pool: Pool, organizationId: number): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM instruments WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

export async function instrumentsOfEquipment(pool: Pool, organizationId: number, equipmentId: number): Promise<number[]> {
  const equipment = await pool.query('SELECT 1 FROM equipment WHERE id = $1 AND organization_id = $2', [equipmentId, organizationId]);
  if (!equipment.rowCount) throw notFound('Equipment not found');
  const { rows } = await pool.query<{ id: number }>(
    'SELECT id FROM instruments WHERE organization_id = $1 AND equipment_id = $2 ORDER BY id',
    [organizationId, equipmentId],
  );
  return rows.map((row) => row.id);
}

export interface UnitOperationWindow {
  id: number;
  equipmentId: number | null;
  startMs: number | null;
  endMs: number | null;
}

export async function findUnitOperation(pool: Pool, organizationId: number, unitOperationId: number): Promise<UnitOperationWindow> {
  const { rows } = await pool.query(
    'SELECT id, equipment_id, start_time, end_time FROM unit_operations WHERE id = $1 AND organization_id = $2',
    [unitOperationId, organizationId],
  );
  const row = rows[0];
  if (!row) throw notFound('Unit operation not found');
  return {
    id: row.id,
    equipmentId: row.equipment_id,
    startMs: row.start_time ? (row.start_time as Date).getTime() : null,
    endMs: row.end_time ? (row.end_time as Date).getTime() : null,
  };
}
