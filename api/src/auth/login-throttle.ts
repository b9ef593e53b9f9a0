/**
 * Per-account login throttling in PostgreSQL: LOGIN_MAX_FAILURES failures within LOGIN_WINDOW_MINUTES
 * block the account until the oldest of them leaves the window; a successful login clears the count.
 * Keyed by the lower-cased email whether or not the account exists, so the answers never tell.
 */
import type { Pool } from 'pg';

export interface ThrottleSettings {
  maxFailures: number;
  windowMinutes: number;
}

function windowSeconds(settings: ThrottleSettings): number {
  return settings.windowMinutes * 60;
}

export async function recentFailures(pg: Pool, email: string, settings: ThrottleSettings): Promise<number> {
  const { rows } = await pg.query(
    `SELECT count(*)::int AS failures FROM login_failures
      WHERE email = $1 AND failed_at > now() - make_interval(secs => $2)`,
    [email, windowSeconds(settings)],
  );
  return rows[0].failures as number;
}

export async function isBlocked(pg: Pool, email: string, settings: ThrottleSettings): Promise<boolean> {
  return (await recentFailures(pg, email, settings)) >= settings.maxFailures;
}

/** Records a failure and answers the number of failures now inside the window. */
export async function recordFailure(pg: Pool, email: string, settings: ThrottleSettings): Promise<number> {
  // Old rows of this account are pruned on the way so the table stays small.
  await pg.query(
    `DELETE FROM login_failures WHERE email = $1 AND failed_at <= now() - make_interval(secs => $2)`,
    [email, windowSeconds(settings)],
  );
  await pg.query('INSERT INTO login_failures (email) VALUES ($1)', [email]);
  return recentFailures(pg, email, settings);
}

export async function clearFailures(pg: Pool, email: string): Promise<void> {
  await pg.query('DELETE FROM login_failures WHERE email = $1', [email]);
}
