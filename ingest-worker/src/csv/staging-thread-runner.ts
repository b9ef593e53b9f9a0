/**
 * Runs a CSV read pass on a worker thread (staging-thread.ts) and hands its batches, in order, to the
 * job: the thread parses the next batch while the job inserts the previous one. Resolves with the plan,
 * or rejects with CsvRejected / NeedsRowVersions as the pass would, or an Error (retried as transient).
 */
import { Worker } from 'node:worker_threads';
import { CsvRejected, NeedsRowVersions, type CsvPlan, type StagingCheckpoint, type StagingOptions } from './staging-reader.ts';

export type StagingThreadMessage =
  | { type: 'batch'; chunks: Uint8Array[]; points: number; checkpoint: StagingCheckpoint | null }
  | { type: 'progress'; bytesRead: number; rowsRead: number }
  | { type: 'done'; plan: CsvPlan }
  | { type: 'rejected'; message: string }
  | { type: 'needs-row-versions' }
  | { type: 'failed'; message: string };

export interface StagingHandlers {
  batch(chunks: Uint8Array[], points: number, checkpoint: StagingCheckpoint | null): Promise<void>;
  progress(bytesRead: number, rowsRead: number): void;
}

const THREAD_ENTRY = new URL('./staging-thread-boot.mjs', import.meta.url);
/**
 * The thread's heap holds a batch being filled and a little state. The young generation is sized so a
 * read chunk's rows die young (at 16 MB they were promoted, and the pass spent a quarter of its time in
 * GC) while the worker's resident memory stays flat on huge files (the target: under 300 MB for a 1 GiB
 * upload; `npm run bench` measures both). 24 MB stages as fast as 32 MB (1.86 M points/s either way)
 * with a peak of about 255 MB instead of 267-289 MB.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 24, maxOldGenerationSizeMb: 128 };

export function stageInThread(options: StagingOptions, handlers: StagingHandlers, signal: AbortSignal): Promise<CsvPlan> {
  return new Promise<CsvPlan>((resolve, reject) => {
    const thread = new Worker(THREAD_ENTRY, { workerData: options, resourceLimits: THREAD_LIMITS });
    let settled = false;
    /** The thread said how the pass ended; its exit is then expected. */
    let ended = false;
    // Batches are handled strictly in order; the thread gets an ack after each durable insert.
    let queue: Promise<void> = Promise.resolve();
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      void thread.terminate();
      outcome();
    };
    const fail = (error: Error) => finish(() => reject(error));
    const onAbort = () => fail(new Error('ingest-worker is shutting down'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });

    thread.on('message', (message: StagingThreadMessage) => {
      if (message.type !== 'batch' && message.type !== 'progress') ended = true;
      switch (message.type) {
        case 'batch':
          queue = queue.then(async () => {
            if (settled) return;
            await handlers.batch(message.chunks, message.points, message.checkpoint);
            thread.postMessage({ type: 'ack' });
          });
          queue.catch((error: unknown) => fail(error as Error));
          return;
        case 'progress':
          handlers.progress(message.bytesRead, message.rowsRead);
          return;
        case 'done':
          void queue.then(() => finish(() => resolve(message.plan)), () => undefined);
          return;
        case 'rejected':
          // Let an insert still running end before the caller drops the staging table.
          void queue.finally(() => fail(new CsvRejected(message.message))).catch(() => undefined);
          return;
        case 'needs-row-versions':
          void queue.finally(() => fail(new NeedsRowVersions())).catch(() => undefined);
          return;
        case 'failed':
          void queue.finally(() => fail(new Error(message.message))).catch(() => undefined);
      }
    });
    thread.on('error', (error) => fail(error));
    thread.on('exit', (code) => {
      if (!ended) fail(new Error(`the CSV staging thread stopped (exit code ${code})`));
    });
  });
}
