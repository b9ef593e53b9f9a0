/**
 * The live event streams of one api process: each stream follows some instruments of its
 * organisation; the process's feed of the points-stored stream (points-stored-feed.ts) is fanned out
 * to them, each announcement becoming one event on the streams that follow one of its instruments,
 * with the stream id as the event id. A stream opened with Last-Event-ID first receives the events it
 * missed (read from the Redis stream), then the live ones; an id the stream no longer covers gets a
 * `reset`. Ids are each stream's dedup key: nothing is sent twice, nothing after the resume point is
 * left out.
 *
 * Bounds: streams per organisation (this process), instruments per stream, bytes a client leaves
 * unread (past it the stream ends and the client resumes from its last id), a stream's lifetime.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Redis } from '@bioprocess/shared/server/redis';
import type { Logger } from '@bioprocess/shared/server/logger';
import {
  compareStreamIds, pointsStoredCovers, readPointsStoredBetween, type PointsStoredAnnouncement,
} from '@bioprocess/shared/server/points-stored';
import { LIVE_MESSAGES, type LiveDeletion, type LivePoints, type LiveReady } from '@bioprocess/shared/live';
import { HttpError } from '../platform/http-error.ts';
import { PointsStoredFeed } from './points-stored-feed.ts';
import { readAnnouncedReadings, type CarriedReadings } from './announced-readings.ts';

/** A comment (and the position, when it moved) this often keeps proxies from closing an idle stream. */
const KEEP_ALIVE_MS = 15_000;
/** Bytes a stream may hold unsent: a client this far behind reconnects and resumes instead. */
const MAX_UNSENT_BYTES = 4 * 1024 * 1024;
/** Missed events a resumed stream replays at most; further behind, it is reset. */
const MAX_CATCH_UP_EVENTS = 10_000;

export interface LiveLimits {
  connectionsPerOrganization: number;
  inlinePoints: number;
  connectionMaxMs: number;
}

export interface LiveUsage {
  connections: number;
  /** Events written to this process's streams since it started. */
  eventsSent: number;
}

interface Chunk {
  id: string | null;
  text: string;
}

class LiveConnection {
  readonly id = randomUUID();
  /** Events up to this id were sent (or were before the resume point): later ones only are written. */
  sentUpTo: string;
  /** Chunks held while the stream catches up (and before its response is opened). */
  pending: Chunk[] | null = [];
  response: ServerResponse | null = null;
  lastWrite = Date.now();
  lastPositionSent: string;
  timers: NodeJS.Timeout[] = [];

  constructor(readonly organizationId: number, readonly instruments: ReadonlySet<number>, from: string) {
    this.sentUpTo = from;
    this.lastPositionSent = from;
  }

  follows(entry: PointsStoredAnnouncement): number[] {
    if (entry.organizationId !== this.organizationId) return [];
    return entry.instrumentIds.filter((id) => this.instruments.has(id));
  }
}

