/**
 * User rows in PostgreSQL: the queries of user management and sign-in, and the wire form. The password
 * hash never leaves this module: queries select `password_hash IS NOT NULL` instead of the hash itself.
 */
import type { Pool, PoolClient } from 'pg';
import type { AuthUser, User } from '@bioprocess/shared/auth-contracts';

type Queryable = Pool | PoolClient;

export interface UserRow {
  id: number;
  email: string;
  name: string;
  role: string;
  organization_id: number;
  organization_name: string | null;
  superuser: boolean;
  has_password: boolean;
  created_at: Date;
}

export const USER_SELECT = `
  SELECT u.id, u.email, u.name, u.role, u.organization_id, o.name AS organization_name, u.superuser,
         (u.password_hash IS NOT NULL) AS has_password, u.created_at
    FROM users u LEFT JOIN organizations o ON o.id = u.organization_id`;

export async function findUserById(db: Queryable, id: number, options: { forUpdate?: boolean } = {}): Promise<UserRow | null> {
  const { rows } = await db.query(`${USER_SELECT} WHERE u.id = $1${options.forUpdate ? ' FOR UPDATE OF u' : ''}`, [id]);
  return (rows[0] as UserRow | undefined) ?? null;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | null> {
  const { rows } = await db.query(`${USER_SELECT} WHERE lower(u.email) = lower($1)`, [email]);
  return (rows[0] as UserRow | undefined) ?? null;
}

/** The users of one organisation, or of all of them (null), by organisation then email. */
export async function listUsers(db: Queryable, organizationId: number | null): Promise<UserRow[]> {
  const { rows } = await db.query<UserRow>(
    `${USER_SELECT} WHERE ($1::bigint IS NULL OR u.organization_id = $1) ORDER BY u.organization_id, lower(u.email)`,
    [organizationId],
  );
  return rows;
}

/** A user who signed up: an admin of their new organisation, with a password. */
export async function insertSignedUpAdmin(db: PoolClient, values: { email: string; name: string; passwordHash: string; organizationId: number }): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO users (email, name, password_hash, organization_id, role)
     VALUES ($1, $2, $3, $4, 'admin') RETURNING id`,
    [values.email, values.name, values.passwordHash, values.organizationId],
  );
  return rows[0]!.id;
}

/** The stored password hash, read only to verify a sign-in; null for a user without a password. */
export async function readPasswordHash(db: Queryable, userId: number): Promise<string | null> {
  const { rows } = await db.query<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = $1', [userId]);
  return rows[0]?.password_hash ?? null;
}

export async function setPasswordHash(db: PoolClient, userId: number, passwordHash: string): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [userId, passwordHash]);
}

export async function setUserName(db: PoolClient, userId: number, name: string): Promise<void> {
  await db.query('UPDATE users SET name = $2, updated_at = now() WHERE id = $1', [userId, name]);
}

export async function setUserOrganization(db: PoolClient, userId: number, organizationId: number): Promise<void> {
  await db.query('UPDATE users SET organization_id = $2, updated_at = now() WHERE id = $1', [userId, organizationId]);
}

/** A user who accepted an invitation: a member of the inviting organisation with the invited role. */
export async function insertInvitedMember(
  db: PoolClient,
  values: { email: string; name: string; passwordHash: string; organizationId: number; role: string },
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO users (email, name, password_hash, organization_id, role) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [values.email, values.name, values.passwordHash, values.organizationId, values.role],
  );
  return rows[0]!.id;
}

export async function setUserRole(db: PoolClient, userId: number, role: string): Promise<void> {
  await db.query('UPDATE users SET role = $2, updated_at = now() WHERE id = $1', [userId, role]);
}

export async function setUserSuperuser(db: PoolClient, userId: number, superuser: boolean): Promise<void> {
  await db.query('UPDATE users SET superuser = $2, updated_at = now() WHERE id = $1', [userId, superuser]);
}

export async function deleteUser(db: PoolClient, userId: number): Promise<void> {
  await db.query('DELETE FROM users WHERE id = $1', [userId]);
}

/** Every superuser's id, locked: changes that could remove the last superuser are serialised on these rows. */
export async function lockSuperusers(db: PoolClient): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>('SELECT id FROM users WHERE superuser ORDER BY id FOR UPDATE');
  return rows.map((row) => row.id);
}

/** How many admins the organisation has besides this user. */
export async function countOtherAdmins(db: PoolClient, organizationId: number, userId: number): Promise<number> {
  const { rows } = await db.query<{ admins: number }>(
    `SELECT count(*)::int AS admins FROM users WHERE organization_id = $1 AND role = 'admin' AND id <> $2`,
    [organizationId, userId],
  );
  return rows[0]!.admins;
}

export function toAuthUser(row: UserRow): AuthUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    roles: [row.role],
    organization_id: row.organization_id,
    superuser: row.superuser,
  };
}

export function toUser(row: UserRow): User {
  return {
    ...toAuthUser(row),
    organization_name: row.organization_name,
    has_password: row.has_password,
    created_at: row.created_at.toISOString(),
  };
}

/** The fields an audit event records for a user (no hash, no tokens). */
export function auditUserFields(row: UserRow): Record<string, unknown> {
  return {
    email: row.email,
    name: row.name,
    role: row.role,
    organization_id: row.organization_id,
    superuser: row.superuser,
  };
}
