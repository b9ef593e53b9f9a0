/**
 * Following a server job (an ingest job, an export job) to its end: its server-sent events, read with
 * fetch so the bearer token travels in a header, falling back to polling its status when the stream is
 * unavailable (a proxy that buffers, a dropped connection).
 */
import type { z } from 'zod';
import { getToken } from '../auth/session-store.ts';
import { ApiError, serverErrorOf } from './client.ts';

/**
 * Splits a server-sent-event text buffer into complete events; returns the events' data payloads and
 * the unfinished rest.
 */
export function parseSseBuffer(buffer: string): { events: { event: string; data: string }[]; rest: string } {
  const normalised = buffer.replace(/\r\n/g, '\n');
  const blocks = normalised.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events: { event: string; data: string }[] = [];
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, rest };
}

export interface WatchedJob<Status> {
  /** The job's status URL; its events are at `${url}/events`. */
  url: string;
  schema: z.ZodType<Status>;
  finished(status: Status): boolean;
  /** What a failed status read says, e.g. 'Failed to read the upload job'. */
  readFailure: string;
}

async function fetchStatus<Status>(job: WatchedJob<Status>, signal?: AbortSignal): Promise<Status> {
  const response = await fetch(job.url, { headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'application/json' }, signal });
  const body = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) throw new ApiError(serverErrorOf(body) ?? `${job.readFailure} (${response.status})`, response.status);
  return job.schema.parse(body);
}

async function followEvents<Status>(job: WatchedJob<Status>, onUpdate: (status: Status) => void, signal?: AbortSignal): Promise<Status | null> {
  const response = await fetch(`${job.url}/events`, { headers: { Authorization: `Bearer ${getToken() ?? ''}`, Accept: 'text/event-stream' }, signal });
  if (!response.ok || !response.body) return null;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let last: Status | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const parsed = parseSseBuffer(buffer);
    buffer = parsed.rest;
    for (const event of parsed.events) {
      const status = job.schema.safeParse(JSON.parse(event.data));
      if (!status.success) continue;
      last = status.data;
      onUpdate(last);
      if (job.finished(last)) {
        await reader.cancel().catch(() => undefined);
        return last;
      }
    }
  }
  return last && job.finished(last) ? last : null;
}

const POLL_INTERVAL_MS = 1000;

/** Follows a job to its end, reporting every change; resolves with the finished status. */
export async function watchJob<Status>(job: WatchedJob<Status>, onUpdate: (status: Status) => void, signal?: AbortSignal): Promise<Status> {
  try {
    const finished = await followEvents(job, onUpdate, signal);
    if (finished) return finished;
  } catch (error) {
    if (signal?.aborted) throw error;
    // The stream broke (proxy, network): polling below still gets the job to its end.
    console.warn('Job event stream unavailable; polling instead', error);
  }
  for (;;) {
    const status = await fetchStatus(job, signal);
    onUpdate(status);
    if (job.finished(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
