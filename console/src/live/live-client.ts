/**
 * The tab's one live connection (docs/live.md): every open chart subscribes the instruments it draws;
 * the client keeps one server-sent-event stream for all of them, read with fetch so the bearer token
 * travels in a header. When the set of instruments changes, or the stream breaks, it reconnects with
 * the set and Last-Event-ID, so the server replays what came meanwhile; a `reset` (events lost) and a
 * first connection (charts may have read before it) ask the charts to read their windows again.
 */
import {
  LIVE_PATH, liveDeletionSchema, livePointsSchema, liveReadySchema, type LiveDeletion, type LivePoints,
} from '@bioprocess/shared/live';
import { getToken } from '../auth/session-store.ts';

export type LiveState = 'connecting' | 'live' | 'offline';

export interface LiveSubscriber {
  instrumentIds: readonly number[];
  /** Points stored for some of the subscriber's instruments (`readings` null: read the range). */
  onPoints(event: LivePoints): void;
  /** A range of some of its instruments was deleted. */
  onDeletion(event: LiveDeletion): void;
  /** Events may have been missed: read the whole window again. */
  onResync(): void;
}

/** How long a change of subscriptions waits for others (charts mount together) before reconnecting. */
const RESUBSCRIBE_MS = 150;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 15_000;
/**
 * The server writes at least every 15 s (a keep-alive); a stream silent for this long is broken without
 * the browser noticing (a network change can leave the socket open for minutes), and is opened again.
 */
const SILENCE_MS = 45_000;

interface SseBlock {
  id: string | null;
  event: string;
  data: string | null;
}

/** Complete events of a text buffer, with the id each carries; the unfinished rest is returned. */
export function parseLiveBuffer(buffer: string): { blocks: SseBlock[]; rest: string } {
  const parts = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = parts.pop() ?? '';
  const blocks: SseBlock[] = [];
  for (const part of parts) {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of part.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (id !== null || data.length > 0) blocks.push({ id, event, data: data.length > 0 ? data.join('\n') : null });
  }
  return { blocks, rest };
}

export class LiveClient {
  private readonly subscribers = new Set<LiveSubscriber>();
  private readonly stateListeners = new Set<(state: LiveState) => void>();
  private lastEventId: string | null = null;
  private connected = '';
  private controller: AbortController | null = null;
  private resubscribeTimer: ReturnType<typeof setTimeout> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private retryMs = RETRY_FIRST_MS;
  private current: LiveState = 'offline';
  /** Events handled since the client started (for tests and the bench). */
  eventsHandled = 0;

  constructor(private readonly fetchImpl: typeof fetch = (...args) => fetch(...args)) {
    if (typeof window === 'undefined') return;
    // The browser knows the network went: the stream is dropped at once (the chart says so), and
    // opened again, resuming, as soon as the network is back.
    window.addEventListener('offline', () => {
      if (this.retryTimer !== null) clearTimeout(this.retryTimer);
      this.retryTimer = null;
      this.controller?.abort();
      this.controller = null;
      this.connected = '';
      this.setState('offline');
    });
    window.addEventListener('online', () => {
      this.retryMs = RETRY_FIRST_MS;
      this.reconnect();
    });
  }

  get state(): LiveState {
    return this.current;
  }

