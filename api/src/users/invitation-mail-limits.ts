/**
 * How many invitation mails go out, counted over 24 hours in `invitation_mails`:
 *
 * - per organisation (INVITATIONS_PER_ORGANIZATION_PER_DAY) and per organisation and address
 *   (INVITATIONS_PER_ADDRESS_PER_DAY): over either, the call answers 429 naming the limit. Both count
 *   only what this organisation asked for, so the answer tells its admin nothing about other ones.
 * - per address from all organisations together (INVITATION_MAILS_PER_ADDRESS_PER_DAY): over it the
 *   invitation is still recorded but its mail is held back, and nothing in the answer says so (a 429
 *   would tell one organisation that another had invited the address).
 *
 * Runs in the caller's transaction under advisory locks of the organisation and of the address (in
 * that order everywhere, so concurrent invitations neither outrun the counts nor deadlock).
 */
import type { PoolClient } from 'pg';
import { INVITATION_MESSAGES } from '@bioprocess/shared/auth-contracts';
import type { AppDeps } from '../platform/deps.ts';
import { HttpError } from '../platform/http-error.ts';

const DAY_SECONDS = 24 * 3600;

export type InvitationMailLimits = Pick<AppDeps['env'], 'INVITATIONS_PER_ORGANIZATION_PER_DAY' | 'INVITATIONS_PER_ADDRESS_PER_DAY' | 'INVITATION_MAILS_PER_ADDRESS_PER_DAY'>;

/** A 429 naming the limit, with the seconds until the oldest counted mail leaves the day. */
function limitReached(message: string, retryAfterSeconds: number): HttpError & { retryAfterSeconds: number } {
  return Object.assign(new HttpError(429, message), { retryAfterSeconds: Math.max(1, retryAfterSeconds) });
}

export function retryAfterOf(error: unknown): number | null {
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' ? seconds : null;
}

/**
 * Counts one invitation mail of the organisation to the address. Throws a 429 when the organisation
 * is over one of its limits; answers whether the mail may be delivered.
 */
export async function takeInvitationMail(db: PoolClient, organizationId: number, email: string, limits: InvitationMailLimits): Promise<{ deliver: boolean }> {
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`invitation-mails:organization:${organizationId}`]);
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('invitation-mails:address:' || lower($1), 0))`, [email]);
  await db.query(
    'DELETE FROM invitation_mails WHERE (organization_id = $1 OR lower(email) = lower($2)) AND sent_at <= now() - make_interval(secs => $3)',
    [organizationId, email, DAY_SECONDS],
  );
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE organization_id = $1)::int AS organization_mails,
            ceil(extract(epoch FROM min(sent_at) FILTER (WHERE organization_id = $1) + make_interval(secs => $3) - now()))::int AS organization_seconds_left,
            count(*) FILTER (WHERE organization_id = $1 AND lower(email) = lower($2))::int AS organization_address_mails,
            ceil(extract(epoch FROM min(sent_at) FILTER (WHERE organization_id = $1 AND lower(email) = lower($2)) + make_interval(secs => $3) - now()))::int AS organization_address_seconds_left,
            count(*) FILTER (WHERE lower(email) = lower($2) AND delivered)::int AS address_deliveries
       FROM invitation_mails WHERE organization_id = $1 OR lower(email) = lower($2)`,
    [organizationId, email, DAY_SECONDS],
  );
  const counts = rows[0] as {
    organization_mails: number; organization_seconds_left: number | null;
    organization_address_mails: number; organization_address_seconds_left: number | null; address_deliveries: number;
  };
  if (counts.organization_mails >= limits.INVITATIONS_PER_ORGANIZATION_PER_DAY) {
    throw limitReached(INVITATION_MESSAGES.perOrganization(limits.INVITATIONS_PER_ORGANIZATION_PER_DAY), counts.organization_seconds_left ?? DAY_SECONDS);
  }
  if (counts.organization_address_mails >= limits.INVITATIONS_PER_ADDRESS_PER_DAY) {
    throw limitReached(INVITATION_MESSAGES.perAddress(limits.INVITATIONS_PER_ADDRESS_PER_DAY), counts.organization_address_seconds_left ?? DAY_SECONDS);
  }
  const deliver = counts.address_deliveries < limits.INVITATION_MAILS_PER_ADDRESS_PER_DAY;
  await db.query('INSERT INTO invitation_mails (organization_id, email, delivered) VALUES ($1, $2, $3)', [organizationId, email, deliver]);
  return { deliver };
}
