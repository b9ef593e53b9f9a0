/**
 * The threads that parse bulk posts (bulk-thread.ts), started as posts need them, each stopped after a
 * quiet minute and all with the app. A small post (a feed's few seconds of readings) is parsed on the
 * api's own thread: handing it to a thread and back costs more than parsing it. So is a post of up to
 * a megabyte while no thread is ready: a thread takes a third of a second or more to start (the
 * TypeScript loader), much longer than such a post takes to parse, so the first posts after a start or
 * a quiet minute do not wait for one; meanwhile a thread starts for those that follow.
 */
import { Piscina } from 'piscina';
import { prepareBulkPost, type BulkPreparation } from './bulk-prepare.ts';
import type { BulkTask } from './bulk-thread.ts';

export interface BulkPool {
  prepare(task: BulkTask): Promise<BulkPreparation>;
  /** Threads started and ready for posts now. */
  readyThreads(): number;
  close(): Promise<void>;
}

function ownsItsMemory(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length && bytes.length >= 64 * 1024;
}

/** Bodies below this are parsed in place (a 50-point post is about 4 KB): the body stays the caller's. */
export const PARSED_IN_PLACE_MAX_BYTES = 16 * 1024;
/** Bodies below this are parsed in place while no thread is ready (15,000 points take about 7 ms). */
const IN_PLACE_WHILE_NO_THREAD_MAX_BYTES = 1024 * 1024;
/** What starts a thread: an empty post, refused as such once the thread has loaded. */
const START_TASK: BulkTask = { body: new TextEncoder().encode('{"data":[]}'), organizationId: 0, versionSeq: 0, echo: false };

export function createBulkPool(threads: number): BulkPool {
  const pool = new Piscina<BulkTask, BulkPreparation>({
    filename: new URL('./bulk-thread-boot.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    // Threads take a moment to start (the TypeScript loader): keep them while feeds keep posting.
    idleTimeout: 60_000,
  });
  // Piscina announces a thread once it has loaded its task, and its end (each time with a new view of
  // the thread: it is known by its id).
  const ready = new Set<number>();
  pool.on('workerCreate', (thread: { id: number }) => ready.add(thread.id));
  pool.on('workerDestroy', (thread: { id: number }) => ready.delete(thread.id));
  let starting = false;
  const startThread = () => {
    if (starting) return;
    starting = true;
    pool.run(START_TASK).catch(() => undefined).finally(() => {
      starting = false;
    });
  };
  return {
    // A body in its own memory (Fastify concatenates large ones into a fresh buffer) is moved, not copied.
    prepare: async (task) => {
      const bytes = task.body.length;
      if (bytes < PARSED_IN_PLACE_MAX_BYTES) return prepareBulkPost(task.body, task.organizationId, task.versionSeq, task.echo);
      if (ready.size === 0 && bytes < IN_PLACE_WHILE_NO_THREAD_MAX_BYTES) {
        startThread();
        return prepareBulkPost(task.body, task.organizationId, task.versionSeq, task.echo);
      }
      return pool.run(task, ownsItsMemory(task.body) ? { transferList: [task.body.buffer as ArrayBuffer] } : {});
    },
    readyThreads: () => ready.size,
    close: () => pool.destroy(),
  };
}
