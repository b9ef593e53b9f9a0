/**
 * Delivery: sends a connection's stored readings to the api's bulk endpoint, one batch at a time and
 * in order, with the connection's own API key and a stable idempotency key per stored batch, so a
 * batch sent again after a crash or a lost answer is answered with its first job rather than recorded
 * twice. A batch leaves the buffer only once the api answered 2xx (it is then durable in PostgreSQL).
 *
 * While the api is away (connection refused, 5xx, 429, 408) the batch is retried with a capped
 * backoff, forever: the buffer's bound, not time, limits an outage. A 401 or 403 (the key revoked or
 * the connection deleted) is retried too, since only an admin can resolve it. Any other 4xx means
 * the readings can never be accepted as they are (an instrument deleted meanwhile): the batch is
 * dropped and the error kept in the connection's status, so one bad batch cannot stop the feed.
 *
 * Each point carries the source's quality code and historical flag when it has them: the api stores
 * them with the reading (docs/integrations.md).
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import { cappedExponentialDelay } from '@bioprocess/shared/capped-backoff';
import type { StoredReading, StoreForward } from './store-forward.ts';
import type { ConnectionStatusTracker } from './status.ts';
import { deliveredQualityCode } from './quality-codes.ts';
import { isoWithMicros } from '@bioprocess/shared/sub-millisecond-time';

export interface DeliveryOptions {
  apiUrl: string;
  connectionId: number;
  apiKey: () => string | null;
  batchPoints: number;
  retryMaxMs: number;
}

const RETRIED_CLIENT_ERRORS = new Set([401, 403, 408, 409, 425, 429]);

/**
 * A bulk point: its time as epoch milliseconds, or as ISO text with six fraction digits when it has
 * microseconds; the source's quality code and historical flag only when it gave them, so good live
 * readings stay small.
 */
export function deliveredPoint([instrumentId, ts, value, quality, historical, micros]: StoredReading): Record<string, unknown> {
  const point: Record<string, unknown> = { instrument_id: instrumentId, ts: micros ? isoWithMicros(ts, micros) : ts, value };
  const code = deliveredQualityCode(quality);
  if (code !== null) point.quality = code;
  if (historical === 1) point.historical = true;
  return point;
}

export class Delivery {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** Points the api accepted since start (counted by the bench and the tests). */
  delivered = 0;

  constructor(private readonly store: StoreForward, private readonly status: ConnectionStatusTracker, private readonly options: DeliveryOptions, private readonly log: Logger) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => { clearTimeout(timer); resolve(); };
    });
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let batch;
      try {
        batch = await this.store.nextBatch(this.options.batchPoints);
      } catch (error) {
        this.status.error(`Reading the buffer failed: ${(error as Error).message}`);
        await this.sleep(1_000);
        continue;
      }
      if (!batch) {
        await this.store.waitForData(500);
        continue;
      }
      const outcome = await this.send(batch.key, batch.readings);
      if (outcome === 'accepted' || outcome === 'refused') {
        failures = 0;
        if (outcome === 'accepted') this.delivered += batch.readings.length;
        await this.store.commit();
        this.status.buffered(this.store.bufferedBytes());
      } else {
        failures += 1;
        await this.sleep(cappedExponentialDelay(failures, 200, this.options.retryMaxMs));
      }
    }
  }

  private async send(key: string, readings: StoredReading[]): Promise<'accepted' | 'refused' | 'retry'> {
    const apiKey = this.options.apiKey();
    if (!apiKey) {
      this.status.error('The connection has no API key the connector can read (check INTEGRATIONS_SECRET_KEY).');
      return 'retry';
    }
    const body = JSON.stringify({ data: readings.map(deliveredPoint) });
    let response: Response;
    let text: string;
    try {
      response = await fetch(new URL('/api/v1/time-series-data/bulk', this.options.apiUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', prefer: 'return=minimal',
          'idempotency-key': `integration-${this.options.connectionId}-${key}`,
        },
        body,
        signal: AbortSignal.timeout(60_000),
      });
      text = await response.text();
    } catch (error) {
      this.status.error(`The api cannot be reached (${(error as Error).message}); readings are kept on disk.`, 'delivery');
      return 'retry';
    }
    if (response.ok) {
      this.status.clearError('delivery');
      return 'accepted';
    }
    if (response.status >= 500 || RETRIED_CLIENT_ERRORS.has(response.status)) {
      this.status.error(`The api answered ${response.status}; readings are kept on disk and sent again.`, 'delivery');
      return 'retry';
    }
    this.status.error(`The api refused ${readings.length} readings (${response.status} ${text.slice(0, 200)}); they were dropped.`);
    this.log.warn({ status: response.status, points: readings.length }, 'batch refused by the api');
    return 'refused';
  }
}
