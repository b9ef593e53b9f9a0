/**
 * The audit-worker: consumes the `audit` queue and appends each event to `audit_logs`. The insert is
 * keyed by the event id (ON CONFLICT DO NOTHING), so a job retried after a crash between the insert
 * and the acknowledgement, or handed over twice by the api's outbox relay, still stores its event
 * exactly once. The event's audit_outbox row is deleted in the same transaction: the outbox keeps an
 * event until its audit row exists, and the relay hands over again whatever the queue lost. While
 * PostgreSQL is unreachable jobs fail and BullMQ retries them with the backoff the producer set; the
 * worker itself keeps running.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { AUDIT_JOB, QUEUE_NAMES, auditEventSchema, type AuditEvent } from '@bioprocess/shared/queues';
import { auditRetryDelayMs } from '@bioprocess/shared/auth-contracts';
import type { WorkerEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool, withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { removeFromAuditOutbox } from '@bioprocess/shared/server/audit-outbox';
import { createRedis } from '@bioprocess/shared/server/redis';

export interface AuditWorkerHandle {
  worker: Worker;
  /** Ordered shutdown: stop taking jobs, let active ones finish, then close PostgreSQL and Redis. */
  close(): Promise<void>;
}

export type AuditWorkerEnv = Pick<WorkerEnv, 'DATABASE_URL' | 'REDIS_URL' | 'QUEUE_PREFIX' | 'WORKER_CONCURRENCY'>;

/**
 * Appends one event and removes it from the outbox, in one transaction; answers false when it was
 * already stored (a retried or re-sent job).
 */
export async function storeAuditEvent(pool: Pool, event: AuditEvent): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `INSERT INTO audit_logs (event_id, event_type, action, resource_type, resource_id, success, user_id,
                               user_email, organization_id, ip, changes, created_at, change_seq)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (event_id) DO NOTHING`,
      [
        event.event_id, event.event_type, event.action, event.resource_type, event.resource_id, event.success,
        event.user_id, event.user_email, event.organization_id, event.ip,
        event.changes === null ? null : JSON.stringify(event.changes), event.created_at, event.change_seq ?? null,
      ],
    );
    await removeFromAuditOutbox(client, event.event_id);
    return rowCount === 1;
  });
}

/**
 * Times a job may be found stalled (its worker died or hung past the lock) before BullMQ fails it:
 * high enough that a crash loop of workers never fails an event; should it happen anyway, the
 * event is still in the outbox and the relay retries the failed job.
 */
export const AUDIT_MAX_STALLED_COUNT = 1_000_000;

export function startAuditWorker(env: AuditWorkerEnv, logger: Logger): AuditWorkerHandle {
  const pool = createPool(env.DATABASE_URL, Math.max(2, env.WORKER_CONCURRENCY));
  const connection = createRedis(env.REDIS_URL);

  const processor = async (job: Job): Promise<void> => {
    if (job.name !== AUDIT_JOB) throw new UnrecoverableError(`unknown job ${job.name} on the audit queue`);
    const parsed = auditEventSchema.safeParse(job.data);
    // A malformed event will never become valid: fail it for inspection instead of retrying.
    if (!parsed.success) throw new UnrecoverableError(`invalid audit event: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    const stored = await storeAuditEvent(pool, parsed.data);
    logger.debug({ eventId: parsed.data.event_id, eventType: parsed.data.event_type, duplicate: !stored }, 'audit event stored');
  };

  const worker = new Worker(QUEUE_NAMES.audit, processor, {
    connection,
    prefix: env.QUEUE_PREFIX,
    concurrency: env.WORKER_CONCURRENCY,
    maxStalledCount: AUDIT_MAX_STALLED_COUNT,
    settings: { backoffStrategy: (attemptsMade: number) => auditRetryDelayMs(attemptsMade) },
  });
  // Without an error listener an emitted error would crash the process (Redis reconnects, for example).
  worker.on('error', (error) => logger.error({ err: error }, 'audit worker error'));
  worker.on('failed', (job, error) => {
    logger.warn({ err: error, jobId: job?.id, attemptsMade: job?.attemptsMade }, 'audit event not stored yet; it will be retried');
  });

  let closing: Promise<void> | null = null;
  return {
    worker,
    close() {
      closing ??= (async () => {
        await worker.close();
        await pool.end().catch(() => undefined);
        await connection.quit().catch(() => connection.disconnect());
      })();
      return closing;
    },
  };
}
