/**
 * Deliveries of alert notifications: a relay hands the due rows of alert_deliveries (the outbox the
 * firing's transaction wrote) to the BullMQ queue `alert-delivery`, and its worker sends each: an
 * email through the product's mail path (mail/mailer.ts: SMTP, or the dev outbox), or a webhook call
 * whose JSON body is signed with the rule's secret (HMAC-SHA256). A failed call is retried with
 * exponential backoff by BullMQ; a row marked delivered is never sent again, and a row whose queue
 * entry Redis lost is queued again by the relay.
 */
import { createHmac } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import {
  ALERT_DELIVERY_JOB, ALERT_DELIVERY_QUEUE, ALERT_SIGNATURE_HEADER, alertDeliveryPayloadSchema, type AlertWebhookPayload,
} from '@bioprocess/shared/alerts';
import type { ApiEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { createRedis } from '@bioprocess/shared/server/redis';
import { sendMail } from '../mail/mailer.ts';
import { requireAlertEvent } from './repository.ts';

export interface DeliveryDeps {
  env: ApiEnv;
  pg: Pool;
  logger: Logger;
}

/** Attempts of one delivery, 1 s doubling: about 17 minutes of retries before it is left failed. */
export const DELIVERY_ATTEMPTS = 11;
const WEBHOOK_TIMEOUT_MS = 10_000;
/** A row queued this long ago and still undelivered is queued again (Redis may have lost it). */
const REQUEUE_AFTER_S = 30 * 60;

export function signPayload(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function createDeliveryQueue(env: Pick<ApiEnv, 'REDIS_URL' | 'QUEUE_PREFIX'>, logger: Logger): Queue {
  const queue = new Queue(ALERT_DELIVERY_QUEUE, { connection: createRedis(env.REDIS_URL, {}, logger), prefix: env.QUEUE_PREFIX });
  queue.on('error', (err) => logger.debug({ err }, 'alert delivery queue connection error'));
  return queue;
}

/** Queues the due deliveries not queued yet (or queued long ago). Answers how many. */
export async function relayDueDeliveries(pg: Pool, queue: Queue, nowMs = Date.now()): Promise<number> {
  const { rows } = await pg.query<{ id: string }>(
    `UPDATE alert_deliveries SET queued_at = now()
      WHERE id IN (SELECT id FROM alert_deliveries
                    WHERE delivered_at IS NULL AND due_at <= to_timestamp($1 / 1000.0)
                      AND (queued_at IS NULL OR queued_at < now() - make_interval(secs => $2))
                    ORDER BY due_at LIMIT 500 FOR UPDATE SKIP LOCKED)
      RETURNING id`,
    [nowMs, REQUEUE_AFTER_S]);
  if (rows.length === 0) return 0;
  await queue.addBulk(rows.map((row) => ({
    name: ALERT_DELIVERY_JOB,
    data: { delivery_id: Number(row.id) },
    opts: {
      jobId: `alert-delivery-${row.id}`, attempts: DELIVERY_ATTEMPTS, backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: true, removeOnFail: 1_000,
    },
  })));
  return rows.length;
}

interface DeliveryRow {
  id: string;
  organization_id: string;
  channel: 'email' | 'webhook';
  delivered_at: Date | null;
  notification_id: string;
  first_event_id: string;
  event_count: number;
  rule_id: string;
  rule_name: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  email: string | null;
  user_name: string | null;
}

/** Sends one delivery, unless it was delivered already; throws to have BullMQ retry it. */
export async function deliver(deps: DeliveryDeps, deliveryId: number, fetchImpl: typeof fetch = fetch): Promise<'sent' | 'already'> {
  return withTransaction(deps.pg, async (client) => {
    // The lock keeps a second worker (the job delivered twice) from sending while this one does.
    const { rows } = await client.query<DeliveryRow>(
      `SELECT d.id, d.organization_id, d.channel, d.delivered_at, d.notification_id, n.first_event_id, n.event_count,
              r.id AS rule_id, r.name AS rule_name, r.webhook_url, r.webhook_secret, u.email, u.name AS user_name
         FROM alert_deliveries d JOIN alert_notifications n ON n.id = d.notification_id JOIN alert_rules r ON r.id = n.rule_id
         LEFT JOIN users u ON u.id = d.user_id
        WHERE d.id = $1 FOR UPDATE OF d`, [deliveryId]);
    const row = rows[0];
    if (!row || row.delivered_at !== null) return 'already';
    const event = await requireAlertEvent(client, Number(row.organization_id), Number(row.first_event_id));
    const link = new URL(event.run_id === null ? '/alerts' : `/runs/${event.run_id}`, deps.env.PUBLIC_URL).toString();
    if (row.channel === 'email') {
      if (row.email) {
        await sendMail(deps, {
          to: row.email,
          subject: `Alert: ${row.rule_name}`,
          text: `${event.message}\n\nRule: ${row.rule_name}\nRun: ${event.run_name ?? 'none'}\nFired at: ${event.fired_at}\n` +
            `${row.event_count > 1 ? `Firings of this rule in this run so far: ${row.event_count}\n` : ''}\nOpen: ${link}\n`,
          link,
        });
      }
    } else if (row.webhook_url && row.webhook_secret) {
      const payload: AlertWebhookPayload = {
        delivery_id: Number(row.id), notification_id: Number(row.notification_id), rule: { id: Number(row.rule_id), name: row.rule_name },
        events: row.event_count, event, link,
      };
      const body = JSON.stringify(payload);
      const response = await fetchImpl(row.webhook_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ALERT_SIGNATURE_HEADER]: signPayload(row.webhook_secret, body), 'x-alert-delivery': String(row.id) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`webhook answered ${response.status}`);
    }
    await client.query('UPDATE alert_deliveries SET delivered_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = $1', [deliveryId]);
    return 'sent';
  });
}

export function startDeliveryWorker(deps: DeliveryDeps, concurrency = 4): Worker {
  const worker = new Worker(ALERT_DELIVERY_QUEUE, async (job: Job) => {
    const { delivery_id: deliveryId } = alertDeliveryPayloadSchema.parse(job.data);
    try {
      return await deliver(deps, deliveryId);
    } catch (error) {
      await deps.pg.query('UPDATE alert_deliveries SET last_error = $2, attempts = attempts + 1 WHERE id = $1', [deliveryId, String((error as Error).message).slice(0, 500)]).catch(() => undefined);
      throw error;
    }
  }, { connection: createRedis(deps.env.REDIS_URL, { maxRetriesPerRequest: null }, deps.logger), prefix: deps.env.QUEUE_PREFIX, concurrency });
  worker.on('error', (err) => deps.logger.debug({ err }, 'alert delivery worker connection error'));
  worker.on('failed', (job, err) => deps.logger.warn({ err, jobId: job?.id, attempts: job?.attemptsMade }, 'alert delivery failed'));
  return worker;
}
