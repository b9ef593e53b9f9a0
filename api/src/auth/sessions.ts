/**
 * Session tokens (`bps_...`): created at login/signup, expire after SESSION_TTL_HOURS, revoked on
 * logout and password change, refused once unused for longer than the organisation's inactivity
 * limit (session-policy.ts). Each session remembers the browser (user agent) and the address it was
 * last used from, so a user can recognise and end their own sessions.
 */
import type { Pool, PoolClient } from 'pg';
import { toIsoTimestamp } from '@bioprocess/shared/entities';
import type { UserSession } from '@bioprocess/shared/run-review';
import { SESSION_TOKEN_PREFIX } from './principal.ts';
import { issueToken } from './tokens.ts';

type Queryable = Pool | PoolClient;

/** Last use is recorded at most this often per session: one write per session and half minute, not per request. */
export const SESSION_TOUCH_SECONDS = 30;

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

/** Records a use: when the last one is older than SESSION_TOUCH_SECONDS, or the browser is not known yet. */
export async function touchSession(db: Queryable, sessionId: number, userAgent: string | null, ip: string | null): Promise<void> {
  await db.query(
    `UPDATE sessions SET last_used_at = now(), user_agent = coalesce(user_agent, $2), ip = coalesce($3, ip)
      WHERE id = $1 AND (last_used_at < now() - make_interval(secs => $4) OR user_agent IS NULL)`,
    [sessionId, userAgent === null ? null : userAgent.slice(0, 400), ip, SESSION_TOUCH_SECONDS],
  );
}

interface SessionRow { id: number; user_agent: string | null; ip: string | null; created_at: Date; last_used_at: Date; expires_at: Date }

/** The user's live sessions, most recently used first. */
export async function listUserSessions(db: Queryable, userId: number, currentSessionId: number | null): Promise<UserSession[]> {
  const { rows } = await db.query<SessionRow>(
    `SELECT id, user_agent, ip, created_at, last_used_at, expires_at FROM sessions
      WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY last_used_at DESC, id DESC`,
    [userId],
  );
  return rows.map((row) => ({
    id: row.id, current: row.id === currentSessionId, user_agent: row.user_agent, ip: row.ip,
    signed_in_at: toIsoTimestamp(row.created_at), last_used_at: toIsoTimestamp(row.last_used_at), expires_at: toIsoTimestamp(row.expires_at),
  }));
}

/** Ends one of the user's sessions; false when it is not theirs or already ended. */
export async function revokeUserSession(db: Queryable, userId: number, sessionId: number): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE sessions SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > now()', [sessionId, userId]);
  return (rowCount ?? 0) > 0;
}

/** Ends every session of the user but one; answers how many. */
export async function revokeOtherSessions(db: Queryable, userId: number, keepSessionId: number): Promise<number> {
  const { rowCount } = await db.query(
    'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL', [userId, keepSessionId]);
  return rowCount ?? 0;
}
