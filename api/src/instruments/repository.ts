/** Instrument rows in PostgreSQL: every query the instrument routes make, and the per-equipment name rule. */
import type pg from 'pg';
import { toIsoTimestamp, type Instrument } from '@bioprocess/shared/entities';
import { INSTRUMENT_MESSAGES } from '@bioprocess/shared/errors';
import { conflict } from '../platform/http-error.ts';
import {
  listOrganizationRows, requireOrganizationRow, type OrganizationTable, type RowLock, type RowPage,
} from '../platform/organization-rows.ts';

export const INSTRUMENT_NOT_FOUND = 'Instrument not found';

export const INSTRUMENT_COLUMNS = 'id, organization_id, equipment_id, name, type, unit, alias, created_at, updated_at';

export interface InstrumentRow {
  id: number;
  organization_id: number;
  equipment_id: number;
  name: string;
  type: string;
  unit: string | null;
  alias: string | null;
  created_at: Date;
  updated_at: Date;
}

export type InstrumentValues = Pick<InstrumentRow, 'equipment_id' | 'name' | 'type' | 'unit' | 'alias'>;

const INSTRUMENTS: OrganizationTable = { name: 'instruments', columns: INSTRUMENT_COLUMNS, notFound: INSTRUMENT_NOT_FOUND };

export function toInstrument(row: InstrumentRow): Instrument {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

export async function requireInstrument(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  instrumentId: number,
  options: { lock?: RowLock } = {},
): Promise<InstrumentRow> {
  return requireOrganizationRow<InstrumentRow>(db, INSTRUMENTS, organizationId, instrumentId, options);
}

export function listInstruments(db: pg.Pool | pg.PoolClient, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<InstrumentRow>> {
  return listOrganizationRows<InstrumentRow>(db, INSTRUMENTS, organizationId, { ...page, orderBy: 'id' });
}

/** The instruments of one equipment (already checked to be the organisation's), in creation order. */
export async function listEquipmentInstruments(
  db: pg.Pool | pg.PoolClient,
  equipmentId: number,
  page: { limit: number; offset: number },
): Promise<RowPage<InstrumentRow>> {
  const [list, count] = await Promise.all([
    db.query<InstrumentRow>(
      `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE equipment_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
      [equipmentId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM instruments WHERE equipment_id = $1', [equipmentId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/** Every instrument of the organisation standing on these pieces of equipment, in creation order. */
export async function listInstrumentsOfEquipment(db: pg.Pool | pg.PoolClient, organizationId: number, equipmentIds: number[]): Promise<InstrumentRow[]> {
  if (equipmentIds.length === 0) return [];
  const { rows } = await db.query<InstrumentRow>(
    `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 AND equipment_id = ANY($2::bigint[]) ORDER BY id`,
    [organizationId, equipmentIds],
  );
  return rows;
}

export async function insertInstrument(db: pg.PoolClient, organizationId: number, values: InstrumentValues): Promise<InstrumentRow> {
  const { rows } = await db.query<InstrumentRow>(
    `INSERT INTO instruments (organization_id, equipment_id, name, type, unit, alias)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${INSTRUMENT_COLUMNS}`,
    [organizationId, values.equipment_id, values.name, values.type, values.unit, values.alias],
  );
  return rows[0]!;
}

export async function updateInstrument(db: pg.PoolClient, organizationId: number, instrumentId: number, values: InstrumentValues): Promise<InstrumentRow> {
  const { rows } = await db.query<InstrumentRow>(
    `UPDATE instruments SET equipment_id = $3, name = $4, type = $5, unit = $6, alias = $7, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
    [instrumentId, organizationId, values.equipment_id, values.name, values.type, values.unit, values.alias],
  );
  return rows[0]!;
}

/** The deleted instrument, or null when the organisation has none with that id. */
export async function deleteInstrument(db: pg.PoolClient, organizationId: number, instrumentId: number): Promise<InstrumentRow | null> {
  const { rows } = await db.query<InstrumentRow>(
    `DELETE FROM instruments WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
    [instrumentId, organizationId],
  );
  return rows[0] ?? null;
}

/** Names are unique within their equipment, compared case-insensitively. */
export async function assertInstrumentNameFree(
  db: pg.Pool | pg.PoolClient,
  equipmentId: number,
  name: string,
  exceptInstrumentId: number | null,
): Promise<void> {
  // Served by the unique index on (equipment_id, lower(name)).
  const { rowCount } = await db.query(
    'SELECT 1 FROM instruments WHERE equipment_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3',
    [equipmentId, name, exceptInstrumentId],
  );
  if (rowCount) throw conflict(INSTRUMENT_MESSAGES.duplicateName);
}

/** Two concurrent writes of the same name both pass the check; the unique index refuses the second. */
export function rethrowDuplicateName(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(INSTRUMENT_MESSAGES.duplicateName);
  throw error;
}
