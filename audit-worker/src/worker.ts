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
import type { AuditWorkerEnv as AuditWorkerSettings, WorkerEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { createPool, withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { removeFromAuditOutbox } from '@bioprocess/shared/server/audit-outbox';
import { createRedis } from '@bioprocess/shared/server/redis';
import { loadCheckpointKey, type ChainedEntryContent } from '@bioprocess/shared/audit-chain';
import { advanceHead, chainKeyOf, checkpointChains, lockChainHead, nextLink, type CheckpointPolicy } from './chain.ts';

export interface AuditWorkerHandle {
  worker: Worker;
  /** Ordered shutdown: stop taking jobs, let active ones finish, then close PostgreSQL and Redis. */
  close(): Promise<void>;
}

export type AuditWorkerEnv = Pick<WorkerEnv, 'DATABASE_URL' | 'REDIS_URL' | 'QUEUE_PREFIX' | 'WORKER_CONCURRENCY'>
  & Partial<Pick<AuditWorkerSettings, 'AUDIT_CHECKPOINT_KEY' | 'AUDIT_CHECKPOINT_EVERY' | 'AUDIT_CHECKPOINT_INTERVAL_MS' | 'AUDIT_LOCK_MS'>>;

/**
 * Appends one event, linked into its organisation's chain, and removes it from the outbox, in one
 * transaction; answers false when it was already stored (a retried or re-sent job). The chain head is
 * locked before the duplicate check, so two deliveries of one event never both pass it.
 */
export async function storeAuditEvent(pool: Pool, event: AuditEvent, checkpoints: CheckpointPolicy = NO_CHECKPOINTS): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const head = await lockChainHead(client, chainKeyOf(event.organization_id));
    const existing = await client.query('SELECT 1 FROM audit_logs WHERE event_id = $1', [event.event_id]);
    if (existing.rowCount) {
      await removeFromAuditOutbox(client, event.event_id);
      return false;
    }
    // Stored to the millisecond, the precision the hash and the export carry.
    const content: ChainedEntryContent = {
      event_id: event.event_id,
      created_at: new Date(event.created_at).toISOString(),
      event_type: event.event_type,
      action: event.action,
      resource_type: event.resource_type,
      resource_id: event.resource_id,
      success: event.success,
      user_id: event.user_id,
      user_email: event.user_email,
      organization_id: event.organization_id,
      ip: event.ip,
      // As PostgreSQL will give it back (jsonb drops nothing a JSON round trip keeps).
      changes: event.changes === null ? null : JSON.parse(JSON.stringify(event.changes)),
      change_reason: event.change_reason || null,
      change_reason_code: event.change_reason_code || null,
      change_seq: event.change_seq ?? null,
    };
    const link = nextLink(head, content);
    await client.query(
      `INSERT INTO audit_logs (event_id, event_type, action, resource_type, resource_id, success, user_id,
                               user_email, organization_id, ip, changes, created_at, change_seq,
                               change_reason, change_reason_code, chain_seq, prev_hash, entry_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
      [
        content.event_id, content.event_type, content.action, content.resource_type, content.resource_id, content.success,
        content.user_id, content.user_email, content.organization_id, content.ip,
        content.changes === null ? null : JSON.stringify(content.changes), content.created_at, content.change_seq,
        content.change_reason, content.change_reason_code, link.chainSeq, link.prevHash, link.entryHash,
      ],
    );
    await advanceHead(client, head, link, checkpoints);
    await removeFromAuditOutbox(client, event.event_id);
    return true;
  });
}

const NO_CHECKPOINTS: CheckpointPolicy = { key: null, every: Number.MAX_SAFE_INTEGER };

/**
 * Times a job may be found stalled (its worker died or hung past the lock) before BullMQ fails it:
 * high enough that a crash loop of workers never fails an event; should it happen anyway, the
 * event is still in the outbox and the relay retries the failed job.
 */
export const AUDIT_MAX_STALLED_COUNT = 1_000_000;

export function startAuditWorker(env: AuditWorkerEnv, logger: Logger): AuditWorkerHandle {
  const pool = createPool(env.DATABASE_URL, Math.max(2, env.WORKER_CONCURRENCY));
  const connection = createRedis(env.REDIS_URL);
  const checkpoints: CheckpointPolicy = {
    key: env.AUDIT_CHECKPOINT_KEY ? loadCheckpointKey(env.AUDIT_CHECKPOINT_KEY) : null,
    every: env.AUDIT_CHECKPOINT_EVERY ?? 1_000,
  };
  if (!checkpoints.key) logger.warn('AUDIT_CHECKPOINT_KEY is not set: the audit chain is linked but not checkpointed');
  // Links chains that predate the chain at start, then checkpoints the grown ones periodically.
  const checkpointPass = () => checkpointChains(pool, checkpoints.key)
    .catch((error: unknown) => logger.warn({ err: error }, 'audit checkpoint pass failed; it runs again at the next interval'));
  void checkpointPass();
  const checkpointTimer = setInterval(() => void checkpointPass(), env.AUDIT_CHECKPOINT_INTERVAL_MS ?? 3_600_000);
  checkpointTimer.unref();

  const processor = async (job: Job): Promise<void> => {
    if (job.name !== AUDIT_JOB) throw new UnrecoverableError(`unknown job ${job.name} on the audit queue`);
    const parsed = auditEventSchema.safeParse(job.data);
    // A malformed event will never become valid: fail it for inspection instead of retrying.
    if (!parsed.success) throw new UnrecoverableError(`invalid audit event: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    const stored = await storeAuditEvent(pool, parsed.data, checkpoints);
    logger.debug({ eventId: parsed.data.event_id, eventType: parsed.data.event_type, duplicate: !stored }, 'audit event stored');
  };

  const worker = new Worker(QUEUE_NAMES.audit, processor, {
    connection,
    prefix: env.QUEUE_PREFIX,
    concurrency: env.WORKER_CONCURRENCY,
    maxStalledCount: AUDIT_MAX_STALLED_COUNT,
    lockDuration: env.AUDIT_LOCK_MS ?? 30_000,
    stalledInterval: Math.max(1_000, Math.floor((env.AUDIT_LOCK_MS ?? 30_000) / 2)),
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
        clearInterval(checkpointTimer);
        await worker.close();
        await pool.end().catch(() => undefined);
        await connection.quit().catch(() => connection.disconnect());
      })();
      return closing;
    },
  };
}
