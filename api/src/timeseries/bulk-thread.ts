/**
 * The task of the bulk-parsing threads (bulk-pool.ts). A thread gives the parse a core of its own and a
 * fresh V8 isolate: ioredis, loaded by the api, defines a class that extends String, which makes
 * String#charCodeAt several times slower in any isolate that loaded it.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { prepareBulkPost, type BulkPreparation } from './bulk-prepare.ts';

export interface BulkTask {
  body: Uint8Array;
  organizationId: number;
  versionSeq: number;
  /** Write the answer (the accepted readings); false when the client asked for a minimal answer. */
  echo: boolean;
}

/** Prepares the post; its output buffers are moved to the api's thread, not copied. */
export default function prepareBulkTask(task: BulkTask): BulkPreparation {
  const result = prepareBulkPost(task.body, task.organizationId, task.versionSeq, task.echo);
  if (!result.ok) return result;
  return move({
    get [transferableSymbol]() {
      // The chunks are views of one buffer, which may be listed only once.
      return [...new Set([result.readings.buffer, ...result.chunks.map((chunk) => chunk.buffer)])];
    },
    get [valueSymbol]() {
      return result;
    },
  }) as unknown as BulkPreparation;
}
