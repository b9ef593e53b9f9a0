/** A server-sent-event client over fetch (bearer token in a header), collecting events for tests to wait on. */
export interface SseEvent {
  id: string | null;
  event: string;
  data: unknown;
}

export class SseStream {
  readonly events: SseEvent[] = [];
  /** The last id the stream sent (what a browser would resume from). */
  lastEventId: string | null = null;
  ended = false;
  private readonly waiters = new Set<() => void>();
  private readonly controller = new AbortController();

  private constructor(readonly response: Response) {}

  /** Opens the stream; a refusal answers its Response (status and JSON) instead. */
  static async open(base: string, path: string, token: string, lastEventId?: string): Promise<SseStream | Response> {
    const stream = new SseStream(undefined as never);
    const response = await fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: stream.controller.signal,
    });
    if (response.status !== 200 || !response.body) return response;
    (stream as { response: Response }).response = response;
    stream.lastEventId = lastEventId ?? null;
    void stream.read(response.body);
    return stream;
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') id = value;
            else if (field === 'event') event = value;
            else if (field === 'data') data.push(value);
          }
          if (id !== null) this.lastEventId = id;
          if (data.length === 0) continue;
          this.events.push({ id, event, data: JSON.parse(data.join('\n')) });
          for (const wake of this.waiters) wake();
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
    for (const wake of this.waiters) wake();
  }

  /** Waits for the first event (from `from` on) that matches; its index in `events`. */
  async waitFor(match: (event: SseEvent) => boolean, from = 0, timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.events.findIndex((event, at) => at >= from && match(event));
      if (index >= 0) return index;
      if (this.ended) throw new Error(`stream ended before the event came; got ${JSON.stringify(this.events.map((e) => e.event))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(this.events.map((e) => e.event))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done() { clearTimeout(timer); waiters.delete(done); resolve(); }
        const waiters = this.waiters;
        waiters.add(done);
      });
    }
  }

  close(): void {
    this.controller.abort();
  }
}
