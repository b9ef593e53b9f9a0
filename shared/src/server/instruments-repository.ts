/**
 * The `instruments` table in PostgreSQL: every statement on it, for the api (its routes, time-series
 * ownership, uploads, exports, Analyze, audit names, equipment deletion, the demo seed, the review
 * guard, a run's signed content, alert evaluation and the alert list's names) and the
 * ingest-worker (the alias an upload gives, audit names). Each is scoped by organisation, except the
 * owners lookup, whose answer is the organisation, and the audit names of a superuser's view. What
 * the api answers over HTTP (404, 409, the wire form) stays in api/src/instruments/repository.ts.
 */
import { drawsAsStepsByDefault } from '../entities.ts';
import type { PoolClient, Queryable } from './postgres.ts';

export const INSTRUMENT_COLUMNS = 'id, organization_id, equipment_id, name, type, unit, alias, draw_as_steps, created_at, updated_at';

/** For the organisation-scoped lookups by id that every metadata table shares (api/src/platform/organization-rows.ts). */
export const INSTRUMENTS_TABLE = { name: 'instruments', columns: INSTRUMENT_COLUMNS } as const;

export interface InstrumentRow {
  id: number;
  organization_id: number;
  equipment_id: number;
  name: string;
  type: string;
  unit: string | null;
  alias: string | null;
  draw_as_steps: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Without `draw_as_steps`, an insert takes the type's default and an update keeps the stored choice. */
export type InstrumentValues = Pick<InstrumentRow, 'equipment_id' | 'name' | 'type' | 'unit' | 'alias'> & { draw_as_steps?: boolean };

/** A page of the instruments of one piece of the organisation's equipment, in creation order. */
export async function listEquipmentInstruments(
  db: Queryable,
  organizationId: number,
  equipmentId: number,
  page: { limit: number; offset: number },
): Promise<{ rows: InstrumentRow[]; total: number }> {
  const [list, count] = await Promise.all([
    db.query<InstrumentRow>(
      `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 AND equipment_id = $2 ORDER BY id LIMIT $3 OFFSET $4`,
      [organizationId, equipmentId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM instruments WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]),
  ]);
  return { rows: list.rows, total: count.rows[0]!.total };
}

/**
 * Every instrument of the organisation standing on these pieces of equipment, in creation order; only
 * those of `ofType` when given, compared case-insensitively as PostgreSQL lowers text.
 */
export async function listInstrumentsOfEquipment(
  db: Queryable,
  organizationId: number,
  equipmentIds: readonly number[],
  ofType: string | null = null,
): Promise<InstrumentRow[]> {
  if (equipmentIds.length === 0) return [];
  const { rows } = await db.query<InstrumentRow>(
    `SELECT ${INSTRUMENT_COLUMNS} FROM instruments
      WHERE organization_id = $1 AND equipment_id = ANY($2::bigint[]) AND ($3::text IS NULL OR lower(type) = lower($3)) ORDER BY id`,
    [organizationId, [...equipmentIds], ofType],
  );
  return rows;
}

/** The equipment the organisation's instruments among `ids` stand on, each piece once (ids of others, or of none, are left out). */
export async function equipmentIdsOfInstruments(db: Queryable, organizationId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ equipment_id: number }>(
    'SELECT equipment_id FROM instruments WHERE organization_id = $1 AND id = ANY($2::bigint[])', [organizationId, [...ids]]);
  return [...new Set(rows.map((row) => row.equipment_id))];
}

/** The organisation's instruments among `ids`, in creation order (ids of others, or of none, are left out). */
export async function listInstrumentsById(db: Queryable, organizationId: number, ids: readonly number[]): Promise<InstrumentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<InstrumentRow>(
    `SELECT ${INSTRUMENT_COLUMNS} FROM instruments WHERE organization_id = $1 AND id = ANY($2::bigint[]) ORDER BY id`,
    [organizationId, [...new Set(ids)]],
  );
  return rows;
}

/** Every instrument id of the organisation, in creation order. */
export async function listInstrumentIds(db: Queryable, organizationId: number): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM instruments WHERE organization_id = $1 ORDER BY id', [organizationId]);
  return rows.map((row) => row.id);
}

