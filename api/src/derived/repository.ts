/** Derived parameter rows in PostgreSQL: the current formulas, their versions, and the library copies. */
import type pg from 'pg';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import type { DerivedParameter, DerivedParameterVersion } from '@bioprocess/shared/derived/contracts';
import { conflict } from '../platform/http-error.ts';
import { requireOrganizationRow, type OrganizationTable, type RowLock } from '../platform/organization-rows.ts';
import type { SampleValueMode } from '@bioprocess/shared/derived/sample-values';
import { DERIVED_LIBRARY } from './library.ts';

export const DERIVED_PARAMETER_NOT_FOUND = 'Derived parameter not found';
export const DERIVED_NAME_TAKEN = 'A derived parameter with this name already exists';

const COLUMNS = 'id, organization_id, name, unit, expression, description, sample_values, library_key, version, created_by, created_at, updated_at';

export interface DerivedParameterRow {
  id: number;
  organization_id: number;
  name: string;
  unit: string | null;
  expression: string;
  description: string | null;
  sample_values: SampleValueMode;
  library_key: string | null;
  version: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export type DerivedParameterValues = Pick<DerivedParameterRow, 'name' | 'unit' | 'expression' | 'description' | 'sample_values'>;

const TABLE: OrganizationTable = { name: 'derived_parameters', columns: COLUMNS, notFound: DERIVED_PARAMETER_NOT_FOUND };

export function toDerivedParameter(row: DerivedParameterRow): DerivedParameter {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

/** Gives the organisation its copies of the built-in library, once; later deletions and edits stay. */
export async function ensureLibraryCopies(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<void> {
  // One statement: concurrent first reads cannot copy twice (the flag flips in the same statement).
  await db.query(
    `WITH first AS (
       UPDATE organizations SET derived_library_seeded = true WHERE id = $1 AND NOT derived_library_seeded RETURNING id
     ), inserted AS (
       INSERT INTO derived_parameters (organization_id, name, unit, expression, description, library_key)
       SELECT first.id, f.name, f.unit, f.expression, f.description, f.key
         FROM first, jsonb_to_recordset($2::jsonb) AS f(key text, name text, unit text, expression text, description text)
       ON CONFLICT DO NOTHING
       RETURNING id, name, unit, expression, description
     )
     INSERT INTO derived_parameter_versions (derived_parameter_id, version, name, unit, expression, description)
     SELECT id, 1, name, unit, expression, description FROM inserted`,
    [organizationId, JSON.stringify(DERIVED_LIBRARY)],
  );
}

export async function listDerivedParameters(db: pg.Pool | pg.PoolClient, organizationId: number): Promise<DerivedParameterRow[]> {
  const { rows } = await db.query<DerivedParameterRow>(
    `SELECT ${COLUMNS} FROM derived_parameters WHERE organization_id = $1 ORDER BY lower(name), id`,
    [organizationId],
  );
  return rows;
}

export function requireDerivedParameter(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  id: number,
  options: { lock?: RowLock } = {},
): Promise<DerivedParameterRow> {
  return requireOrganizationRow<DerivedParameterRow>(db, TABLE, organizationId, id, options);
}

async function recordVersion(db: pg.PoolClient, row: DerivedParameterRow, userId: number | null): Promise<void> {
  await db.query(
    `INSERT INTO derived_parameter_versions (derived_parameter_id, version, name, unit, expression, description, sample_values, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [row.id, row.version, row.name, row.unit, row.expression, row.description, row.sample_values, userId],
  );
}

/** A second parameter of the same name (compared case-insensitively) is refused by the unique index: 409. */
export function rethrowNameTaken(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(DERIVED_NAME_TAKEN);
  throw error;
}

export async function insertDerivedParameter(
  db: pg.PoolClient,
  organizationId: number,
  values: DerivedParameterValues,
  userId: number | null,
): Promise<DerivedParameterRow> {
  const { rows } = await db.query<DerivedParameterRow>(
    `INSERT INTO derived_parameters (organization_id, name, unit, expression, description, sample_values, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [organizationId, values.name, values.unit, values.expression, values.description, values.sample_values, userId],
  );
  await recordVersion(db, rows[0]!, userId);
  return rows[0]!;
}

/** Writes the new values as the next version. */
export async function updateDerivedParameter(
  db: pg.PoolClient,
  existing: DerivedParameterRow,
  values: DerivedParameterValues,
  userId: number | null,
): Promise<DerivedParameterRow> {
  const { rows } = await db.query<DerivedParameterRow>(
    `UPDATE derived_parameters SET name = $3, unit = $4, expression = $5, description = $6, sample_values = $7, version = version + 1, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${COLUMNS}`,
    [existing.id, existing.organization_id, values.name, values.unit, values.expression, values.description, values.sample_values],
  );
  await recordVersion(db, rows[0]!, userId);
  return rows[0]!;
}

export async function deleteDerivedParameter(db: pg.PoolClient, organizationId: number, id: number): Promise<void> {
  await db.query('DELETE FROM derived_parameters WHERE id = $1 AND organization_id = $2', [id, organizationId]);
}

export async function listVersions(db: pg.Pool | pg.PoolClient, derivedParameterId: number): Promise<DerivedParameterVersion[]> {
  const { rows } = await db.query<DerivedParameterVersion & { created_at: Date }>(
    `SELECT version, name, unit, expression, description, sample_values, created_by, created_at
       FROM derived_parameter_versions WHERE derived_parameter_id = $1 ORDER BY version DESC`,
    [derivedParameterId],
  );
  return rows.map((row) => ({ ...row, created_at: toIsoTimestamp(row.created_at) }));
}
