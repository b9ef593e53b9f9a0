/**
 * The threads that parse bulk posts (bulk-thread.ts): one kept from when the api listens, more started
 * as posts need them, all stopped with the app. A small post (a feed's few seconds of readings) is
 * parsed on the api's own thread: handing it to a thread and back costs more than parsing it.
 */
import { Piscina } from 'piscina';
import { prepareBulkPost, type BulkPreparation } from './bulk-prepare.ts';
import type { BulkTask } from './bulk-thread.ts';

export interface BulkPool {
  prepare(task: BulkTask): Promise<BulkPreparation>;
  /**
   * Keeps one thread started from now on. A thread takes a third of a second or more to start (the
   * TypeScript loader); the first large posts after the api starts serving must not wait for it, nor
   * posts after a quiet minute. Called once the api listens: an api built for a test keeps none.
   */
  keepOneThread(): void;
  close(): Promise<void>;
}

function ownsItsMemory(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length && bytes.length >= 64 * 1024;
}

/** Bodies below this are parsed in place (a 50-point post is about 4 KB). */
const IN_PLACE_MAX_BYTES = 16 * 1024;

export function createBulkPool(threads: number): BulkPool {
  let pool: Piscina<BulkTask, BulkPreparation> | null = null;
  const started = (minThreads: number) => {
    pool ??= new Piscina<BulkTask, BulkPreparation>({
      filename: new URL('./bulk-thread-boot.mjs', import.meta.url).href,
      minThreads: Math.min(minThreads, threads),
      maxThreads: threads,
      // Threads beyond the kept one stay while feeds keep posting.
      idleTimeout: 60_000,
    });
    return pool;
  };
  return {
    // A body in its own memory (Fastify concatenates large ones into a fresh buffer) is moved, not copied.
    prepare: async (task) => {
      if (task.body.length < IN_PLACE_MAX_BYTES) return prepareBulkPost(task.body, task.organizationId, task.versionSeq, task.echo);
      return started(0).run(task, ownsItsMemory(task.body) ? { transferList: [task.body.buffer as ArrayBuffer] } : {});
    },
    keepOneThread: () => {
      started(1);
    },
    close: async () => {
      await pool?.destroy();
    },
  };
}
