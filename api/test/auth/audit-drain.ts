/**
 * Test support for the audit trail: runs the real audit-worker in-process against a test context and
 * waits until the queue is empty, so tests can read audit_logs after making changes.
 */
import { startAuditWorker, type AuditWorkerHandle } from '../../../audit-worker/src/worker.ts';
import type { TestContext } from '../support/test-context.ts';

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
