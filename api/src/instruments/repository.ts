/**
 * Instrument rows in PostgreSQL: every query of the `instruments` table the api makes (its routes,
 * time-series ownership, uploads, exports, Analyze, audit names, equipment deletion), and the
 * per-equipment name rule. Each query is scoped by organisation, except the owners lookup, whose
 * answer is the organisation.
 */
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

/** A page of the instruments of one piece of the organisation's equipment, in creation order. */
export async function listEquipmentInstruments(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  equipmentId: number,
  page: { limit: number; offset: number },
): Promise<RowPage<InstrumentRow>> {
  const [list, count] = await Promise.all([
    db.query<InstrumentRow>(
      `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 AND equipment_id = $2 ORDER BY id LIMIT $3 OFFSET $4`,
      [organizationId, equipmentId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM instruments WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]),
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

/** The organisation's instruments among `ids`, in creation order (ids of others, or of none, are left out). */
export async function listInstrumentsById(db: pg.Pool | pg.PoolClient, organizationId: number, ids: readonly number[]): Promise<InstrumentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<InstrumentRow>(
    `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`,
    [organizationId, [...new Set(ids)]],
  );
  return rows;
}

/** Every instrument id of the organisation, in creation order. */
export async function listInstrumentIds(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM instruments WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

/** The ids of the instruments on one piece of the organisation's equipment (only those among `among` when given), in creation order. */
export async function listInstrumentIdsOnEquipment(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  equipmentId: number,
  among: readonly number[] | null = null,
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    'SELECT id FROM instruments WHERE organization_id = $1 AND equipment_id = $2 AND ($3::bigint[] IS NULL OR id = ANY($3::bigint[])) ORDER BY id',
    [organizationId, equipmentId, among === null ? null : [...among]],
  );
  return rows.map((row) => row.id);
}

/**
 * Per piece of equipment, its instrument of each type: the lowest id of a type, a stable choice when an
 * equipment has two probes of one type. Rows (equipment_id, type, id).
 */
export async function firstInstrumentOfEachType(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  equipmentIds: readonly number[],
): Promise<Array<Pick<InstrumentRow, 'equipment_id' | 'type' | 'id'>>> {
  if (equipmentIds.length === 0) return [];
  const { rows } = await db.query<Pick<InstrumentRow, 'equipment_id' | 'type' | 'id'>>(
    `SELECT DISTINCT ON (equipment_id, type) equipment_id, type, id FROM instruments
      WHERE organization_id = $1 AND equipment_id = ANY($2::bigint[]) ORDER BY equipment_id, type, id`,
    [organizationId, [...equipmentIds]],
  );
  return rows;
}

/**
 * The organisation of each of `ids` that is an instrument, in one query for any number of ids. Not
 * scoped: it answers whose each instrument is, for callers that then keep their own organisation's.
 */
export async function instrumentOrganizations(db: pg.Pool | pg.PoolClient, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  // Named: prepared once per connection (feeds run it many times a second).
  const { rows } = await db.query<{ id: number; organization_id: number }>({
    name: 'instrument-owners', text: 'SELECT id, organization_id FROM instruments WHERE id = ANY($1::bigint[])', values: [[...new Set(ids)]],
  });
  return new Map(rows.map((row) => [row.id, row.organization_id]));
}

/** The names of the instruments among `ids`, of one organisation (null: of any, for a superuser's view). */
export async function instrumentNames(db: pg.Pool | pg.PoolClient, ids: readonly number[], organizationId: number | null): Promise<Array<{ id: number; name: string }>> {
  const { rows } = await db.query<{ id: number; name: string }>(
    'SELECT id, name FROM instruments WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)', [[...ids], organizationId]);
  return rows;
}

/** How many instruments stand on one piece of the organisation's equipment. */
export async function countInstrumentsOnEquipment(db: pg.Pool | pg.PoolClient, organizationId: number, equipmentId: number): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM instruments WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]);
  return rows[0]!.total;
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
  organizationId: number,
  equipmentId: number,
  name: string,
  exceptInstrumentId: number | null,
): Promise<void> {
  // Served by the unique index on (equipment_id, lower(name)).
  const { rowCount } = await db.query(
    'SELECT 1 FROM instruments WHERE organization_id = $1 AND equipment_id = $2 AND lower(name) = lower($3) AND id IS DISTINCT FROM $4',
    [organizationId, equipmentId, name, exceptInstrumentId],
  );
  if (rowCount) throw conflict(INSTRUMENT_MESSAGES.duplicateName);
}

/** Two concurrent writes of the same name both pass the check; the unique index refuses the second. */
export function rethrowDuplicateName(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(INSTRUMENT_MESSAGES.duplicateName);
  throw error;
}
