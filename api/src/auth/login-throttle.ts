/**
 * Login throttling in PostgreSQL, shaped so that nobody but the owner can keep an account shut
 * (OWASP Authentication Cheat Sheet, "Account Lockout"; docs/security.md):
 *
 * - Per account and client address: LOGIN_MAX_FAILURES attempts that did not succeed within
 *   LOGIN_WINDOW_MINUTES block that address, for that account only, until the oldest of them leaves the
 *   window. Guesses from elsewhere never block the owner's own address.
 * - Per account, all addresses together: past LOGIN_ACCOUNT_MAX_FAILURES failures within the window,
 *   each further attempt must wait a delay that doubles with every failure beyond the threshold (from
 *   LOGIN_ACCOUNT_DELAY_MIN_SECONDS up to LOGIN_ACCOUNT_DELAY_MAX_SECONDS); earlier ones are refused unverified with their Retry-After.
 *   This slows a campaign spread over many addresses; it is never a lock, and the owner's password reset
 *   link (which clears every count) always gets in.
 *
 * An attempt is counted before its password is verified, under a lock of the account, so concurrent
 * guesses cannot all pass the checks before any of them is recorded: at most LOGIN_MAX_FAILURES
 * passwords per address, and one per delay beyond the account-wide threshold, are ever verified. The
 * account is the user's id when the email names one, and otherwise the email as PostgreSQL lowers it
 * (the same lower() the user lookup uses), so answers for unknown emails look the same and no Unicode
 * case variant of an address gets a count of its own.
 */
import type { Pool, PoolClient } from 'pg';
import { cappedExponentialDelay } from '@bioprocess/shared/capped-backoff';
import { withTransaction } from '@bioprocess/shared/server/postgres';

export interface ThrottleSettings {
  /** Failures from one address that block that address for the account. */
  maxFailures: number;
  windowMinutes: number;
  /** Failures from all addresses past which the progressive delay applies. */
  accountMaxFailures: number;
  accountDelayMinSeconds: number;
  accountDelayMaxSeconds: number;
}

/** Whom a login attempt is counted against. */
export interface LoginAccount {
  /** The user the email names, or null when it names none. */
  userId: number | null;
  email: string;
}

export type LoginAttempt =
  /** The password may be verified; `addressAttempts` counts this address's attempts in the window, this one included. */
  | { allowed: true; addressAttempts: number }
  /** Refused unverified: this address is blocked for the account, or the account-wide delay has not passed. */
  | { allowed: false; reason: 'address_blocked' | 'account_delayed'; retryAfterSeconds: number };

/** The wait before the next attempt once `failuresBeyondThreshold` failures went past the account-wide threshold. */
export function accountDelaySeconds(failuresBeyondThreshold: number, settings: Pick<ThrottleSettings, 'accountDelayMinSeconds' | 'accountDelayMaxSeconds'>): number {
  return cappedExponentialDelay(failuresBeyondThreshold + 1, settings.accountDelayMinSeconds, settings.accountDelayMaxSeconds);
}

function windowSeconds(settings: ThrottleSettings): number {
  return settings.windowMinutes * 60;
}

/** WHERE clause naming the account's rows ($1 user id, $2 email). */
const ACCOUNT_ROWS = `(CASE WHEN $1::bigint IS NULL THEN user_id IS NULL AND email = lower($2) ELSE user_id = $1 END)`;

async function lockAccount(client: PoolClient, account: LoginAccount): Promise<void> {
  const lockKey = account.userId !== null ? `login:user:${account.userId}` : `login:email:`;
  // Serialises the attempts of one account; unknown emails are keyed by their lowered form in SQL.
  await client.query(
    `SELECT pg_advisory_xact_lock(hashtextextended(CASE WHEN $1::bigint IS NULL THEN $2 || lower($3) ELSE $2 END, 0))`,
    [account.userId, lockKey, account.email],
  );
}

/**
 * Counts one attempt from `clientAddress` against the account, unless the address is blocked for it
 * or the account-wide delay has not passed. The attempt stays counted as a failure until
 * clearFailures() removes it.
 */
export async function takeLoginAttempt(pg: Pool, account: LoginAccount, clientAddress: string, settings: ThrottleSettings): Promise<LoginAttempt> {
  return withTransaction(pg, async (client) => {
    await lockAccount(client, account);
    await client.query(
      `DELETE FROM login_failures WHERE ${ACCOUNT_ROWS} AND failed_at <= now() - make_interval(secs => $3)`,
      [account.userId, account.email, windowSeconds(settings)],
    );
    const { rows } = await client.query(
      `SELECT count(*) FILTER (WHERE client_address = $3)::int AS address_failures,
              count(*)::int AS account_failures,
              ceil(extract(epoch FROM min(failed_at) FILTER (WHERE client_address = $3) + make_interval(secs => $4) - now()))::int AS address_seconds_left,
              extract(epoch FROM now() - max(failed_at))::float8 AS seconds_since_last
         FROM login_failures WHERE ${ACCOUNT_ROWS}`,
      [account.userId, account.email, clientAddress, windowSeconds(settings)],
    );
    const counts = rows[0] as { address_failures: number; account_failures: number; address_seconds_left: number | null; seconds_since_last: number | null };
    if (counts.address_failures >= settings.maxFailures) {
      return { allowed: false, reason: 'address_blocked', retryAfterSeconds: Math.max(1, counts.address_seconds_left ?? 1) };
    }
    if (counts.account_failures >= settings.accountMaxFailures) {
      const delay = accountDelaySeconds(counts.account_failures - settings.accountMaxFailures, settings);
      const wait = delay - (counts.seconds_since_last ?? delay);
      if (wait > 0) return { allowed: false, reason: 'account_delayed', retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
    }
    await client.query(
      'INSERT INTO login_failures (email, user_id, client_address) VALUES (lower($1), $2, $3)',
      [account.email, account.userId, clientAddress],
    );
    return { allowed: true, addressAttempts: counts.address_failures + 1 };
  });
}

/**
 * After a successful sign-in: forgets that address's failures for the account. Other addresses'
 * failures stay counted, so an owner signing in does not hand a guesser a fresh budget.
 */
export async function clearAddressFailures(pg: Pool, account: LoginAccount, clientAddress: string): Promise<void> {
  await pg.query(`DELETE FROM login_failures WHERE ${ACCOUNT_ROWS} AND client_address = $3`, [account.userId, account.email, clientAddress]);
}

/** After a password reset through the mailed link: the owner proved control of the mailbox, every count goes. */
export async function clearAllFailures(db: Pool | PoolClient, userId: number): Promise<void> {
  await db.query('DELETE FROM login_failures WHERE user_id = $1', [userId]);
}
