/**
 * Per-account login throttling in PostgreSQL: LOGIN_MAX_FAILURES attempts that did not succeed within
 * LOGIN_WINDOW_MINUTES block the account until the oldest of them leaves the window; a successful
 * login clears the count.
 *
 * An attempt is counted before its password is verified, under a lock of the account, so concurrent
 * guesses cannot all pass the check before any of them is recorded: at most LOGIN_MAX_FAILURES
 * passwords are ever verified per window. The account is the user's id when the email names one, and
 * otherwise the email as PostgreSQL lowers it (the same lower() the user lookup uses), so answers for
 * unknown emails look the same and no Unicode case variant of an address gets a count of its own.
 */
import type { Pool } from 'pg';
import { withTransaction } from '@bioprocess/shared/server/postgres';

export interface ThrottleSettings {
  maxFailures: number;
  windowMinutes: number;
}

/** Whom a login attempt is counted against. */
export interface LoginAccount {
  /** The user the email names, or null when it names none. */
  userId: number | null;
  email: string;
}

export interface LoginAttempt {
  /** False when the account is blocked: the password must not be verified. */
  allowed: boolean;
  /** Attempts inside the window, this one included when allowed. */
  attempts: number;
}

function windowSeconds(settings: ThrottleSettings): number {
  return settings.windowMinutes * 60;
}

/** WHERE clause naming the account's rows ($1 user id, $2 email). */
const ACCOUNT_ROWS = `(CASE WHEN $1::bigint IS NULL THEN user_id IS NULL AND email = lower($2) ELSE user_id = $1 END)`;

/**
 * Counts one attempt against the account, unless it is blocked already. Answers whether the password
 * may be verified; the attempt stays counted as a failure until clearFailures() removes it.
 */
export async function takeLoginAttempt(pg: Pool, account: LoginAccount, settings: ThrottleSettings): Promise<LoginAttempt> {
  return withTransaction(pg, async (client) => {
    const lockKey = account.userId !== null ? `login:user:${account.userId}` : `login:email:`;
    // Serialises the attempts of one account; unknown emails are keyed by their lowered form in SQL.
    await client.query(
      `SELECT pg_advisory_xact_lock(hashtextextended(CASE WHEN $1::bigint IS NULL THEN $2 || lower($3) ELSE $2 END, 0))`,
      [account.userId, lockKey, account.email],
    );
    await client.query(
      `DELETE FROM login_failures WHERE ${ACCOUNT_ROWS} AND failed_at <= now() - make_interval(secs => $3)`,
      [account.userId, account.email, windowSeconds(settings)],
    );
    const { rows } = await client.query(
      `SELECT count(*)::int AS attempts FROM login_failures WHERE ${ACCOUNT_ROWS} AND failed_at > now() - make_interval(secs => $3)`,
      [account.userId, account.email, windowSeconds(settings)],
    );
    const attempts = rows[0].attempts as number;
    if (attempts >= settings.maxFailures) return { allowed: false, attempts };
    await client.query('INSERT INTO login_failures (email, user_id) VALUES (lower($1), $2)', [account.email, account.userId]);
    return { allowed: true, attempts: attempts + 1 };
  });
}

export async function clearFailures(pg: Pool, account: LoginAccount): Promise<void> {
  await pg.query(`DELETE FROM login_failures WHERE ${ACCOUNT_ROWS}`, [account.userId, account.email]);
}
