/**
 * The order in which queued jobs ran, for the fairness tests, without timing anything:
 * - BullMQ's own event stream of a queue says in which order jobs were taken (`active`), parked
 *   (`delayed`) and finished;
 * - a trigger on a job table logs, in statement order, every change of a job's state: a job runs from
 *   its change to `running` (made once its worker let it run) to its change to `completed` or `failed`.
 */
import type { TestContext } from './test-context.ts';

export interface QueueEvent { event: string; jobId: string }

/** The queue's event stream, oldest first. */
export async function queueEvents(ctx: TestContext, queue: string): Promise<QueueEvent[]> {
  const entries = await ctx.deps.redis.xrange(`${ctx.env.QUEUE_PREFIX}:${queue}:events`, '-', '+');
  return entries.map(([, fields]) => {
    const map = new Map<string, string>();
    for (let index = 0; index + 1 < fields.length; index += 2) map.set(fields[index]!, fields[index + 1]!);
    return { event: map.get('event') ?? '', jobId: map.get('jobId') ?? '' };
  }).filter((entry) => entry.jobId !== '');
}

export async function clearQueueEvents(ctx: TestContext, queue: string): Promise<void> {
  await ctx.deps.redis.del(`${ctx.env.QUEUE_PREFIX}:${queue}:events`);
}

/** The jobs in the order they were taken to run (activations that did not end in a park). */
export function takenInOrder(events: QueueEvent[]): string[] {
  return events.flatMap((entry, index) => {
    if (entry.event !== 'active') return [];
    const next = events.find((later, laterIndex) => laterIndex > index && later.jobId === entry.jobId && later.event !== 'active');
    return next?.event === 'completed' || next?.event === 'failed' ? [entry.jobId] : [];
  });
}

/** Starts logging every state change of the rows of `table` (ingest_jobs or export_jobs). */
export async function logJobStates(ctx: TestContext, table: 'ingest_jobs' | 'export_jobs'): Promise<void> {
  await ctx.deps.pg.query(`
    CREATE TABLE IF NOT EXISTS test_job_states (seq BIGSERIAL PRIMARY KEY, job_id UUID NOT NULL, state TEXT NOT NULL);
    CREATE OR REPLACE FUNCTION test_log_job_state() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_job_states (job_id, state) VALUES (NEW.id, NEW.state);
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS test_log_job_state ON ${table};
    CREATE TRIGGER test_log_job_state AFTER UPDATE OF state ON ${table}
      FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION test_log_job_state();
    TRUNCATE test_job_states;
  `);
}

export interface Run { jobId: string; from: number; to: number }

/** Each job's run, as positions in the state log: from its change to running to its end. */
export async function runsOfJobs(ctx: TestContext): Promise<Run[]> {
  const { rows } = await ctx.deps.pg.query<{ job_id: string; state: string; seq: string }>('SELECT job_id, state, seq FROM test_job_states ORDER BY seq');
  const runs: Run[] = [];
  const started = new Map<string, number>();
  rows.forEach((row, index) => {
    if (row.state === 'running' && !started.has(row.job_id)) started.set(row.job_id, index);
    if ((row.state === 'completed' || row.state === 'failed') && started.has(row.job_id)) {
      runs.push({ jobId: row.job_id, from: started.get(row.job_id)!, to: index });
      started.delete(row.job_id);
    }
  });
  return runs;
}

/** The most runs of the given jobs under way at one moment. */
export function mostAtOnce(runs: Run[], jobIds: ReadonlySet<string>): number {
  const own = runs.filter((run) => jobIds.has(run.jobId));
  return Math.max(0, ...own.map((run) => own.filter((other) => other.from <= run.from && other.to > run.from).length));
}
