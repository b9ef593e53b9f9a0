/**
 * Outgoing mail. With SMTP_URL set, messages go through nodemailer; without it (development, tests)
 * they are kept in the `dev_outbox` table and the link is logged, so reset and invitation flows can be
 * followed end to end without a mail server.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { AppDeps } from '../platform/deps.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The one actionable link of the message (reset or invitation), kept separately in the dev outbox. */
  link?: string | null;
}

const transporters = new WeakMap<object, Transporter>();

function transporterFor(deps: Pick<AppDeps, 'env'>, smtpUrl: string): Transporter {
  let transporter = transporters.get(deps.env);
  if (!transporter) {
    transporter = nodemailer.createTransport(smtpUrl);
    transporters.set(deps.env, transporter);
  }
  return transporter;
}

export function usesDevOutbox(env: Pick<AppDeps['env'], 'SMTP_URL'>): boolean {
  return !env.SMTP_URL;
}

export async function sendMail(deps: Pick<AppDeps, 'env' | 'pg' | 'logger'>, message: MailMessage): Promise<void> {
  if (deps.env.SMTP_URL) {
    await transporterFor(deps, deps.env.SMTP_URL).sendMail({
      from: deps.env.MAIL_FROM,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
    deps.logger.info({ to: message.to, subject: message.subject }, 'mail sent');
    return;
  }
  await deps.pg.query(
    'INSERT INTO dev_outbox ("to", subject, body, link) VALUES ($1, $2, $3, $4)',
    [message.to, message.subject, message.text, message.link ?? null],
  );
  // In development the link is the point of the outbox: logging it lets a developer follow it.
  deps.logger.info({ to: message.to, subject: message.subject, link: message.link ?? null }, 'mail kept in dev outbox (SMTP_URL not set)');
}
