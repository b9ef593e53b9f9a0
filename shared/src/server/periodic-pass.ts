/**
 * A housekeeping pass run at start and then every `intervalMs` (the ingest-worker's reconciler and sweeper, the export-worker's sweep): one pass
 * at a time in this process (a pass asked for while one runs follows it), failures logged at most every
 * 30 s and retried at the next tick (PostgreSQL or Redis down), and a stop that never waits more than
 * two seconds for a pass stuck on a service that is down.
 */
import type { Logger } from './logger.ts';

const PROBLEM_LOG_INTERVAL_MS = 30_000;
const STOP_WAIT_MS = 2_000;

export interface PeriodicPass<Outcome> {
  /** One pass now (also what the timer runs). */
  pass(): Promise<Outcome>;
  stop(): Promise<void>;
}

export function runPeriodically<Outcome>(
  runOnce: () => Promise<Outcome>,
  options: { intervalMs: number; logger: Logger; name: string },
): PeriodicPass<Outcome> {
  let last: Promise<unknown> = Promise.resolve();
  const pass = (): Promise<Outcome> => {
    const next = last.then(runOnce, runOnce);
    last = next.catch(() => undefined);
    return next;
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastProblemLog = 0;
  const tick = () => {
    pass()
      .catch((error: unknown) => {
        if (Date.now() - lastProblemLog > PROBLEM_LOG_INTERVAL_MS) {
          lastProblemLog = Date.now();
          options.logger.warn({ err: error }, `${options.name} pass failed; retrying`);
        }
      })
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs);
      });
  };
  tick();
  return {
    pass,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.race([last, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
    },
  };
}
