/** Session tokens (`bps_...`): created at login/signup, expire after SESSION_TTL_HOURS, revoked on logout and password change. */
import type { Pool, PoolClient } from 'pg';
import { SESSION_TOKEN_PREFIX } from './principal.ts';
import { issueToken } from './tokens.ts';

type Queryable = Pool | PoolClient;

export async function createSession(db: Queryable, userId: number, ttlHours: number): Promise<string> {
  const { token, tokenHash } = issueToken(SESSION_TOKEN_PREFIX);
  // Housekeeping on the way: the user's dead sessions are removed, so the table stays bounded per user.
  await db.query('DELETE FROM sessions WHERE user_id = $1 AND (expires_at <= now() OR revoked_at IS NOT NULL)', [userId]);
  await db.query(
    `INSERT INTO sessions (token_hash, user_id, expires_at)
     VALUES ($1, $2, now() + make_interval(secs => $3))`,
    [tokenHash, userId, ttlHours * 3600],
  );
  return token;
}

export async function revokeSession(db: Queryable, sessionId: number): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
}

export async function revokeAllSessions(db: Queryable, userId: number): Promise<number> {
  const { rowCount } = await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  return rowCount ?? 0;
}
