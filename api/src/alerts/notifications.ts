/**
 * What follows a firing, written in the firing's transaction: a notification per rule and run per
 * group window (later firings in the window join it, so a flapping probe notifies once), and its
 * deliveries (an email per recipient, held through the recipient's quiet hours, and a webhook call).
 */
import type pg from 'pg';

export interface FiredEvent {
  eventId: number;
  organizationId: number;
  ruleId: number;
  runId: number | null;
  groupWindowSeconds: number;
  emailUserIds: readonly number[];
  webhookUrl: string | null;
}

/** Writes the notification (or joins the open group) and its deliveries; answers whether a new notification was made. */
export async function notifyFiring(client: pg.PoolClient, event: FiredEvent, nowMs: number): Promise<boolean> {
  const runKey = event.runId ?? 0;
  // Two evaluators firing for the same rule and run at once take turns here, so only one opens the group.
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`alert-group:${event.ruleId}:${runKey}`]);
  const open = await client.query<{ id: string }>(
    `SELECT id FROM alert_notifications
      WHERE rule_id = $1 AND run_key = $2 AND created_at > to_timestamp($3 / 1000.0) - make_interval(secs => $4)
      ORDER BY created_at DESC LIMIT 1`,
    [event.ruleId, runKey, nowMs, event.groupWindowSeconds]);
  if (open.rows[0]) {
    await client.query('UPDATE alert_notifications SET event_count = event_count + 1 WHERE id = $1', [open.rows[0].id]);
    return false;
  }
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO alert_notifications (organization_id, rule_id, run_key, first_event_id, created_at)
     VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0)) RETURNING id`,
    [event.organizationId, event.ruleId, runKey, event.eventId, nowMs]);
  const notificationId = rows[0]!.id;
  if (event.emailUserIds.length > 0) {
    const recipients = await client.query<{ id: string; start_minute: number | null; end_minute: number | null; time_zone: string | null }>(
      `SELECT u.id, q.start_minute, q.end_minute, q.time_zone FROM users u LEFT JOIN alert_quiet_hours q ON q.user_id = u.id
        WHERE u.organization_id = $1 AND u.id = ANY($2::bigint[]) ORDER BY u.id`,
      [event.organizationId, event.emailUserIds]);
    for (const recipient of recipients.rows) {
      const quiet = recipient.time_zone === null ? null
        : { startMinute: recipient.start_minute!, endMinute: recipient.end_minute!, timeZone: recipient.time_zone };
      await client.query(
        `INSERT INTO alert_deliveries (organization_id, notification_id, channel, user_id, due_at)
         VALUES ($1, $2, 'email', $3, to_timestamp($4 / 1000.0))`,
        [event.organizationId, notificationId, recipient.id, dueAfterQuietHours(quiet, nowMs)]);
    }
  }
  if (event.webhookUrl !== null) {
    await client.query(
      `INSERT INTO alert_deliveries (organization_id, notification_id, channel, due_at) VALUES ($1, $2, 'webhook', to_timestamp($3 / 1000.0))`,
      [event.organizationId, notificationId, nowMs]);
  }
  return true;
}

export interface QuietWindow {
  startMinute: number;
  endMinute: number;
  timeZone: string;
}

/** The local minute of the day at `ms` in a time zone. */
function localMinute(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(ms));
  const part = (type: string) => Number(parts.find((entry) => entry.type === type)?.value ?? 0);
  return part('hour') * 60 + part('minute');
}

/** When a message due at `ms` may go: at once, or at the end of the recipient's quiet hours (to the minute). */
export function dueAfterQuietHours(quiet: QuietWindow | null, ms: number): number {
  if (!quiet || quiet.startMinute === quiet.endMinute) return ms;
  const minute = localMinute(ms, quiet.timeZone);
  const inside = quiet.startMinute < quiet.endMinute
    ? minute >= quiet.startMinute && minute < quiet.endMinute
    : minute >= quiet.startMinute || minute < quiet.endMinute;
  if (!inside) return ms;
  const minutesLeft = (quiet.endMinute - minute + 1440) % 1440;
  return ms - (ms % 60_000) + minutesLeft * 60_000;
}

/** Whether a time zone is one the runtime knows. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone });
    return true;
  } catch {
    return false;
  }
}
