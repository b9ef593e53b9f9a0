/**
 * One connection running in this connector: its source (protocol), its store-and-forward buffer, its
 * delivery to the api and its status, wired as a pipeline (source -> converter -> buffer -> upload).
 * A change of the connection's endpoint, settings, secret or enabled flag restarts the source; a change
 * of its mappings is handed to the running source. A disabled connection still delivers what its
 * buffer holds.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ConnectorEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import { decryptSecret, secretContext } from '@bioprocess/shared/server/integration-secrets';
import type { RunnableConnection } from '@bioprocess/shared/server/integrations-repository';
import type { IntegrationKind } from '@bioprocess/shared/integrations';
import type { BrowseItem, ConnectorSource, SourceFactory, SourceReading } from './source.ts';
import { StoreForward, type StoredReading } from './store-forward.ts';
import { Delivery } from './delivery.ts';
import { ConnectionStatusTracker } from './status.ts';

export interface RunnerDeps {
  env: Pick<ConnectorEnv, 'QUEUE_PREFIX' | 'CONNECTOR_API_URL' | 'CONNECTOR_DATA_DIR' | 'CONNECTOR_BATCH_POINTS' | 'CONNECTOR_RETRY_MAX_MS'>;
  secretKey: Buffer | null;
  factories: Record<IntegrationKind, SourceFactory>;
  log: Logger;
}

function sourceFingerprint(runnable: RunnableConnection): string {
  const { connection } = runnable;
  return JSON.stringify([connection.kind, connection.endpoint_url, connection.settings, connection.enabled, runnable.secretCiphertext?.toString('base64') ?? null]);
}

/** Per stack (its queue prefix) and connection: stacks sharing a data folder never share a buffer. */
export function bufferDirectory(dataDir: string, prefix: string, connectionId: number): string {
  return path.join(dataDir, prefix, `connection-${connectionId}`);
}

export class ConnectionRunner {
  readonly status: ConnectionStatusTracker;
  private store: StoreForward | null = null;
  private delivery: Delivery | null = null;
  private source: ConnectorSource | null = null;
  private sourceKey = '';
  private mappingsKey = '';
  private apiKey: string | null = null;
  private runnable: RunnableConnection;

  constructor(runnable: RunnableConnection, private readonly deps: RunnerDeps) {
    this.runnable = runnable;
    this.status = new ConnectionStatusTracker(runnable.connection.buffer_limit_bytes);
  }

  get connectionId(): number {
    return this.runnable.connection.id;
  }

  /** Points the api accepted from this runner (the bench and the tests count them). */
  get delivered(): number {
    return this.delivery?.delivered ?? 0;
  }

  private decrypt(stored: Buffer | null, context: string, what: string): string | null {
    if (!stored) return null;
    if (!this.deps.secretKey) {
      this.status.failed(`INTEGRATIONS_SECRET_KEY is not set: the connector cannot read the connection's ${what}.`);
      return null;
    }
    try {
      return decryptSecret(this.deps.secretKey, stored, context);
    } catch (error) {
      this.status.failed(`The connection's ${what} cannot be read: ${(error as Error).message}.`);
      return null;
    }
  }

  async start(): Promise<void> {
    const { connection } = this.runnable;
    this.store = await StoreForward.open(bufferDirectory(this.deps.env.CONNECTOR_DATA_DIR, this.deps.env.QUEUE_PREFIX, connection.id), connection.buffer_limit_bytes);
    this.status.buffered(this.store.bufferedBytes());
    this.apiKey = this.decrypt(this.runnable.apiKeyCiphertext, secretContext.apiKey(connection.id), 'API key');
    this.delivery = new Delivery(this.store, this.status, {
      apiUrl: this.deps.env.CONNECTOR_API_URL, connectionId: connection.id, apiKey: () => this.apiKey,
      batchPoints: this.deps.env.CONNECTOR_BATCH_POINTS, retryMaxMs: this.deps.env.CONNECTOR_RETRY_MAX_MS,
    }, this.deps.log);
    this.delivery.start();
    await this.startSource();
  }

