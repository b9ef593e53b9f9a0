/**
 * The invitation mail. It carries the organisation's name, the role and the link, and nothing else an
 * inviter could choose: no inviter name, no personal note, no name for the invitee (they choose their
 * own when accepting). The organisation's name is flattened to one line and quoted so it reads as a
 * name, not as part of the message.
 */
import type { AppDeps } from '../platform/deps.ts';
import { sendMail, type MailMessage } from './mailer.ts';

export function invitationLink(publicUrl: string, token: string): string {
  const url = new URL('/accept-invitation', publicUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

/** One line without control characters: a name cannot start paragraphs or fake a second link line. */
function asOneLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ').replace(/\s+/g, ' ').trim();
}

function lifetimeText(ttlHours: number): string {
  return ttlHours % 24 === 0 ? `${ttlHours / 24} day${ttlHours === 24 ? '' : 's'}` : `${ttlHours} hour${ttlHours === 1 ? '' : 's'}`;
}

export function invitationMail(invitation: { to: string; organizationName: string; role: string; link: string; ttlHours: number }): MailMessage {
  const organization = asOneLine(invitation.organizationName);
  return {
    to: invitation.to,
    subject: 'Invitation to an organisation on the Bioprocess Platform',
    text: `You have been invited to join the organisation "${organization}" on the Bioprocess Platform with the ${invitation.role} role.\n\n`
      + `To accept, choose your name and password here (the link works once and expires in ${lifetimeText(invitation.ttlHours)}):\n${invitation.link}\n\n`
      + 'No account exists until you accept. If you did not expect this invitation, ignore this message.',
    link: invitation.link,
  };
}

export async function sendInvitationMail(
  deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>,
  invitation: { to: string; organizationName: string; role: string },
  token: string,
): Promise<void> {
  const link = invitationLink(deps.env.PUBLIC_URL, token);
  await sendMail(deps, invitationMail({ ...invitation, link, ttlHours: deps.env.INVITATION_TTL_HOURS }));
}
