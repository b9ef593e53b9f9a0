/** API key rows in PostgreSQL: the queries of key management (sign-in by key lives with authentication). */
import type { Pool, PoolClient } from 'pg';
import type { ApiKey } from '@bioprocess/shared/auth-contracts';

const API_KEY_COLUMNS = 'id, name, role, key_prefix, created_by, created_at, last_used_at, revoked_at, expires_at';

export interface ApiKeyRow {
  id: number;
  name: string;
  role: string;
  key_prefix: string;
  created_by: number | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date | null;
}

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
  };
}

/** The organisation's keys, live ones first, newest first. */
export async function listApiKeys(db: Pool | PoolClient, organizationId: number): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY revoked_at IS NOT NULL, id DESC`,
    [organizationId],
  );
  return rows;
}

/** Stores a new key by its hash; the readable prefix only helps people recognise it. */
export async function insertApiKey(
  db: PoolClient,
  values: { organizationId: number; name: string; keyHash: string; keyPrefix: string; role: string; createdBy: number | null; expiresAt: string | null },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role, created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${API_KEY_COLUMNS}`,
    [values.organizationId, values.name, values.keyHash, values.keyPrefix, values.role, values.createdBy, values.expiresAt],
  );
  return rows[0]!;
}

/** Revokes the key (a second revocation keeps the first time); null when the organisation has no such key. */
export async function revokeApiKey(db: PoolClient, organizationId: number, id: number): Promise<ApiKeyRow | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 AND organization_id = $2 RETURNING ${API_KEY_COLUMNS}`,
    [id, organizationId],
  );
  return rows[0] ?? null;
}