  private async startSource(): Promise<void> {
    const { connection, mappings } = this.runnable;
    this.sourceKey = sourceFingerprint(this.runnable);
    this.mappingsKey = JSON.stringify(mappings);
    if (!connection.enabled) {
      this.status.disabled();
      return;
    }
    const secret = this.runnable.secretCiphertext ? this.decrypt(this.runnable.secretCiphertext, secretContext.source(connection.id), 'secret') : null;
    if (this.runnable.secretCiphertext && secret === null) return;
    const log = this.deps.log.child({ connectionId: connection.id, kind: connection.kind });
    let source: ConnectorSource;
    try {
      source = this.deps.factories[connection.kind](connection, secret, mappings, this.status, log);
    } catch (error) {
      this.status.failed(`The source cannot start: ${(error as Error).message}`);
      return;
    }
    this.source = source;
    // Not awaited: a server that is down makes the source retry on its own, which must not hold the connector.
    source.start((readings) => this.store!.append(readings.length > 0 ? this.accept(readings) : [])).catch((error: unknown) => {
      this.status.failed(`The source failed: ${(error as Error).message}`);
      log.warn({ err: error }, 'source failed');
    });
  }

  private accept(readings: SourceReading[]): StoredReading[] {
    this.status.readings(readings.length);
    if (this.store!.isFull()) {
      this.status.error(`The buffer is full (${this.store!.bufferedBytes()} of ${this.store!.limitBytes} bytes): the source waits until the api takes readings again.`, 'buffer');
    }
    return readings.map((reading): StoredReading => {
      const stored: StoredReading = [reading.instrumentId, reading.measuredAtMs, reading.value, reading.quality, reading.historical ? 1 : 0];
      if (reading.measuredAtMicros) stored.push(reading.measuredAtMicros);
      return stored;
    });
  }

  /** Applies the connection as it is now stored. */
  async update(runnable: RunnableConnection): Promise<void> {
    const previous = this.runnable;
    this.runnable = runnable;
    this.status.limit(runnable.connection.buffer_limit_bytes);
    if (this.store) this.store.limitBytes = runnable.connection.buffer_limit_bytes;
    if (previous.apiKeyCiphertext?.toString('base64') !== runnable.apiKeyCiphertext?.toString('base64')) {
      this.apiKey = this.decrypt(runnable.apiKeyCiphertext, secretContext.apiKey(runnable.connection.id), 'API key');
    }
    if (sourceFingerprint(runnable) !== this.sourceKey) {
      await this.stopSource();
      await this.startSource();
      return;
    }
    const mappingsKey = JSON.stringify(runnable.mappings);
    if (mappingsKey !== this.mappingsKey && this.source) {
      this.mappingsKey = mappingsKey;
      await this.source.updateMappings(runnable.mappings);
    }
  }

  async browse(nodeId: string | null): Promise<BrowseItem[]> {
    if (!this.source) throw new Error(this.runnable.connection.enabled ? 'the source is not running (see the connection\'s errors)' : 'the connection is disabled');
    return this.source.browse(nodeId);
  }

  snapshot() {
    if (this.store) this.status.buffered(this.store.bufferedBytes());
    return this.status.snapshot();
  }

  private async stopSource(): Promise<void> {
    const source = this.source;
    this.source = null;
    await source?.stop().catch((error: unknown) => this.deps.log.warn({ err: error }, 'source stop failed'));
  }

  /** Stops reading, then sending; what is buffered stays on disk for whoever runs the connection next. */
  async stop(): Promise<void> {
    await this.stopSource();
    await this.delivery?.stop();
    await this.store?.close();
  }

  /** For a deleted connection: its unsent readings can no longer be delivered (its key is revoked). */
  async discard(): Promise<void> {
    await this.stop();
    await rm(bufferDirectory(this.deps.env.CONNECTOR_DATA_DIR, this.deps.env.QUEUE_PREFIX, this.connectionId), { recursive: true, force: true });
  }
}
