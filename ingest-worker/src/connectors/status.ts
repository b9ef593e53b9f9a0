/**
 * A connection's live status as its connector sees it: state, last message, messages and points over
 * the last minute, recent errors and the buffer. The connector publishes it to Redis every few
 * seconds (the api answers it); errors never hold a secret, since sources report messages, not URLs
 * with credentials, and every message passes the logger's scrubber.
 */
import { scrubCredentials } from '@bioprocess/shared/server/logger';
import type { ConnectionState, ConnectionStatus } from '@bioprocess/shared/integrations';
import type { SourceStatusSink } from './source.ts';

const WINDOW_SECONDS = 60;
const ERRORS_KEPT = 10;

/** Counts per second over the last minute, in a ring. */
class MinuteCounter {
  private readonly counts = new Array<number>(WINDOW_SECONDS).fill(0);
  private readonly seconds = new Array<number>(WINDOW_SECONDS).fill(0);

  add(amount: number, nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    const slot = second % WINDOW_SECONDS;
    if (this.seconds[slot] !== second) { this.seconds[slot] = second; this.counts[slot] = 0; }
    this.counts[slot]! += amount;
  }

  total(nowMs: number): number {
    const second = Math.floor(nowMs / 1000);
    let sum = 0;
    for (let slot = 0; slot < WINDOW_SECONDS; slot += 1) if (second - this.seconds[slot]! < WINDOW_SECONDS) sum += this.counts[slot]!;
    return sum;
  }
}

export class ConnectionStatusTracker implements SourceStatusSink {
  private state: ConnectionState = 'connecting';
  private lastMessageAt: number | null = null;
  private readonly messages = new MinuteCounter();
  private readonly points = new MinuteCounter();
  private errors: Array<{ at: string; message: string; topic?: string }> = [];
  private bufferedBytes = 0;

  constructor(private bufferLimitBytes: number, private readonly now: () => number = Date.now) {}

  connected(): void { this.state = 'connected'; }
  disconnected(reason: string): void {
    this.state = 'connecting';
    this.error(`Disconnected: ${reason}`, 'connection');
  }
  disabled(): void { this.state = 'disabled'; }
  failed(message: string): void {
    this.state = 'error';
    this.error(message, 'connection');
  }
  message(): void {
    this.lastMessageAt = this.now();
    this.messages.add(1, this.lastMessageAt);
  }
  readings(count: number): void { this.points.add(count, this.now()); }
  buffered(bytes: number): void { this.bufferedBytes = bytes; }
  limit(bytes: number): void { this.bufferLimitBytes = bytes; }

  /** Keeps an error; one of a topic (connection, delivery) replaces that topic's previous one. */
  error(message: string, topic?: string): void {
    const entry = { at: new Date(this.now()).toISOString(), message: scrubCredentials(message).slice(0, 500), ...(topic ? { topic } : {}) };
    const previous = this.errors.at(-1);
    if (previous && previous.message === entry.message) { previous.at = entry.at; return; }
    this.errors = [...this.errors.filter((item) => !topic || item.topic !== topic), entry].slice(-ERRORS_KEPT);
  }

  clearError(topic: string): void {
    this.errors = this.errors.filter((item) => item.topic !== topic);
  }

  snapshot(): ConnectionStatus {
    const now = this.now();
    return {
      state: this.state,
      last_message_at: this.lastMessageAt === null ? null : new Date(this.lastMessageAt).toISOString(),
      messages_per_minute: this.messages.total(now),
      points_per_minute: this.points.total(now),
      errors: this.errors.map(({ at, message }) => ({ at, message })),
      buffered_bytes: this.bufferedBytes,
      buffer_limit_bytes: this.bufferLimitBytes,
    };
  }
}
