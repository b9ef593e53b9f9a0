/**
 * Error classification: a job failing for a reason that retrying cannot fix (bad file, unknown
 * column, a job row that vanished) fails at once with a clear message; anything else is retried as
 * the ingest retry policy says (shared/src/ingest/retry-policy.ts).
 */
import { UnrecoverableError } from 'bullmq';
import { isTransientFailure } from '@bioprocess/shared/ingest/retry-policy';

/** A failure the user must fix; its message is shown on the job. */
export class PermanentJobError extends UnrecoverableError {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

/** Whether a failure may pass by itself (and is retried for up to INGEST_RETRY_MINUTES). */
export function isTransient(error: unknown): boolean {
  return !(error instanceof PermanentJobError) && isTransientFailure(error);
}
