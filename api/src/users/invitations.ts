/**
 * Invitation rows in PostgreSQL. An invitation is an offer to join an organisation with a role: no
 * user row exists until the invitee accepts through the mailed link, so an invitation never takes an
 * address. The link's token is stored only as its hash.
 */
import type { Pool, PoolClient } from 'pg';
import type { Invitation } from '@bioprocess/shared/auth-contracts';
import { issueToken } from '../auth/tokens.ts';

type Queryable = Pool | PoolClient;

export interface InvitationRow {
  id: number;
  organization_id: number;
  organization_name: string;
  email: string;
  role: string;
  created_at: Date;
  last_sent_at: Date;
  expires_at: Date;
}

const INVITATION_SELECT = `
  SELECT i.id, i.organization_id, o.name AS organization_name, i.email, i.role, i.created_at, i.last_sent_at, i.expires_at
    FROM invitations i JOIN organizations o ON o.id = i.organization_id`;

/** Neither accepted nor revoked (possibly expired: a resend renews it). */
const OPEN = 'i.accepted_at IS NULL AND i.revoked_at IS NULL';

export interface IssuedInvitation {
  invitation: InvitationRow;
  /** The link's token, for the mail only. */
  token: string;
}

/**
 * Opens an invitation for the address, or renews the one already open in this organisation (new
 * role, new link, new expiry): one open invitation per organisation and address.
 */
export async function openInvitation(
  db: PoolClient,
  values: { organizationId: number; email: string; role: string; invitedBy: number | null; ttlHours: number },
): Promise<IssuedInvitation> {
  const { token, tokenHash } = issueToken();
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO invitations (organization_id, email, role, invited_by, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
     ON CONFLICT (organization_id, lower(email)) WHERE accepted_at IS NULL AND revoked_at IS NULL
     DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by, token_hash = EXCLUDED.token_hash,
                   expires_at = EXCLUDED.expires_at, last_sent_at = now()
     RETURNING id`,
    [values.organizationId, values.email, values.role, values.invitedBy, tokenHash, values.ttlHours * 3600],
  );
  return { invitation: (await findInvitation(db, rows[0]!.id))!, token };
}

/** A new link for an open invitation (the old one stops working) and a new expiry. */
export async function renewInvitation(db: PoolClient, id: number, ttlHours: number): Promise<IssuedInvitation> {
  const { token, tokenHash } = issueToken();
  await db.query(
    `UPDATE invitations SET token_hash = $2, expires_at = now() + make_interval(secs => $3), last_sent_at = now() WHERE id = $1`,
    [id, tokenHash, ttlHours * 3600],
  );
  return { invitation: (await findInvitation(db, id))!, token };
}

/** An open invitation by id, optionally locked. */
export async function findInvitation(db: Queryable, id: number, options: { forUpdate?: boolean } = {}): Promise<InvitationRow | null> {
  const { rows } = await db.query(`${INVITATION_SELECT} WHERE i.id = $1 AND ${OPEN}${options.forUpdate ? ' FOR UPDATE OF i' : ''}`, [id]);
  return (rows[0] as InvitationRow | undefined) ?? null;
}

/** The open invitations of one organisation, or of all of them (null), newest first. */
export async function listOpenInvitations(db: Queryable, organizationId: number | null): Promise<InvitationRow[]> {
  const { rows } = await db.query<InvitationRow>(
    `${INVITATION_SELECT} WHERE ${OPEN} AND ($1::bigint IS NULL OR i.organization_id = $1) ORDER BY i.organization_id, i.created_at DESC, i.id DESC`,
    [organizationId],
  );
  return rows;
}

export async function revokeInvitation(db: PoolClient, id: number): Promise<void> {
  await db.query('UPDATE invitations SET revoked_at = now() WHERE id = $1', [id]);
}

/** The open, unexpired invitation the link's token belongs to, optionally locked. */
export async function findLiveInvitationByToken(db: Queryable, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<InvitationRow | null> {
  const { rows } = await db.query(
    `${INVITATION_SELECT} WHERE i.token_hash = $1 AND ${OPEN} AND i.expires_at > now()${options.forUpdate ? ' FOR UPDATE OF i' : ''}`,
    [tokenHash],
  );
  return (rows[0] as InvitationRow | undefined) ?? null;
}

export async function markInvitationAccepted(db: PoolClient, id: number, userId: number): Promise<void> {
  await db.query('UPDATE invitations SET accepted_at = now(), accepted_user_id = $2 WHERE id = $1', [id, userId]);
}

export function toInvitation(row: InvitationRow): Invitation {
  return {
    id: row.id,
    organization_id: row.organization_id,
    email: row.email,
    role: row.role,
    status: row.expires_at.getTime() > Date.now() ? 'pending' : 'expired',
    created_at: row.created_at.toISOString(),
    last_sent_at: row.last_sent_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}

/** The fields an audit event records for an invitation (never its token). */
export function auditInvitationFields(row: InvitationRow): Record<string, unknown> {
  return { email: row.email, role: row.role, organization_id: row.organization_id, expires_at: row.expires_at.toISOString() };
}
