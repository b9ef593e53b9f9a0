/**
 * The one-at-a-time rule of a piece of equipment, as the api (create, edit, upload) and the
 * ingest-worker (a window taken from an uploaded file) enforce it. Whoever sets a window locks the
 * equipment row first, in the transaction that saves the window: concurrent writers on the same
 * equipment then take turns, and each one's check (findOverlappingUnitOperation, in
 * server/unit-operations-repository.ts with the table's other statements) sees the windows the
 * others committed.
 */
import type pg from 'pg';

/** Locks the equipment row until the transaction ends; false when it is not the organisation's. */
export async function lockEquipmentForWindows(client: pg.PoolClient, organizationId: number, equipmentId: number): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM equipment WHERE id = $1 AND organization_id = $2 FOR UPDATE', [equipmentId, organizationId]);
  return rowCount === 1;
}
