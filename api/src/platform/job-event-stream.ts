/**
 * The server-sent-event stream of a job's progress (ingest jobs, export jobs): `event: progress` with
 * the job's status whenever it changed, keep-alive comments while it did not, and `event: end` with the
 * last status once the job finished. Progress is read every EVENT_POLL_MS; the end is sent as soon as
 * the job's finish is announced (finish-events.ts). Clients read it with fetch (not EventSource) so the
 * bearer token travels in a header. The caller reads the job first, so a 404 is answered as JSON
 * before the response becomes a stream.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JobFinishEvents } from '../ingest-jobs/finish-events.ts';

const EVENT_POLL_MS = 250;
const KEEP_ALIVE_MS = 15_000;

export interface JobEventSource<Row> {
  id: string;
  /** The row read by the caller (which answered 404 if there was none). */
  first: Row;
  /** Reads the row again. */
  load(): Promise<Row>;
  status(row: Row): unknown;
  finished(row: Row): boolean;
}

export async function streamJobEvents<Row>(request: FastifyRequest, reply: FastifyReply, events: JobFinishEvents, source: JobEventSource<Row>): Promise<void> {
  let job = source.first;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  raw.once('close', () => { closed = true; });
  let lastSent = '';
  let lastWrite = Date.now();
  for (;;) {
    const status = JSON.stringify(source.status(job));
    if (status !== lastSent) {
      raw.write(`event: progress\ndata: ${status}\n\n`);
      lastSent = status;
      lastWrite = Date.now();
    } else if (Date.now() - lastWrite > KEEP_ALIVE_MS) {
      raw.write(': keep-alive\n\n');
      lastWrite = Date.now();
    }
    if (source.finished(job) || closed) break;
    await events.wait(source.id, EVENT_POLL_MS).woken;
    try {
      job = await source.load();
    } catch (error) {
      request.log.warn({ err: error }, 'job event stream stopped');
      break;
    }
  }
  if (!closed) {
    raw.write(`event: end\ndata: ${lastSent}\n\n`);
    raw.end();
  }
}
