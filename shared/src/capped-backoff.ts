/**
 * The back-off of the queues' retries: a delay doubling from a base at each attempt, never longer than
 * a cap, so a job retried through a long outage is taken up again soon after its end.
 */
export function cappedExponentialDelay(attemptsMade: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
}
