/**
 * The audit trail's transactional outbox (table audit_outbox), for every process that records audit
 * events: a row is written in the transaction of the change it describes, handed to the audit queue
 * by the api's relay, and deleted by the audit-worker in the transaction that stores the event in
 * audit_logs. Whoever writes an event writes it here, never to the queue.
 */
import type { AuditOutboxEvent } from '../queues.ts';
import type { PoolClient, Queryable } from './postgres.ts';

/** Channel the outbox's trigger notifies at each commit that wrote rows. */
export const AUDIT_OUTBOX_CHANNEL = 'audit_outbox';

/**
 * Writes an event through `db`: a transaction's client (the event commits with the change or not at
 * all) or the pool for an event that stands alone. Writing the same event id twice (a retried job)
 * keeps the first.
 */
export async function writeAuditOutbox(db: Queryable, event: AuditOutboxEvent): Promise<void> {
  await db.query('INSERT INTO audit_outbox (event_id, event) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING', [
    event.event_id,
    JSON.stringify(event),
  ]);
}

/** In the transaction that stored the event in audit_logs: the outbox has done its work. */
export async function removeFromAuditOutbox(client: PoolClient, eventId: string): Promise<void> {
  await client.query('DELETE FROM audit_outbox WHERE event_id = $1', [eventId]);
}
