/**
 * Reading users from PostgreSQL and shaping them for the wire. The password hash never leaves this
 * module: queries select `password_hash IS NOT NULL` instead of the hash itself.
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
