import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_JOB } from '@bioprocess/shared/queues';
import { createTestContext, OutageProxy, queuedEventFor, recordAudit, type TestContext } from '@bioprocess/api/test-support';
import { startAuditWorker, type AuditWorkerHandle } from '../src/worker.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('audit-worker', () => {
  let ctx: TestContext;
  let proxy: OutageProxy;
  let worker: AuditWorkerHandle | null = null;

  beforeAll(async () => {
    ctx = await createTestContext();
    const upstream = new URL(ctx.env.DATABASE_URL);
    proxy = new OutageProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    await proxy.start();
  });
  afterAll(async () => {
    await worker?.close();
    await proxy.stop();
    await ctx.close();
  });

  const countEvents = async (eventType: string) =>
    (await ctx.deps.pg.query('SELECT count(*)::int AS n FROM audit_logs WHERE event_type = $1', [eventType])).rows[0].n as number;

  it('keeps running while PostgreSQL is down, retries, and stores every event once when it returns', async () => {
    worker = startAuditWorker({ ...ctx.env, DATABASE_URL: proxy.urlFor(ctx.env.DATABASE_URL), WORKER_CONCURRENCY: 2 }, ctx.deps.logger);
    await recordAudit(ctx.deps.pg, null, { event_type: 'test.before_outage', action: 'create' });
    await waitFor(async () => (await countEvents('test.before_outage')) === 1, 'the first event');

    await proxy.stop();
    for (let index = 0; index < 5; index += 1) await recordAudit(ctx.deps.pg, null, { event_type: 'test.during_outage', action: 'create', resource_id: index });
    // Attempts fail while the database is away and are scheduled for a retry; the worker stays up.
    await waitFor(async () => (await ctx.deps.queues.audit.getDelayedCount()) >= 1, 'a failed attempt scheduled for retry');
    expect(worker.worker.isRunning()).toBe(true);

    await proxy.start();
    await waitFor(async () => (await countEvents('test.during_outage')) === 5, 'the retried events');
    await waitFor(async () => (await ctx.deps.queues.audit.getJobCounts('waiting', 'active', 'delayed')).delayed === 0, 'the retries to finish');
    expect(await countEvents('test.during_outage')).toBe(5);
    const ids = await ctx.deps.pg.query(`SELECT resource_id FROM audit_logs WHERE event_type = 'test.during_outage' ORDER BY resource_id`);
    expect(ids.rows.map((row) => row.resource_id)).toEqual(['0', '1', '2', '3', '4']);
  });

  it('stores a redelivered event (same event id) only once', async () => {
    const event = queuedEventFor({ event_type: 'test.redelivered', action: 'update' });
    await ctx.deps.queues.audit.add(AUDIT_JOB, event);
    await ctx.deps.queues.audit.add(AUDIT_JOB, event);
    await ctx.deps.queues.audit.add(AUDIT_JOB, event);
    await waitFor(async () => (await ctx.deps.queues.audit.getJobCounts('waiting', 'active')).waiting === 0, 'the jobs to be taken');
    await waitFor(async () => (await countEvents('test.redelivered')) >= 1, 'the event');
    await waitFor(async () => (await ctx.deps.queues.audit.getActiveCount()) === 0, 'the jobs to finish');
    expect(await countEvents('test.redelivered')).toBe(1);
  });

  it('fails a malformed event for inspection instead of retrying it', async () => {
    const job = await ctx.deps.queues.audit.add(AUDIT_JOB, { event_type: 'missing everything' }, { attempts: 5 });
    await waitFor(async () => (await job.getState()) === 'failed', 'the job to fail');
    const failed = await ctx.deps.queues.audit.getJob(job.id!);
    expect(failed?.attemptsMade).toBe(1);
    expect(failed?.failedReason).toMatch(/invalid audit event/);
  });

  it('runs as a process with `node --import tsx` and shuts down in order on SIGTERM', async () => {
    await worker?.close();
    worker = null;
    const child = spawn(process.execPath, ['--import', 'tsx', 'audit-worker/src/main.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: ctx.env.DATABASE_URL, REDIS_URL: ctx.env.REDIS_URL, QUEUE_PREFIX: ctx.env.QUEUE_PREFIX, LOG_LEVEL: 'info', NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += String(chunk); });
    child.stderr.on('data', (chunk) => { output += String(chunk); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(async () => output.includes('audit-worker started'), 'the process to start');
      await recordAudit(ctx.deps.pg, null, { event_type: 'test.process', action: 'create' });
      await waitFor(async () => (await countEvents('test.process')) === 1, 'the process to store the event');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('audit-worker stopped');
  });
});
