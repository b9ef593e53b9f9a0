/**
 * Streamed answers (exports, time-series reads) counted per organisation. A stream holds a slot of its
 * organisation from admission until its response closes; past STREAMS_PER_ORGANIZATION open streams,
 * or with STREAM_BUFFERED_BYTES_PER_ORGANIZATION of its answers held unsent, the next one answers 429.
 * A stream is pulled from its source only when the response can take more, so what it holds is the
 * chunk the socket has not taken plus at most one more; a client that takes nothing for
 * STREAM_STALL_TIMEOUT_MS has its stream ended, which frees the slot (not the connection timeout).
 */
import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiEnv } from '@bioprocess/shared/server/config';
import { HttpError } from './http-error.ts';

export interface StreamUsage {
  /** Streams open (admitted and not yet closed). */
  streams: number;
  /** Bytes of their answers produced and not yet handed to the kernel. */
  bufferedBytes: number;
  /** Streams ended because their client stopped reading, since the process started. */
  stalled: number;
}

export const STREAM_MESSAGES = {
  tooManyStreams: (limit: number) =>
    `Your organisation already has ${limit} streamed answers open (exports or reads); wait for one to finish and try again.`,
  tooManyBytes: (limit: number) =>
    `Your organisation's open streamed answers hold ${limit} bytes its clients have not read yet; wait for them to be read and try again.`,
} as const;

/** Thrown into a stream whose client took nothing for the stall timeout. */
export class StreamStalledError extends Error {
  constructor(ms: number) {
    super(`the client read nothing of the answer for ${ms} ms`);
    this.name = 'StreamStalledError';
  }
}

interface OpenStream {
  /** The readable handed to Fastify, once the route streams (null while it prepares). */
  readable: Readable | null;
  response: ServerResponse;
}

/** A slot of an organisation's budget, held until its response closes. */
export interface StreamSlot {
  /** The answer's chunks as a stream that is pulled only as the client reads and ends when the client stalls. */
  stream(source: AsyncIterable<Buffer | string>): Readable;
}

export class StreamBudget {
  private readonly open = new Map<string, Set<OpenStream>>();
  private stalledCount = 0;

  constructor(private readonly limits: { streams: number; bufferedBytes: number; stallMs: number }) {}

  usage(owner: string | number): StreamUsage {
    let bufferedBytes = 0;
    const streams = this.open.get(String(owner)) ?? new Set();
    for (const stream of streams) bufferedBytes += bufferedOf(stream);
    return { streams: streams.size, bufferedBytes, stalled: this.stalledCount };
  }

  /** Takes a slot for the reply's answer (429 past the budget); it is given back when the response closes, however it ends. */
  admit(owner: string | number, reply: FastifyReply): StreamSlot {
    const key = String(owner);
    const usage = this.usage(key);
    if (usage.streams >= this.limits.streams) throw new HttpError(429, STREAM_MESSAGES.tooManyStreams(this.limits.streams));
    if (usage.bufferedBytes >= this.limits.bufferedBytes) throw new HttpError(429, STREAM_MESSAGES.tooManyBytes(this.limits.bufferedBytes));
    const entry: OpenStream = { readable: null, response: reply.raw };
    const streams = this.open.get(key) ?? new Set<OpenStream>();
    streams.add(entry);
    this.open.set(key, streams);
    const release = () => {
      streams.delete(entry);
      if (streams.size === 0 && this.open.get(key) === streams) this.open.delete(key);
    };
    if (reply.raw.closed) release();
    else reply.raw.once('close', release);
    return {
      stream: (source) => {
        entry.readable = this.pulled(source);
        return entry.readable;
      },
    };
  }

  private pulled(source: AsyncIterable<Buffer | string>): Readable {
    const iterator = source[Symbol.asyncIterator]();
    let stallTimer: NodeJS.Timeout | null = null;
    const stopWaiting = () => {
      if (stallTimer) clearTimeout(stallTimer);
      stallTimer = null;
    };
    const readable = new Readable({
      // Any chunk fills it: the next is pulled only once the response took this one.
      highWaterMark: 1,
      read: () => {
        stopWaiting();
        iterator.next().then(({ value, done }) => {
          if (readable.destroyed) return;
          if (done) {
            readable.push(null);
            return;
          }
          const chunk = typeof value === 'string' ? Buffer.from(value) : value;
          if (!readable.push(chunk)) {
            // The response did not take it: the client is not reading. It has this long to take it.
            stallTimer = setTimeout(() => {
              this.stalledCount += 1;
              readable.destroy(new StreamStalledError(this.limits.stallMs));
            }, this.limits.stallMs);
            stallTimer.unref();
          }
        }, (error: unknown) => readable.destroy(error instanceof Error ? error : new Error(String(error))));
      },
      destroy: (error, callback) => {
        stopWaiting();
        // Ends the source (its finally blocks cancel what it started), whether it finished or not.
        Promise.resolve(iterator.return?.()).then(() => callback(error), () => callback(error));
      },
    });
    return readable;
  }
}

function bufferedOf(stream: OpenStream): number {
  if (stream.response.closed) return 0;
  return (stream.readable?.readableLength ?? 0) + stream.response.writableLength;
}

const budgets = new WeakMap<object, StreamBudget>();

/** The process's budget, one per app (its deps' env). */
export function streamBudgetOf(deps: { env: Pick<ApiEnv, 'STREAMS_PER_ORGANIZATION' | 'STREAM_BUFFERED_BYTES_PER_ORGANIZATION' | 'STREAM_STALL_TIMEOUT_MS'> }): StreamBudget {
  let budget = budgets.get(deps);
  if (!budget) {
    budget = new StreamBudget({
      streams: deps.env.STREAMS_PER_ORGANIZATION,
      bufferedBytes: deps.env.STREAM_BUFFERED_BYTES_PER_ORGANIZATION,
      stallMs: deps.env.STREAM_STALL_TIMEOUT_MS,
    });
    budgets.set(deps, budget);
  }
  return budget;
}
