/**
 * Test support for the audit trail: runs the real audit-worker in-process against a test context and
 * waits for audit rows, so tests can read audit_logs after making changes.
 */
import type { AuditEvent } from '@bioprocess/shared/queues';
import { startAuditWorker, type AuditWorkerHandle } from '@bioprocess/audit-worker';
import { describeAuditEvent, type AuditInput } from '../../src/audit/record.ts';
import type { TestContext } from './test-context.ts';

/** A complete event as the relay queues it, for tests that put events on the queue themselves. */
export function queuedEventFor(input: AuditInput): AuditEvent {
  return { ...describeAuditEvent(null, input), created_at: new Date().toISOString() };
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function startWorkerFor(ctx: TestContext): AuditWorkerHandle {
  return startAuditWorker({ ...ctx.env, WORKER_CONCURRENCY: 2 }, ctx.deps.logger);
}

/** Events recorded but not stored in audit_logs yet (the outbox keeps them until the worker has). */
export async function outboxCount(ctx: TestContext): Promise<number> {
  const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM audit_outbox');
  return rows[0].n as number;
}

export async function queuedAuditJobs(ctx: TestContext): Promise<number> {
  const counts = await ctx.deps.queues.audit.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

/** Waits until `count` audit rows match the SQL condition (the worker must be running). */
export async function waitForAuditRows(ctx: TestContext, condition: string, params: unknown[], count = 1): Promise<Record<string, unknown>[]> {
  return waitFor(async () => {
    const { rows } = await ctx.deps.pg.query(`SELECT * FROM audit_logs WHERE ${condition} ORDER BY id`, params);
    return rows.length >= count ? rows : null;
  }, `${count} audit row(s) where ${condition}`);
}
