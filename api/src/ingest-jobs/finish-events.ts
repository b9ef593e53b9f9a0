/**
 * Wakes requests waiting for an ingest job (`?wait=true`) the moment it finishes. One PostgreSQL
 * connection per api process LISTENs on the channel that a trigger on `ingest_jobs` notifies when a
 * job completes or fails (migration 3100), so a feed posting and waiting neither idles between jobs
 * nor keeps the database busy with polls. While that connection is down (PostgreSQL restarting), the
 * waits fall back to short polls and the connection is made again.
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import { listenConnection } from '../platform/listen-connection.ts';

export const JOB_FINISHED_CHANNEL = 'ingest_job_finished';

/** How long a wait sleeps between reads of the job row: long when notifications arrive, short when not. */
export interface FinishEventPolls {
  listeningMs: number;
  degradedMs: number;
}
/**
 * While notifications arrive, a wait reads its row only when woken, or after a long while as a last
 * resort: a thousand feeds waiting must not cost a thousand reads a second. Losing the connection or
 * getting it back wakes every wait, so none sleeps through a notification that could not be heard.
 */
const DEFAULT_POLLS: FinishEventPolls = { listeningMs: 30_000, degradedMs: 25 };

/** What a notification says of the job: it finished so. */
export type NotifiedState = 'completed' | 'failed';

export interface FinishWait {
  /**
   * Resolves on the job's notification (with the state it names), after the poll interval, or on
   * end(), whichever comes first (then with undefined: read the row to know).
   */
  readonly woken: Promise<NotifiedState | undefined>;
  /** Stops the wait (resolving `woken`) and forgets it. */
  end(): void;
}

export interface JobFinishEvents {
  /**
   * Starts listening for the job; call it before reading the job's row, so a finish between the read
   * and the wait is not missed. `atMostMs` caps the sleep (a wait's deadline).
   */
  wait(jobId: string, atMostMs: number): FinishWait;
  /** True while notifications are being received. */
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createJobFinishEvents(databaseUrl: string, logger: Logger, polls: FinishEventPolls = DEFAULT_POLLS): JobFinishEvents {
  const waiters = new Map<string, Set<(state?: NotifiedState) => void>>();
  const wake = (jobId: string, state?: NotifiedState) => {
    const set = waiters.get(jobId);
    if (set) for (const resolve of [...set]) resolve(state);
  };

  const wakeAll = () => {
    for (const jobId of [...waiters.keys()]) wake(jobId);
  };

  const connection = listenConnection(databaseUrl, [JOB_FINISHED_CHANNEL], {
    notification: (_channel, payload) => {
      if (!payload) return;
      // `<id>:<state>`; a bare id from a database not yet migrated.
      const [jobId, state] = payload.split(':');
      wake(jobId!, state === 'completed' || state === 'failed' ? state : undefined);
    },
    // Jobs that finished while nobody listened: their waits read their rows again now.
    listening: wakeAll,
    lost: wakeAll,
  }, logger, 'ingest job notifications');

  return {
    get listening() {
      return connection.listening;
    },
    wait(jobId, atMostMs) {
      // Connects on first use; after a loss the reconnect timer retries, not every wait.
      connection.start();
      let set = waiters.get(jobId);
      if (!set) {
        set = new Set();
        waiters.set(jobId, set);
      }
      const entry = set;
      let settle!: (state?: NotifiedState) => void;
      const woken = new Promise<NotifiedState | undefined>((resolve) => {
        settle = resolve;
      });
      const end = (state?: NotifiedState) => {
        clearTimeout(timer);
        entry.delete(end);
        if (entry.size === 0 && waiters.get(jobId) === entry) waiters.delete(jobId);
        settle(state);
      };
      entry.add(end);
      // The sleep is decided now: a notification is certain only once LISTEN has been answered.
      const timer = setTimeout(() => end(), Math.max(0, Math.min(atMostMs, connection.listening ? polls.listeningMs : polls.degradedMs)));
      return { woken, end: () => end() };
    },
    async close() {
      wakeAll();
      await connection.close();
    },
  };
}
