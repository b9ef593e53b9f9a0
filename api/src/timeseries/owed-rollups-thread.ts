/**
 * The rollups of the bulk posts the api writes itself, stored on a thread of their own
 * (rollup-thread.ts). Composing them (a lookup of the newest stored rows, the figures added, two
 * inserts and the backlog's deletion, for every commit) was a sixth of the api's thread for instrument
 * feeds, the work that limits how many posts it takes; the posts' answers do not wait for it (their
 * rollups are recorded as owed, and reads of rollups wait for them). The commits are formed here as
 * before (owedRollupsCommitter) and sent one at a time.
 *
 * The thread starts with the first commit and stops after a quiet minute, taking its chains with it:
 * the next composition after a restart recomputes the minutes it touches from the points. A commit the
 * thread did not finish (it failed, or the thread died) is logged and stays owed: the ingest-worker's
 * backlog pass takes it up, as when the api dies.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { Logger } from '@bioprocess/shared/server/logger';
import { owedRollupsCommitter, type OwedRollupsFlush } from '@bioprocess/shared/server/owed-rollups';
import type { RollupRequest } from '@bioprocess/shared/server/rollups';
import type { ApiEnv } from '@bioprocess/shared/server/config';

export interface RollupThreadConfig {
  databaseUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  logLevel: string;
}

/** A completed post's owed rollups as the thread receives them: its minute figures still encoded. */
export type ThreadRollups = Omit<RollupRequest, 'minuteFigures'> & { points: number; jobId: string; minuteFigures?: Uint8Array };

export type RollupThreadMessage = { kind: 'store'; id: number; requests: ThreadRollups[] } | { kind: 'close' };
export interface RollupThreadReply {
  id: number;
  error?: { message: string; stack?: string };
}

/** A thread quiet for this long stops (a second isolate and its connections are not kept for nothing). */
const THREAD_IDLE_MS = 60_000;
/** How long a closing thread may take to end its connections before it is stopped. */
const THREAD_CLOSE_MS = 5_000;

export interface OwedRollupsThread extends OwedRollupsFlush<ThreadRollups> {
  /** Waits for the rollups asked for, then stops the thread (a graceful shutdown). */
  close(): Promise<void>;
}

export function createOwedRollupsThread(env: Pick<ApiEnv, 'DATABASE_URL' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'LOG_LEVEL'>, logger: Logger): OwedRollupsThread {
  const config: RollupThreadConfig = { databaseUrl: env.DATABASE_URL, clickhouseUrl: env.CLICKHOUSE_URL, clickhouseDatabase: env.CLICKHOUSE_DATABASE, logLevel: env.LOG_LEVEL };
  let thread: Worker | null = null;
  let idleTimer: NodeJS.Timeout | null = null;
  let nextId = 0;
  const waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();

  const failWaiting = (error: Error) => {
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  const start = (): Worker => {
    const started = new Worker(new URL('./rollup-thread-boot.mjs', import.meta.url), { workerData: config });
    started.on('message', (reply: RollupThreadReply) => {
      const waiter = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (!reply.error) return waiter?.resolve();
      waiter?.reject(Object.assign(new Error(reply.error.message), { stack: reply.error.stack }));
    });
    started.on('error', (error) => {
      logger.warn({ err: error }, 'the rollups thread failed; its rollups stay owed');
      failWaiting(error);
    });
    started.on('exit', () => {
      if (thread === started) thread = null;
      failWaiting(new Error('the rollups thread stopped'));
    });
    return started;
  };
  /** Asks the thread to end its connections and waits for it, stopping it if it does not end in time. */
  const stop = async (stopping: Worker) => {
    if (thread === stopping) thread = null;
    const exited = once(stopping, 'exit').catch(() => undefined);
    stopping.postMessage({ kind: 'close' } satisfies RollupThreadMessage);
    const timer = setTimeout(() => void stopping.terminate(), THREAD_CLOSE_MS);
    await exited;
    clearTimeout(timer);
  };
  const store = (requests: ThreadRollups[]) => new Promise<void>((resolve, reject) => {
    if (idleTimer) clearTimeout(idleTimer);
    thread ??= start();
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    thread.postMessage({ kind: 'store', id, requests } satisfies RollupThreadMessage);
  }).finally(() => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      // The committer sends one commit at a time: none is under way when nothing waits.
      if (thread && waiting.size === 0) void stop(thread);
    }, THREAD_IDLE_MS).unref();
  });
  const committer = owedRollupsCommitter(store, logger);
  return {
    ...committer,
    close: async () => {
      await committer.drain();
      if (idleTimer) clearTimeout(idleTimer);
      if (thread) await stop(thread);
    },
  };
}