/** The ids of the instruments on one piece of the organisation's equipment (only those among `among` when given), in creation order. */
export async function listInstrumentIdsOnEquipment(
  db: Queryable,
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
  db: Queryable,
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
export async function instrumentOrganizations(db: Queryable, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  // Named: prepared once per connection (feeds run it many times a second).
  const { rows } = await db.query<{ id: number; organization_id: number }>({
    name: 'instrument-owners', text: 'SELECT id, organization_id FROM instruments WHERE id = ANY($1::bigint[])', values: [[...new Set(ids)]],
  });
  return new Map(rows.map((row) => [row.id, row.organization_id]));
}

/** The names of the instruments among `ids`, of one organisation (null: of any, for a superuser's view). */
export async function instrumentNames(db: Queryable, ids: readonly number[], organizationId: number | null): Promise<Array<{ id: number; name: string }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: number; name: string }>(
    'SELECT id, name FROM instruments WHERE id = ANY($1::bigint[]) AND ($2::bigint IS NULL OR organization_id = $2)', [[...ids], organizationId]);
  return rows;
}

/** How many instruments stand on one piece of the organisation's equipment. */
export async function countInstrumentsOnEquipment(db: Queryable, organizationId: number, equipmentId: number): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM instruments WHERE organization_id = $1 AND equipment_id = $2', [organizationId, equipmentId]);
  return rows[0]!.total;
}

/**
 * Whether another instrument of the equipment (not `exceptInstrumentId`) has the name, compared
 * case-insensitively: names are unique within their equipment.
 */
export async function instrumentNameTaken(
  db: Queryable,
  organizationId: number,
  equipmentId: number,
  name: string,
  exceptInstrumentId: number | null,
): Promise<boolean> {
  // Served by the unique index on (equipment_id, lower(name)).
  const { rowCount } = await db.query(
    'SELECT 1 FROM instruments WHERE organization_id = $1 AND equipment_id = $2 AND lower(name) = lower($3) AND id IS DISTINCT FROM $4',
    [organizationId, equipmentId, name, exceptInstrumentId],
  );
  return (rowCount ?? 0) > 0;
}

export async function insertInstrument(db: PoolClient, organizationId: number, values: InstrumentValues): Promise<InstrumentRow> {
  const { rows } = await db.query<InstrumentRow>(
    `INSERT INTO instruments (organization_id, equipment_id, name, type, unit, alias, draw_as_steps)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${INSTRUMENT_COLUMNS}`,
    [organizationId, values.equipment_id, values.name, values.type, values.unit, values.alias, values.draw_as_steps ?? drawsAsStepsByDefault(values.type)],
  );
  return rows[0]!;
}

export async function updateInstrument(db: PoolClient, organizationId: number, instrumentId: number, values: InstrumentValues): Promise<InstrumentRow> {
  const { rows } = await db.query<InstrumentRow>(
    `UPDATE instruments SET equipment_id = $3, name = $4, type = $5, unit = $6, alias = $7,
        draw_as_steps = coalesce($8, draw_as_steps), updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
    [instrumentId, organizationId, values.equipment_id, values.name, values.type, values.unit, values.alias, values.draw_as_steps ?? null],
  );
  return rows[0]!;
}

/** The alias a CSV upload gives an instrument (its column); an instrument of another organisation is left alone. */
export async function setInstrumentAlias(db: Queryable, organizationId: number, instrumentId: number, alias: string): Promise<void> {
  await db.query('UPDATE instruments SET alias = $1, updated_at = now() WHERE id = $2 AND organization_id = $3', [alias, instrumentId, organizationId]);
}

/** The deleted instrument, or null when the organisation has none with that id. */
export async function deleteInstrument(db: PoolClient, organizationId: number, instrumentId: number): Promise<InstrumentRow | null> {
  const { rows } = await db.query<InstrumentRow>(
    `DELETE FROM instruments WHERE id = $1 AND organization_id = $2 RETURNING ${INSTRUMENT_COLUMNS}`,
    [instrumentId, organizationId],
  );
  return rows[0] ?? null;
}
