/** Organisation rows in PostgreSQL: every query the organisation routes make, and the locks user management takes. */
import type { Organization } from '@bioprocess/shared/auth-contracts';
import type { Pool, PoolClient } from 'pg';

const ORGANIZATION_SELECT = `
  SELECT o.id, o.name, o.description, o.created_at, o.updated_at,
         (SELECT count(*)::int FROM users u WHERE u.organization_id = o.id) AS user_count
    FROM organizations o`;

export interface OrganizationRow {
  id: number;
  name: string;
  description: string | null;
  user_count: number;
  created_at: Date;
  updated_at: Date;
}

export function toOrganization(row: OrganizationRow): Organization {
  return { ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

/**
 * The organisation, optionally locked: 'change' for an edit of its columns (NO KEY UPDATE: rows being
 * added that reference it still pass their foreign-key checks, so an edit never waits for an upload),
 * 'delete' for its removal.
 */
export async function findOrganization(db: Pool | PoolClient, id: number, lock?: 'change' | 'delete'): Promise<OrganizationRow | null> {
  const clause = lock === 'delete' ? ' FOR UPDATE OF o' : lock === 'change' ? ' FOR NO KEY UPDATE OF o' : '';
  const { rows } = await db.query(`${ORGANIZATION_SELECT} WHERE o.id = $1${clause}`, [id]);
  return (rows[0] as OrganizationRow | undefined) ?? null;
}

/** Every organisation, by name. */
export async function listOrganizations(db: Pool | PoolClient): Promise<OrganizationRow[]> {
  const { rows } = await db.query<OrganizationRow>(`${ORGANIZATION_SELECT} ORDER BY lower(o.name), o.id`);
  return rows;
}

export async function organizationExists(db: Pool | PoolClient, id: number): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM organizations WHERE id = $1', [id]);
  return Boolean(rowCount);
}

/**
 * Locks the organisation's row: changes that could remove its last admin are serialised on it. NO KEY
 * UPDATE, not UPDATE: the key never changes here, and a full lock would also wait for every open
 * transaction that has written a row referencing the organisation (its foreign-key share lock), such as
 * a long ingest or seed, so deleting a user could stall behind an upload.
 */
export async function lockOrganization(db: PoolClient, id: number): Promise<void> {
  await db.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [id]);
}

export async function insertOrganization(db: PoolClient, values: { name: string; description: string | null }): Promise<number> {
  const { rows } = await db.query<{ id: number }>('INSERT INTO organizations (name, description) VALUES ($1, $2) RETURNING id', [values.name, values.description]);
  return rows[0]!.id;
}

export async function updateOrganization(db: PoolClient, id: number, values: { name: string; description: string | null }): Promise<void> {
  await db.query('UPDATE organizations SET name = $2, description = $3, updated_at = now() WHERE id = $1', [id, values.name, values.description]);
}

/** Deletes the organisation; its users and data go with it through the foreign keys' cascades. */
export async function deleteOrganization(db: PoolClient, id: number): Promise<void> {
  await db.query('DELETE FROM organizations WHERE id = $1', [id]);
}