  onState(listener: (state: LiveState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  subscribe(subscriber: LiveSubscriber): () => void {
    this.subscribers.add(subscriber);
    this.scheduleResubscribe();
    return () => {
      this.subscribers.delete(subscriber);
      this.scheduleResubscribe();
    };
  }

  /** Ends the connection now; it reconnects (resuming) at once. Used when the session changes. */
  reconnect(): void {
    this.connected = '';
    this.scheduleResubscribe(0);
  }

  private instruments(): number[] {
    const ids = new Set<number>();
    for (const subscriber of this.subscribers) for (const id of subscriber.instrumentIds) ids.add(id);
    return [...ids].sort((a, b) => a - b);
  }

  private setState(state: LiveState): void {
    if (state === this.current) return;
    this.current = state;
    for (const listener of this.stateListeners) listener(state);
  }

  private scheduleResubscribe(delayMs = RESUBSCRIBE_MS): void {
    if (this.resubscribeTimer !== null) clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = setTimeout(() => {
      this.resubscribeTimer = null;
      const wanted = this.instruments().join(',');
      if (wanted === this.connected && this.controller) return;
      this.open(wanted);
    }, delayMs);
  }

  private open(instrumentIds: string): void {
    this.controller?.abort();
    this.controller = null;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.connected = instrumentIds;
    if (instrumentIds === '') {
      this.setState('offline');
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.setState('connecting');
    void this.follow(instrumentIds, controller).then((retry) => {
      if (controller.signal.aborted || this.controller !== controller) return;
      this.controller = null;
      this.setState('offline');
      if (!retry) return;
      // The stream ended or broke: again, resuming from the last event, later each time it fails.
      this.retryTimer = setTimeout(() => this.open(this.instruments().join(',')), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    });
  }

  /** Reads one stream to its end; whether to try again. */
  private async follow(instrumentIds: string, controller: AbortController): Promise<boolean> {
    const token = getToken();
    if (!token) return false;
    let response: Response;
    try {
      response = await this.fetchImpl(`${LIVE_PATH}?instrument_ids=${instrumentIds}`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream', ...(this.lastEventId ? { 'Last-Event-ID': this.lastEventId } : {}) },
        signal: controller.signal,
      });
    } catch {
      return !controller.signal.aborted;
    }
    // Signed out or an instrument gone: the charts' own requests say why; nothing to retry.
    if (response.status === 401 || response.status === 403 || response.status === 404 || response.status === 400) return false;
    // Busy or unavailable for a moment (429, 503): tried again later.
    if (!response.ok || !response.body) return true;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let silence: ReturnType<typeof setTimeout> | null = null;
    const watch = () => {
      if (silence !== null) clearTimeout(silence);
      silence = setTimeout(() => { void reader.cancel().catch(() => undefined); }, SILENCE_MS);
    };
    try {
      for (;;) {
        watch();
        const { value, done } = await reader.read();
        if (done) return true;
        buffer += value;
        const parsed = parseLiveBuffer(buffer);
        buffer = parsed.rest;
        for (const block of parsed.blocks) this.handle(block);
      }
    } catch {
      return !controller.signal.aborted;
    } finally {
      if (silence !== null) clearTimeout(silence);
    }
  }

  private handle(block: SseBlock): void {
    if (block.id !== null) this.lastEventId = block.id;
    if (block.data === null) return;
    this.eventsHandled += 1;
    const data = JSON.parse(block.data) as unknown;
    const overlaps = (subscriber: LiveSubscriber, ids: readonly number[]) => ids.some((id) => subscriber.instrumentIds.includes(id));
    switch (block.event) {
      case 'ready': {
        const ready = liveReadySchema.parse(data);
        this.retryMs = RETRY_FIRST_MS;
        this.setState('live');
        // A first stream: charts may have read their windows before it; they read them again.
        if (!ready.resumed) for (const subscriber of this.subscribers) subscriber.onResync();
        break;
      }
      case 'points': {
        const points = livePointsSchema.parse(data);
        for (const subscriber of this.subscribers) if (overlaps(subscriber, points.instrument_ids)) subscriber.onPoints(points);
        break;
      }
      case 'deletion': {
        const deletion = liveDeletionSchema.parse(data);
        for (const subscriber of this.subscribers) if (overlaps(subscriber, deletion.instrument_ids)) subscriber.onDeletion(deletion);
        break;
      }
      case 'reset':
        for (const subscriber of this.subscribers) subscriber.onResync();
        break;
      default:
        // position, end: the id was taken; the end lets the stream close and reconnect.
        break;
    }
  }
}

let tabClient: LiveClient | null = null;

/** The tab's client, made on first use. */
export function liveClient(): LiveClient {
  tabClient ??= new LiveClient();
  return tabClient;
}
