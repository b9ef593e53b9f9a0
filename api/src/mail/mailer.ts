/**
 * Outgoing mail. With SMTP_URL set, messages go through nodemailer. Without it, and only when
 * DEV_OUTBOX is switched on (development, tests; never in production), they are kept in the
 * `dev_outbox` table, which a superuser can read, so reset and invitation flows can be followed end
 * to end without a mail server. Otherwise the message is dropped with a warning. The links in these
 * messages hand over accounts: they are never logged.
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

export function usesDevOutbox(env: Pick<AppDeps['env'], 'SMTP_URL' | 'DEV_OUTBOX'>): boolean {
  return !env.SMTP_URL && env.DEV_OUTBOX;
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
  if (!usesDevOutbox(deps.env)) {
    deps.logger.warn({ to: message.to, subject: message.subject }, 'mail not sent: set SMTP_URL (or DEV_OUTBOX=true for local use)');
    return;
  }
  await deps.pg.query(
    'INSERT INTO dev_outbox ("to", subject, body, link) VALUES ($1, $2, $3, $4)',
    [message.to, message.subject, message.text, message.link ?? null],
  );
  deps.logger.info({ to: message.to, subject: message.subject }, 'mail stored in the dev outbox (a superuser reads it at /api/v1/dev/outbox)');
}
