/** The statements on an organisation's own instrument types and units; every one scoped by the organisation. */
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { INSTRUMENT_TYPES } from '@bioprocess/shared/enums';
import type { CatalogueTypeEntry, CatalogueUnitEntry } from '@bioprocess/shared/instruments/catalogue';

interface TypeRow { id: string; name: string; default_unit: string | null; created_at: Date }
interface UnitRow { id: string; code: string; label: string; created_at: Date }

const toType = (row: TypeRow): CatalogueTypeEntry => ({
  id: Number(row.id), name: row.name, default_unit: row.default_unit, created_at: row.created_at.toISOString(),
});
const toUnit = (row: UnitRow): CatalogueUnitEntry => ({
  id: Number(row.id), code: row.code, label: row.label, created_at: row.created_at.toISOString(),
});

export async function listCatalogueTypes(db: Queryable, organizationId: number): Promise<CatalogueTypeEntry[]> {
  const { rows } = await db.query<TypeRow>(
    'SELECT id, name, default_unit, created_at FROM instrument_catalogue_types WHERE organization_id = $1 ORDER BY lower(name), id', [organizationId]);
  return rows.map(toType);
}

export async function listCatalogueUnits(db: Queryable, organizationId: number): Promise<CatalogueUnitEntry[]> {
  const { rows } = await db.query<UnitRow>(
    'SELECT id, code, label, created_at FROM instrument_catalogue_units WHERE organization_id = $1 ORDER BY code, id', [organizationId]);
  return rows.map(toUnit);
}

export async function insertCatalogueType(db: Queryable, organizationId: number, name: string, defaultUnit: string | null): Promise<CatalogueTypeEntry> {
  const { rows } = await db.query<TypeRow>(
    `INSERT INTO instrument_catalogue_types (organization_id, name, default_unit) VALUES ($1, $2, $3)
     RETURNING id, name, default_unit, created_at`, [organizationId, name, defaultUnit]);
  return toType(rows[0]!);
}

export async function insertCatalogueUnit(db: Queryable, organizationId: number, code: string, label: string): Promise<CatalogueUnitEntry> {
  const { rows } = await db.query<UnitRow>(
    'INSERT INTO instrument_catalogue_units (organization_id, code, label) VALUES ($1, $2, $3) RETURNING id, code, label, created_at',
    [organizationId, code, label]);
  return toUnit(rows[0]!);
}

export async function deleteCatalogueType(db: Queryable, organizationId: number, id: number): Promise<CatalogueTypeEntry | null> {
  const { rows } = await db.query<TypeRow>(
    'DELETE FROM instrument_catalogue_types WHERE organization_id = $1 AND id = $2 RETURNING id, name, default_unit, created_at', [organizationId, id]);
  return rows[0] ? toType(rows[0]) : null;
}

export async function deleteCatalogueUnit(db: Queryable, organizationId: number, id: number): Promise<CatalogueUnitEntry | null> {
  const { rows } = await db.query<UnitRow>(
    'DELETE FROM instrument_catalogue_units WHERE organization_id = $1 AND id = $2 RETURNING id, code, label, created_at', [organizationId, id]);
  return rows[0] ? toUnit(rows[0]) : null;
}

/**
 * The type as the organisation spells it when an instrument may take it (a spec type or one of its
 * own, compared case-insensitively), else null. Reading under a share lock keeps a concurrent
 * removal of the type from passing unseen.
 */
export async function resolveInstrumentType(db: Queryable, organizationId: number, type: string): Promise<string | null> {
  const builtIn = INSTRUMENT_TYPES.find((name) => name === type) ?? INSTRUMENT_TYPES.find((name) => name.toLowerCase() === type.toLowerCase());
  if (builtIn) return builtIn;
  const { rows } = await db.query<{ name: string }>(
    'SELECT name FROM instrument_catalogue_types WHERE organization_id = $1 AND lower(name) = lower($2) FOR SHARE', [organizationId, type]);
  return rows[0]?.name ?? null;
}
