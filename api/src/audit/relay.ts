/**
 * The audit relay: hands committed audit_outbox rows to the audit queue, oldest first, with the event
 * id as the job id (a second hand-over of a job still queued is a no-op). Every api process runs one;
 * a transaction-scoped advisory lock lets one pass run at a time across processes, so the rows leave
 * in the order of the changes. A NOTIFY from the outbox's trigger wakes it at commit; a poll is the
 * safety net while that connection is down.
 *
 * A row stays in the outbox until the audit-worker has stored its event (the worker deletes it in the
 * same transaction). A row still there some seconds after its hand-over is handed over again, backing
 * off up to AUDIT_RELAY_RESEND_MS: that repairs a queue that lost the job (Redis restarted empty or was
 * flushed) and revives a job that failed for good. While Redis is down the relay waits; requests never
 * do, since they only write to PostgreSQL.
 */
import pg from 'pg';
import type { Queue } from 'bullmq';
import { AUDIT_JOB, auditEventSchema, auditOutboxEventSchema, type AuditEvent } from '@bioprocess/shared/queues';
import { AUDIT_RETRY } from '@bioprocess/shared/auth-contracts';
import type { Logger } from '@bioprocess/shared/server/logger';
import { withTransaction, type Pool } from '@bioprocess/shared/server/postgres';
import { AUDIT_OUTBOX_CHANNEL } from '@bioprocess/shared/server/audit-outbox';

/** Key of the advisory lock held by the relay pass in progress (any stable bigint unique to it). */
const RELAY_LOCK_KEY = 7_205_113_001;
/** Rows handed over per pass (one addBulk): bounds the pass's memory and its Redis round trip. */
const BATCH_SIZE = 500;
/** First re-send of a row still in the outbox; doubles per hand-over up to resendMaxMs. */
const FIRST_RESEND_MS = 5_000;
/** A pass gives up on Redis after this long (its transaction rolls back; the rows are handed over later). */
const HAND_OVER_TIMEOUT_MS = 10_000;
/** How soon a relay tries again when another process held the lock (its pass may have missed new rows). */
const LOCK_BUSY_RETRY_MS = 250;
const RECONNECT_MS = 1_000;
/** A row that does not parse (never written by this code) is looked at again after this long. */
const INVALID_ROW_RETRY_MS = 3_600_000;

export const AUDIT_JOB_OPTIONS = {
  attempts: AUDIT_RETRY.attempts,
  // Computed by the audit-worker (capped exponential), see AUDIT_RETRY.
  backoff: { type: AUDIT_RETRY.backoffType },
  removeOnComplete: true,
  removeOnFail: 10_000,
} as const;

export interface AuditRelaySettings {
  /** Sleep between passes when no notification arrives. */
  pollMs: number;
  /** Longest wait before a row still in the outbox is handed over again. */
  resendMaxMs: number;
}

export interface AuditRelay {
  start(): void;
  /** Runs a pass soon (coalesced with one in progress). */
  wake(): void;
  /** Stops polling and listening and waits for the pass in progress. */
  close(): Promise<void>;
}

interface OutboxRow {
  id: number;
  event: unknown;
  created_at: string;
  relay_attempts: number;
}

type PassOutcome = 'idle' | 'redis-down' | 'busy' | 'partial' | 'full';

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * False while the queue's Redis connection (the ioredis instance the queues share) is known to be down:
 * commands would only pile up in its offline queue.
 */
function queueReady(queue: Queue): boolean {
  const status = (queue.opts.connection as { status?: unknown }).status;
  return status === undefined || status === 'ready';
}

