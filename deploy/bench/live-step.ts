/**
 * The live step of `npm run bench`: 20 viewers (one live stream each, as 20 browser tabs) follow a
 * running batch's 50 parameters while a feed posts one reading per parameter every second. The
 * figure is the latency from the moment a post is sent to the moment its `points` event (with its
 * readings) is read at each viewer: p95 against a target of 2 s. Every viewer must receive every
 * post exactly once.
 */
import type { BenchPlant } from './fixtures.ts';

export interface LiveStepContext {
  base: string;
  plant: BenchPlant;
  log: (message: string) => void;
  viewers?: number;
  parameters?: number;
  posts?: number;
  intervalMs?: number;
  /** Epoch ms of the first post's readings. */
  firstMs: number;
}

export interface LiveStepResult {
  p50: number;
  p95: number;
  max: number;
  samples: number;
  /** Events a viewer got more or fewer than posts (must be 0). */
  mismatched: number;
}

interface Viewer {
  /** Per post's reading time, when its event was read. */
  received: Map<number, number>;
  duplicates: number;
  close(): void;
  ready: Promise<void>;
}

function openViewer(base: string, token: string, instrumentIds: readonly number[]): Viewer {
  const controller = new AbortController();
  const received = new Map<number, number>();
  let markReady!: () => void;
  const viewer: Viewer = { received, duplicates: 0, close: () => controller.abort(), ready: new Promise<void>((resolve) => { markReady = resolve; }) };
  void (async () => {
    const response = await fetch(`${base}/api/v1/live?instrument_ids=${instrumentIds.join(',')}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal,
    });
    if (response.status !== 200 || !response.body) throw new Error(`live stream answered ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === 'ready') markReady();
        if (event !== 'points' || !data) continue;
        const at = performance.now();
        const points = JSON.parse(data) as { from_ms: number; readings: unknown[] | null };
        if (!points.readings || points.readings.length !== instrumentIds.length) throw new Error(`an event carried ${points.readings?.length ?? 'no'} readings`);
        if (received.has(points.from_ms)) viewer.duplicates += 1;
        else received.set(points.from_ms, at);
      }
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) process.stderr.write(`[bench] live viewer failed: ${String(error)}\n`);
  });
  return viewer;
}

const percentile = (sorted: readonly number[], share: number) => sorted[Math.max(0, Math.ceil(sorted.length * share) - 1)]!;

export async function benchLive(context: LiveStepContext): Promise<LiveStepResult> {
  const viewers = context.viewers ?? 20;
  const parameters = context.parameters ?? 50;
  const posts = context.posts ?? 30;
  const intervalMs = context.intervalMs ?? 1_000;
  const instrumentIds = context.plant.instrumentIds.slice(0, parameters);
  if (instrumentIds.length < parameters) throw new Error(`the bench plant has ${instrumentIds.length} instruments, ${parameters} wanted`);
  context.log(`live: ${viewers} viewers x ${parameters} parameters, ${posts} posts of one reading per parameter every ${intervalMs} ms`);
  const open = Array.from({ length: viewers }, () => openViewer(context.base, context.plant.token, instrumentIds));
  await Promise.all(open.map((viewer) => viewer.ready));
  const sentAt = new Map<number, number>();
  try {
    const answers: Array<Promise<void>> = [];
    const started = performance.now();
    for (let post = 0; post < posts; post += 1) {
      // On the feed's schedule, not after the previous answer: a feed does not wait for the viewers.
      const due = started + post * intervalMs;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      const readingMs = context.firstMs + post * 1_000;
      const body = JSON.stringify({ data: instrumentIds.map((instrument_id, index) => ({ instrument_id, measured_at: readingMs, float_value: 37 + index / 100 + post / 1_000 })) });
      sentAt.set(readingMs, performance.now());
      answers.push(fetch(`${context.base}/api/v1/time-series-data/bulk`, {
        method: 'POST', body, headers: { authorization: `Bearer ${context.plant.token}`, 'content-type': 'application/json', prefer: 'return=minimal' },
      }).then(async (response) => {
        await response.arrayBuffer();
        if (response.status !== 202 && response.status !== 200) throw new Error(`a feed post answered ${response.status}`);
      }));
    }
    await Promise.all(answers);
    // Every viewer gets every post (counted, not timed: the deadline only ends a broken run).
    const deadline = Date.now() + 60_000;
    while (open.some((viewer) => viewer.received.size < posts) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    for (const viewer of open) viewer.close();
  }
  const latencies: number[] = [];
  let mismatched = 0;
  for (const viewer of open) {
    if (viewer.received.size !== posts || viewer.duplicates > 0) mismatched += 1;
    for (const [readingMs, at] of viewer.received) latencies.push(at - sentAt.get(readingMs)!);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), max: latencies[latencies.length - 1] ?? 0, samples: latencies.length, mismatched };
}