function eventText(id: string | null, event: string, data: unknown): string {
  return `${id === null ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The event of an announcement on a stream following `instrumentIds` of it. */
function announcementEvent(entry: PointsStoredAnnouncement, instrumentIds: number[], carried: CarriedReadings): string {
  if (entry.kind === 'deletion') {
    const data: LiveDeletion = { instrument_ids: instrumentIds, from_ms: entry.fromMs, to_ms: entry.toMs };
    return eventText(entry.id, 'deletion', data);
  }
  const readings = carried.get(entry.id);
  const followed = new Set(instrumentIds);
  const data: LivePoints = {
    instrument_ids: instrumentIds, from_ms: entry.fromMs, to_ms: entry.toMs,
    readings: readings ? readings.filter((reading) => followed.has(reading.instrument_id)) : null,
  };
  return eventText(entry.id, 'points', data);
}

export class LiveHub {
  private readonly byOrganization = new Map<number, Set<LiveConnection>>();
  private readonly feed: PointsStoredFeed;
  private unlisten: (() => void) | null = null;
  /** The last id whose events every registered stream has been handed. */
  private delivered = '0-0';
  private eventsSent = 0;
  private closed = false;

  constructor(private readonly deps: {
    redisUrl: string; prefix: string; logger: Logger; clickhouse: ClickHouseClient; redis: Redis; limits: LiveLimits;
  }) {
    this.feed = new PointsStoredFeed({ redisUrl: deps.redisUrl, prefix: deps.prefix, logger: deps.logger });
  }

  usage(organizationId: number): LiveUsage {
    return { connections: this.byOrganization.get(organizationId)?.size ?? 0, eventsSent: this.eventsSent };
  }

  /**
   * Opens a stream: checks the organisation's budget, reads what it missed after `lastEventId`, then
   * answers on `response` (the caller hijacked it only once this resolved, so a refusal is plain JSON).
   */
  async open(organizationId: number, instrumentIds: readonly number[], lastEventId: string | null): Promise<{ start(response: ServerResponse): void }> {
    if (this.closed) throw new HttpError(503, LIVE_MESSAGES.unavailable);
    try {
      await this.feed.start();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'live feed cannot start');
      throw new HttpError(503, LIVE_MESSAGES.unavailable);
    }
    // Counted and joined in one step after the wait, so streams opening together share one set.
    const open = this.byOrganization.get(organizationId) ?? new Set<LiveConnection>();
    if (open.size >= this.deps.limits.connectionsPerOrganization) throw new HttpError(429, LIVE_MESSAGES.tooManyConnections(this.deps.limits.connectionsPerOrganization));
    this.unlisten ??= this.feed.listen({ entries: (batch) => this.deliver(batch), reset: (position, reason) => this.resetAll(position, reason) });
    const position = this.feed.position;
    if (this.delivered === '0-0') this.delivered = position;
    // Events up to the later of the two are not written live: the missed ones are read below.
    const from = lastEventId !== null && compareStreamIds(lastEventId, position) > 0 ? lastEventId : position;
    const connection = new LiveConnection(organizationId, new Set(instrumentIds), from);
    open.add(connection);
    this.byOrganization.set(organizationId, open);
    const first: Chunk[] = [];
    try {
      if (lastEventId !== null && compareStreamIds(lastEventId, position) < 0) first.push(...await this.missedEvents(connection, lastEventId, position));
    } catch (error) {
      this.remove(connection);
      this.deps.logger.warn({ err: error }, 'live stream could not read the events it missed');
      throw new HttpError(503, LIVE_MESSAGES.unavailable);
    }
    const ready: LiveReady = { connection_id: connection.id, instrument_ids: [...instrumentIds], resumed: lastEventId !== null };
    first.push({ id: from, text: eventText(from, 'ready', ready) });
    // Live events that arrived while the missed ones were read come after them.
    connection.pending = [...first, ...connection.pending ?? []];
    return { start: (response) => this.attach(connection, response) };
  }

  /** Ends every stream (the server stops) and the feed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const connections of this.byOrganization.values()) {
      for (const connection of connections) this.end(connection, 'the server is stopping');
    }
    this.unlisten?.();
    await this.feed.stop();
  }

  /** The events of the entries after `after` up to `upTo` that the stream follows (or a reset). */
  private async missedEvents(connection: LiveConnection, after: string, upTo: string): Promise<Chunk[]> {
    const { redis, prefix } = this.deps;
    const missed = await pointsStoredCovers(redis, prefix, after)
      ? await readPointsStoredBetween(redis, prefix, after, upTo, MAX_CATCH_UP_EVENTS)
      : null;
    if (missed === null || missed.length >= MAX_CATCH_UP_EVENTS) {
      const reason = missed === null ? 'the events after Last-Event-ID are no longer kept' : 'too many events were missed';
      return [{ id: upTo, text: eventText(upTo, 'reset', { reason }) }];
    }
    const carried = await readAnnouncedReadings(this.deps.clickhouse, missed, this.deps.limits.inlinePoints, (entry) => connection.follows(entry));
    const chunks: Chunk[] = [];
    for (const entry of missed) {
      const followed = connection.follows(entry);
      if (followed.length > 0) chunks.push({ id: entry.id, text: announcementEvent(entry, followed, carried) });
    }
    return chunks;
  }

  private async deliver(batch: readonly PointsStoredAnnouncement[]): Promise<void> {
    const followers = (entry: PointsStoredAnnouncement): number[] => {
      const ids = new Set<number>();
      for (const connection of this.byOrganization.get(entry.organizationId) ?? []) {
        for (const id of connection.follows(entry)) ids.add(id);
      }
      return [...ids];
    };
    let carried: CarriedReadings = new Map();
    try {
      carried = await readAnnouncedReadings(this.deps.clickhouse, batch, this.deps.limits.inlinePoints, followers);
    } catch (error) {
      // Without their points the events still go: each client reads the range itself.
      this.deps.logger.warn({ err: error }, 'live events go without their points: ClickHouse read failed');
    }
    for (const entry of batch) {
      for (const connection of this.byOrganization.get(entry.organizationId) ?? []) {
        // Already sent while the stream caught up, or before its resume point.
        if (compareStreamIds(entry.id, connection.sentUpTo) <= 0) continue;
        const followed = connection.follows(entry);
        if (followed.length === 0) continue;
        this.send(connection, { id: entry.id, text: announcementEvent(entry, followed, carried) });
      }
    }
    this.delivered = batch[batch.length - 1]!.id;
  }

  private resetAll(position: string, reason: string): void {
    for (const connections of this.byOrganization.values()) {
      for (const connection of connections) this.send(connection, { id: position, text: eventText(position, 'reset', { reason }) });
    }
    this.delivered = position;
  }

  private hold(connection: LiveConnection, chunk: Chunk): void {
    if (connection.pending) connection.pending.push(chunk);
    else this.write(connection, chunk);
  }

  private send(connection: LiveConnection, chunk: Chunk): void {
    if (chunk.id !== null) connection.sentUpTo = chunk.id;
    this.hold(connection, chunk);
  }

  private write(connection: LiveConnection, chunk: Chunk): void {
    const response = connection.response;
    if (!response || response.writableEnded) return;
    response.write(chunk.text);
    this.eventsSent += 1;
    connection.lastWrite = Date.now();
    if (chunk.id !== null) connection.lastPositionSent = chunk.id;
    if (response.writableLength > MAX_UNSENT_BYTES) this.end(connection, 'the client fell behind; reconnect to resume');
  }

  private attach(connection: LiveConnection, response: ServerResponse): void {
    connection.response = response;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // The client may have left while the stream was prepared.
    if (response.closed || response.destroyed) {
      this.remove(connection);
      return;
    }
    response.once('close', () => this.remove(connection));
    const pending = connection.pending ?? [];
    connection.pending = null;
    for (const chunk of pending) this.write(connection, chunk);
    const keepAlive = setInterval(() => {
      // The position moves on even when nothing this stream follows was written, so a resume reads little.
      const position = compareStreamIds(this.delivered, connection.sentUpTo) > 0 ? this.delivered : connection.sentUpTo;
      if (compareStreamIds(position, connection.lastPositionSent) > 0) {
        connection.sentUpTo = position;
        this.write(connection, { id: position, text: eventText(position, 'position', {}) });
      } else if (Date.now() - connection.lastWrite >= KEEP_ALIVE_MS) {
        this.write(connection, { id: null, text: ': keep-alive\n\n' });
      }
    }, KEEP_ALIVE_MS);
    keepAlive.unref();
    // A stream lasts a while: the client reconnects, authenticating again, and resumes where it was.
    const lifetime = setTimeout(() => this.end(connection, 'the stream reached its time limit; reconnect to resume'), this.deps.limits.connectionMaxMs);
    lifetime.unref();
    connection.timers.push(keepAlive, lifetime);
  }

  private end(connection: LiveConnection, reason: string): void {
    const response = connection.response;
    if (response && !response.writableEnded) {
      response.end(eventText(null, 'end', { reason }));
    }
    this.remove(connection);
  }

  private remove(connection: LiveConnection): void {
    for (const timer of connection.timers) clearTimeout(timer);
    connection.timers = [];
    const open = this.byOrganization.get(connection.organizationId);
    if (!open) return;
    open.delete(connection);
    if (open.size === 0) this.byOrganization.delete(connection.organizationId);
  }
}
