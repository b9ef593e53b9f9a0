/**
 * Password reset links: a single-use token stored as its sha256 hash. (Invitations have their own
 * table and links, users/invitations.ts; 'invite' links issued before them still set a password here.)
 */
import type { Pool, PoolClient } from 'pg';
import type { AppDeps } from '../platform/deps.ts';
import { sendMail } from '../mail/mailer.ts';
import { issueToken } from './tokens.ts';

type Queryable = Pool | PoolClient;

export type LinkPurpose = 'reset' | 'invite';

export function resetLink(publicUrl: string, token: string): string {
  const url = new URL('/reset-password', publicUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

/** How long spent links are kept: they count towards the per-hour mail limit. */
const SPENT_LINK_RETENTION = "interval '1 hour'";

/**
 * Issues a new link for the user and revokes every other live one: one live link per account, so an
 * older mail (or a link read from it) stops working once a newer one is sent.
 */
export async function createLinkToken(db: Queryable, userId: number, purpose: LinkPurpose, ttlMinutes: number): Promise<string> {
  const { token, tokenHash } = issueToken();
  // Spent links older than the counting period are of no further use; removing them keeps the table small.
  await db.query(
    `DELETE FROM password_reset_tokens
      WHERE user_id = $1 AND (used_at IS NOT NULL OR expires_at <= now()) AND created_at < now() - ${SPENT_LINK_RETENTION}`,
    [userId],
  );
  await db.query('UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
  await db.query(
    `INSERT INTO password_reset_tokens (user_id, token_hash, purpose, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [userId, tokenHash, purpose, ttlMinutes * 60],
  );
  return token;
}

/**
 * A reset link for the user unless it already received `mailsPerHour` of them within the hour (then
 * null: no mail goes out). Runs in the caller's transaction with the user's row locked, so concurrent
 * requests cannot all pass the count.
 */
export async function createResetLinkWithinLimit(db: PoolClient, userId: number, ttlMinutes: number, mailsPerHour: number): Promise<string | null> {
  const locked = await db.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
  if (!locked.rowCount) return null;
  const { rows } = await db.query(
    `SELECT count(*)::int AS sent FROM password_reset_tokens
      WHERE user_id = $1 AND purpose = 'reset' AND created_at > now() - interval '1 hour'`,
    [userId],
  );
  if ((rows[0].sent as number) >= mailsPerHour) return null;
  return createLinkToken(db, userId, 'reset', ttlMinutes);
}

/** Whether a token is live (known, unused, unexpired), without spending it. */
export async function isLinkTokenLive(db: Queryable, tokenHash: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM password_reset_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()',
    [tokenHash],
  );
  return (rowCount ?? 0) > 0;
}

/** Marks a valid token used and answers its user, or null when unknown, used or expired. */
export async function consumeLinkToken(db: Queryable, tokenHash: string): Promise<{ userId: number; purpose: LinkPurpose } | null> {
  const { rows } = await db.query(
    `UPDATE password_reset_tokens SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
      RETURNING user_id, purpose`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row) return null;
  // Any other outstanding link of this user stops working once the password is set.
  await db.query('UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [row.user_id]);
  return { userId: row.user_id, purpose: row.purpose };
}

export async function sendResetMail(deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>, to: string, token: string): Promise<void> {
  const link = resetLink(deps.env.PUBLIC_URL, token);
  await sendMail(deps, {
    to,
    subject: 'Reset your Bioprocess Platform password',
    text: `A password reset was requested for your account.\n\nSet a new password here (the link works once and expires in ${deps.env.RESET_TOKEN_TTL_MINUTES} minutes):\n${link}\n\nIf you did not ask for this, ignore this message.`,
    link,
  });
}