export function createAuditRelay(
  deps: { pg: Pool; queue: Queue; logger: Logger; databaseUrl: string },
  settings: AuditRelaySettings,
): AuditRelay {
  const { pg: pool, queue, logger } = deps;
  let started = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let rerun = false;
  let failing = false;

  const schedule = (ms: number) => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      run();
    }, ms);
    timer.unref();
  };

  const handOver = async (rows: OutboxRow[]): Promise<{ sent: number[]; invalid: number[] }> => {
    const events: AuditEvent[] = [];
    const sent: number[] = [];
    const invalid: number[] = [];
    for (const row of rows) {
      const stored = auditOutboxEventSchema.safeParse(row.event);
      const event = stored.success ? auditEventSchema.safeParse({ ...stored.data, created_at: row.created_at, change_seq: row.id }) : stored;
      if (!event.success) {
        invalid.push(row.id);
        logger.error({ outboxId: row.id, issue: event.error.issues[0]?.message }, 'audit outbox row does not parse; it is kept for inspection');
        continue;
      }
      events.push(event.data);
      sent.push(row.id);
    }
    if (events.length > 0) {
      await withTimeout(
        queue.addBulk(events.map((event) => ({ name: AUDIT_JOB, data: event, opts: { ...AUDIT_JOB_OPTIONS, jobId: event.event_id } }))),
        HAND_OVER_TIMEOUT_MS,
        'handing audit events to the queue',
      );
    }
    // A row handed over before and still here: its job may have failed for good (or stalled too often).
    // Failed audit jobs are rare, so the common case costs one count.
    const resent = rows.filter((row) => row.relay_attempts > 0 && !invalid.includes(row.id));
    if (resent.length > 0 && (await queue.getFailedCount()) === 0) return { sent, invalid };
    for (const row of resent) {
      const eventId = (row.event as { event_id: string }).event_id;
      if ((await queue.getJobState(eventId)) === 'failed') {
        const job = await queue.getJob(eventId);
        await job?.retry('failed');
        logger.warn({ eventId }, 'audit event job had failed; retried from the outbox');
      }
    }
    return { sent, invalid };
  };

  const pass = async (): Promise<PassOutcome> => {
    if (!queueReady(queue)) return 'redis-down';
    const due = await pool.query('SELECT 1 FROM audit_outbox WHERE relay_due_at <= now() LIMIT 1');
    if (!due.rowCount) return 'idle';
    return withTransaction(pool, async (client) => {
      const lock = await client.query('SELECT pg_try_advisory_xact_lock($1) AS held', [RELAY_LOCK_KEY]);
      if (!lock.rows[0].held) return 'busy';
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, event, relay_attempts,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at
           FROM audit_outbox WHERE relay_due_at <= now() ORDER BY id LIMIT $1`,
        [BATCH_SIZE],
      );
      const { sent, invalid } = await handOver(rows);
      await client.query(
        `UPDATE audit_outbox
            SET relay_attempts = relay_attempts + 1,
                relay_due_at = now() + make_interval(secs => least($2::float8, $3::float8 * power(2, least(relay_attempts, 30))) / 1000)
          WHERE id = ANY($1::bigint[])`,
        [sent, settings.resendMaxMs, FIRST_RESEND_MS],
      );
      if (invalid.length > 0) {
        await client.query(
          `UPDATE audit_outbox SET relay_due_at = now() + make_interval(secs => $2::float8 / 1000) WHERE id = ANY($1::bigint[])`,
          [invalid, INVALID_ROW_RETRY_MS],
        );
      }
      return rows.length === BATCH_SIZE ? 'full' : 'partial';
    });
  };

  function run(): void {
    if (closed) return;
    if (running) {
      rerun = true;
      return;
    }
    running = (async () => {
      let next = settings.pollMs;
      try {
        for (;;) {
          rerun = false;
          const outcome = await pass();
          if (outcome === 'full' && !closed) continue;
          if (outcome === 'busy') next = Math.min(next, LOCK_BUSY_RETRY_MS);
          if (!rerun || closed) break;
        }
        if (failing) logger.info('audit relay is handing events over again');
        failing = false;
      } catch (error) {
        // Said once per outage (PostgreSQL or Redis away); the next passes retry quietly.
        if (!failing) logger.warn({ err: error }, 'audit relay pass failed; the events stay in the outbox and are retried');
        failing = true;
      } finally {
        running = null;
        schedule(next);
      }
    })();
  }

  // Notifications: one connection per process, made again after a loss; polls cover the gap.
  let listener: pg.Client | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  const dropListener = (lost: pg.Client) => {
    if (listener !== lost) return;
    listener = null;
    lost.end().catch(() => undefined);
    if (closed) return;
    reconnectTimer ??= setTimeout(() => {
      reconnectTimer = null;
      void listen();
    }, RECONNECT_MS);
    reconnectTimer.unref();
  };
  const listen = async () => {
    if (closed || listener) return;
    const client = new pg.Client({ connectionString: deps.databaseUrl });
    listener = client;
    client.on('notification', (message) => {
      if (message.channel === AUDIT_OUTBOX_CHANNEL) run();
    });
    client.on('error', () => dropListener(client));
    client.on('end', () => dropListener(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${AUDIT_OUTBOX_CHANNEL}`);
      // Rows committed while nobody listened.
      run();
    } catch {
      dropListener(client);
    }
    if (closed) await client.end().catch(() => undefined);
  };

  return {
    start() {
      if (started || closed) return;
      started = true;
      void listen();
      run();
    },
    wake: run,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const current = listener;
      listener = null;
      await Promise.allSettled([running, current?.end()]);
    },
  };
}
