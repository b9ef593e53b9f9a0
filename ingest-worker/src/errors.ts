/**
 * Error classification: a job failing for a reason that retrying cannot fix (bad file, unknown
 * column, a job row that vanished) fails at once with a clear message; anything else (a service down,
 * a timeout) is transient and retried with a capped back-off.
 */
import { UnrecoverableError } from 'bullmq';
import { INGEST_JOBS } from '@bioprocess/shared/queues';
import { isPostgresUnreachable } from '@bioprocess/shared/server/postgres';

/** A failure the user must fix; its message is shown on the job. */
export class PermanentJobError extends UnrecoverableError {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P03', '08006', '08001', '53300']);

export function isTransient(error: unknown): boolean {
  if (error instanceof PermanentJobError) return false;
  const code = (error as { code?: string })?.code;
  if ((code && TRANSIENT_CODES.has(code)) || isPostgresUnreachable(error)) return true;
  const message = error instanceof Error ? error.message : String(error);
  // ClickHouse under memory pressure or too many parts: worth retrying later.
  return /timeout|socket hang up|ECONNREFUSED|Too many parts|MEMORY_LIMIT|Connection terminated|connect/i.test(message);
}

/** Back-off for retried jobs: 0.5 s doubling to maxMs (30 s by default), so recovery after an outage takes seconds. */
export function cappedBackoff(attemptsMade: number, maxMs = 30_000): number {
  return Math.min(maxMs, 500 * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
}

/** What a user reads on a job that kept failing for a reason that may pass until its retries ran out. */
export function retriesExhaustedMessage(jobName: string, minutes: number, error: unknown): string {
  const what = jobName === INGEST_JOBS.csv ? 'upload the file again' : jobName === INGEST_JOBS.deletion ? 'request the deletion again' : 'post the data again';
  const cause = error instanceof Error ? error.message : String(error);
  const span = minutes >= 1 ? `${Math.round(minutes)} minute${Math.round(minutes) === 1 ? '' : 's'}` : `${Math.round(minutes * 60)} seconds`;
  return `Nothing was written: the time-series database or the job database could not be reached for ${span} (${cause}). `
    + `Once the platform's health page shows every service up, ${what}.`;
}
