/** Instrument rows: organisation-scoped reads and the per-equipment name rule. */
import type pg from 'pg';
import { toIsoTimestamp, type Instrument } from '@bioprocess/shared/entities';
import { INSTRUMENT_MESSAGES } from '@bioprocess/shared/errors';
import { conflict } from '../platform/http-error.ts';
import { requireOrganizationRow, type RowLock } from '../platform/organization-rows.ts';

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

export function toInstrument(row: InstrumentRow): Instrument {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

export async function requireInstrument(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  instrumentId: number,
  options: { lock?: RowLock } = {},
): Promise<InstrumentRow> {
  return requireOrganizationRow<InstrumentRow>(db, { name: 'instruments', columns: INSTRUMENT_COLUMNS, notFound: INSTRUMENT_NOT_FOUND }, organizationId, instrumentId, options);
}

/** Names are unique within their equipment, compared case-insensitively (spec/02 §5). */
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
