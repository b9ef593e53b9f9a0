/**
 * The CSV read pass on a worker thread (started by staging-thread-runner.ts). A thread gives the parse
 * a core of its own while the job's thread inserts the previous batch, and a fresh V8 isolate: ioredis
 * defines a class that extends String, which makes String#charCodeAt, the parser's hot path, several
 * times slower in any isolate that loaded it (measured: 3.2 s against 6.7 s for 10 million points).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CsvRejected, NeedsRowVersions, readAndStageCsv, type StagingOptions } from './staging-reader.ts';
import type { StagingThreadMessage } from './staging-thread-runner.ts';

/** Batches handed over but not yet inserted: one being inserted while the next fills (bounds memory). */
const BATCHES_AHEAD = 1;
const PROGRESS_INTERVAL_MS = 250;

const port = parentPort!;
let credits = BATCHES_AHEAD;
let creditReturned: (() => void) | null = null;
port.on('message', (message: { type: 'ack' }) => {
  if (message.type !== 'ack') return;
  credits += 1;
  creditReturned?.();
  creditReturned = null;
});

const post = (message: StagingThreadMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
let lastProgress = 0;

async function main(): Promise<void> {
  try {
    const plan = await readAndStageCsv(workerData as StagingOptions, {
      async batch(chunks, points, checkpoint) {
        while (credits === 0) await new Promise<void>((resolve) => { creditReturned = resolve; });
        credits -= 1;
        post({ type: 'batch', chunks, points, checkpoint }, chunks.map((chunk) => chunk.buffer as ArrayBuffer));
      },
      progress(bytesRead, rowsRead) {
        if (Date.now() - lastProgress < PROGRESS_INTERVAL_MS) return;
        lastProgress = Date.now();
        post({ type: 'progress', bytesRead, rowsRead });
      },
    });
    post({ type: 'done', plan });
  } catch (error) {
    if (error instanceof CsvRejected) post({ type: 'rejected', message: error.message });
    else if (error instanceof NeedsRowVersions) post({ type: 'needs-row-versions' });
    else post({ type: 'failed', message: (error as Error).message ?? String(error) });
  }
  port.close();
}

void main();
