/**
 * The invitee's calls, made without a session from the mailed link: what the invitation offers, and
 * accepting it (which answers a session, as a sign-in does).
 */
import { INVITATION_MESSAGES, invitationPreviewSchema, type InvitationPreview } from '@bioprocess/shared/auth-contracts';
import { readJsonBody, serverErrorOf } from '../api/client.ts';
import { authResponseSchema, toSessionUser, type SessionUser } from '../auth/user.ts';

export const ACCEPT_FAILED = 'Failed to accept the invitation';

/** A refusal of the server; `accountExists` when the address already has an account. */
export class InvitationError extends Error {
  readonly accountExists: boolean;

  constructor(message: string) {
    super(message);
    this.name = 'InvitationError';
    this.accountExists = message === INVITATION_MESSAGES.accountExists;
  }
}

async function post(path: string, body: unknown): Promise<{ response: Response; payload: unknown }> {
  let response: Response;
  try {
    response = await fetch(path, { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  } catch {
    throw new InvitationError(ACCEPT_FAILED);
  }
  return { response, payload: await readJsonBody(response) };
}

export async function lookupInvitation(token: string): Promise<InvitationPreview> {
  const { response, payload } = await post('/api/v1/auth/invitations/lookup', { token });
  if (!response.ok) throw new InvitationError(serverErrorOf(payload) ?? INVITATION_MESSAGES.invalidToken);
  const parsed = invitationPreviewSchema.safeParse(payload);
  if (!parsed.success) throw new InvitationError(ACCEPT_FAILED);
  return parsed.data;
}

export async function acceptInvitation(token: string, name: string, password: string): Promise<{ token: string; user: SessionUser }> {
  const { response, payload } = await post('/api/v1/auth/invitations/accept', { token, name, password });
  if (!response.ok) throw new InvitationError(serverErrorOf(payload) ?? ACCEPT_FAILED);
  const parsed = authResponseSchema.safeParse(payload);
  if (!parsed.success) throw new InvitationError(ACCEPT_FAILED);
  return { token: parsed.data.token, user: toSessionUser(parsed.data.user) };
}
