/**
 * Wakes requests waiting for an ingest job (`?wait=true`) the moment it finishes. One PostgreSQL
 * connection per api process LISTENs on the channel that a trigger on `ingest_jobs` notifies when a
 * job completes or fails (migration 3100), so a feed posting and waiting neither idles between jobs
 * nor keeps the database busy with polls. While that connection is down (PostgreSQL restarting), the
 * waits fall back to short polls and the connection is made again.
 */
import pg from 'pg';
import type { Logger } from '@bioprocess/shared/server/logger';

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
const RECONNECT_MS = 1_000;

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
  let client: pg.Client | null = null;
  let listening = false;
  let connecting = false;
  let closed = false;
  let reconnectTimer: NodeJS.Timeout | null = null;

  const wake = (jobId: string, state?: NotifiedState) => {
    const set = waiters.get(jobId);
    if (set) for (const resolve of [...set]) resolve(state);
  };

  const wakeAll = () => {
    for (const jobId of [...waiters.keys()]) wake(jobId);
  };

  const drop = (lost: pg.Client, error: unknown) => {
    if (client !== lost) return;
    const wasListening = listening;
    client = null;
    listening = false;
    lost.end().catch(() => undefined);
    wakeAll();
    if (closed) return;
    // Said once per outage; the retries every RECONNECT_MS are only debug lines.
    if (wasListening) logger.warn({ err: error }, 'ingest job notifications lost; waits poll until they are back');
    else logger.debug({ err: error }, 'ingest job notifications not connected');
    reconnectTimer ??= setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, RECONNECT_MS);
    reconnectTimer.unref();
  };

  const connect = async () => {
    if (closed || client || connecting) return;
    connecting = true;
    const next = new pg.Client({ connectionString: databaseUrl });
    client = next;
    next.on('notification', (message) => {
      if (message.channel !== JOB_FINISHED_CHANNEL || !message.payload) return;
      // `<id>:<state>`; a bare id from a database not yet migrated.
      const [jobId, state] = message.payload.split(':');
      wake(jobId!, state === 'completed' || state === 'failed' ? state : undefined);
    });
    next.on('error', (error) => drop(next, error));
    next.on('end', () => drop(next, new Error('connection ended')));
    try {
      await next.connect();
      await next.query(`LISTEN ${JOB_FINISHED_CHANNEL}`);
      if (client === next) {
        listening = true;
        logger.debug('listening for finished ingest jobs');
        // Jobs that finished while nobody listened: their waits read their rows again now.
        wakeAll();
      }
    } catch (error) {
      drop(next, error);
    } finally {
      connecting = false;
    }
    if (closed) await next.end().catch(() => undefined);
  };

  return {
    get listening() {
      return listening;
    },
    wait(jobId, atMostMs) {
      // Connects on first use; after a loss the reconnect timer retries, not every wait.
      if (!client && !closed && !reconnectTimer) void connect();
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
      const timer = setTimeout(() => end(), Math.max(0, Math.min(atMostMs, listening ? polls.listeningMs : polls.degradedMs)));
      return { woken, end: () => end() };
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      wakeAll();
      const current = client;
      client = null;
      listening = false;
      if (current) await current.end().catch(() => undefined);
    },
  };
}
