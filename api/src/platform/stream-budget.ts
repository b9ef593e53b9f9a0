/**
 * Streamed answers (exports, time-series reads) counted per organisation. A stream holds a slot of its
 * organisation from admission until its response closes; past STREAMS_PER_ORGANIZATION open streams,
 * or with STREAM_BUFFERED_BYTES_PER_ORGANIZATION of its answers held unsent, the next one answers 429.
 * A stream is pulled from its source only when the response can take more, so what it holds is the
 * chunk the socket has not taken plus at most one more; a client that takes nothing for
 * STREAM_STALL_TIMEOUT_MS has its stream ended, which frees the slot (not the connection timeout).
 *
 * Reads wait for a slot instead (admitWhenFree): a chart asks for each of its instruments at once, and
 * each read lasts a moment, so refusing them would fail every chart of more series than slots. They
 * wait in order, at most WAITING_PER_SLOT per slot and at most the stall timeout, then answer 429; an
 * organisation whose clients hold its slots unread so makes only its own reads wait.
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
  /** Reads waiting for a slot. */
  waiting: number;
}

export const STREAM_MESSAGES = {
  tooManyStreams: (limit: number) =>
    `Your organisation already has ${limit} streamed answers open (exports or reads); wait for one to finish and try again.`,
  tooManyBytes: (limit: number) =>
    `Your organisation's open streamed answers hold ${limit} bytes its clients have not read yet; wait for them to be read and try again.`,
  tooManyWaiting: (waiting: number) =>
    `Your organisation already has ${waiting} reads waiting for one of its streamed answers to finish; try again when they are answered.`,
  waitedTooLong: (ms: number) =>
    `This read waited ${Math.round(ms / 1000)} s for one of your organisation's streamed answers to finish; try again later.`,
} as const;

/** Reads that may wait per slot of an organisation. */
export const WAITING_PER_SLOT = 8;

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

interface Waiter {
  admit(): void;
}

export class StreamBudget {
  private readonly open = new Map<string, Set<OpenStream>>();
  private readonly waiters = new Map<string, Waiter[]>();
  private stalledCount = 0;

  constructor(private readonly limits: { streams: number; bufferedBytes: number; stallMs: number }) {}

  usage(owner: string | number): StreamUsage {
    let bufferedBytes = 0;
    const streams = this.open.get(String(owner)) ?? new Set();
    for (const stream of streams) bufferedBytes += bufferedOf(stream);
    return { streams: streams.size, bufferedBytes, stalled: this.stalledCount, waiting: this.waiters.get(String(owner))?.length ?? 0 };
  }

  /** The reason the owner may not open one more stream now, or null when it may. */
  private refusal(owner: string): string | null {
    const usage = this.usage(owner);
    if (usage.streams >= this.limits.streams) return STREAM_MESSAGES.tooManyStreams(this.limits.streams);
    if (usage.bufferedBytes >= this.limits.bufferedBytes) return STREAM_MESSAGES.tooManyBytes(this.limits.bufferedBytes);
    return null;
  }

  /**
   * Takes a slot for a short answer (a read), waiting in order for one to be freed when the organisation
   * has none; 429 when too many reads already wait, or when none was freed within the stall timeout.
   */
  async admitWhenFree(owner: string | number, reply: FastifyReply): Promise<StreamSlot> {
    const key = String(owner);
    const queue = this.waiters.get(key) ?? [];
    if (queue.length === 0 && this.refusal(key) === null) return this.admit(key, reply);
    if (queue.length >= this.limits.streams * WAITING_PER_SLOT) throw new HttpError(429, STREAM_MESSAGES.tooManyWaiting(queue.length));
    this.waiters.set(key, queue);
    return new Promise<StreamSlot>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        reply.raw.off('close', gone);
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiters.get(key) === queue) this.waiters.delete(key);
      };
      // Admitted in the same step as the slot was freed, so no newcomer takes it in between.
      const waiter: Waiter = { admit: () => { leave(); resolve(this.admit(key, reply)); } };
      const timer = setTimeout(() => { leave(); reject(new HttpError(429, STREAM_MESSAGES.waitedTooLong(this.limits.stallMs))); }, this.limits.stallMs);
      timer.unref();
      // The client gave up: its place goes to the next.
      const gone = () => { leave(); reject(new HttpError(499, 'the client closed the request while it waited')); };
      reply.raw.once('close', gone);
      queue.push(waiter);
    });
  }

  /** Lets the first waiting read of the owner in, when the owner may open one more stream. */
  private wakeNext(owner: string): void {
    const next = this.waiters.get(owner)?.[0];
    if (next && this.refusal(owner) === null) next.admit();
  }

  /** Takes a slot for the reply's answer (429 past the budget); it is given back when the response closes, however it ends. */
  admit(owner: string | number, reply: FastifyReply): StreamSlot {
    const key = String(owner);
    const refusal = this.refusal(key);
    if (refusal !== null) throw new HttpError(429, refusal);
    const entry: OpenStream = { readable: null, response: reply.raw };
    const streams = this.open.get(key) ?? new Set<OpenStream>();
    streams.add(entry);
    this.open.set(key, streams);
    const release = () => {
      streams.delete(entry);
      if (streams.size === 0 && this.open.get(key) === streams) this.open.delete(key);
      this.wakeNext(key);
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
