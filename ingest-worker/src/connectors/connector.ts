/**
 * The connector: runs the organisations' integration connections, several connector processes sharing
 * them. Every CONNECTOR_POLL_MS it reads the connections and their mappings from PostgreSQL, renews
 * the leases it holds (a connection whose lease cannot be renewed in time is stopped), gives back one
 * beyond its share and claims free ones up to it (connections / live connectors), applies changes to
 * the ones it runs and publishes their status to Redis. It answers browse requests for the connections it runs.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import type { ConnectorEnv } from '@bioprocess/shared/server/config';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { createRedis, type Redis } from '@bioprocess/shared/server/redis';
import { decryptSecret, parseSecretKey, secretContext } from '@bioprocess/shared/server/integration-secrets';
import { loadConnections, type RunnableConnection } from '@bioprocess/shared/server/integrations-repository';
import {
  browseJobSchema, INTEGRATION_BROWSE_QUEUE, integrationKeys, type BrowseResult, type PublishedStatus,
} from '@bioprocess/shared/server/integration-protocol';
import type { IntegrationKind } from '@bioprocess/shared/integrations';
import type { BrowseItem, SourceFactory } from './source.ts';
import { ConnectionRunner } from './connection-runner.ts';
import { Leases } from './leases.ts';
import { ConnectionStatusTracker } from './status.ts';

export interface ConnectorOptions {
  env: ConnectorEnv;
  pg: Pool;
  log: Logger;
  factories: Record<IntegrationKind, SourceFactory>;
  connectorId?: string;
}

function wireItems(items: BrowseItem[]): BrowseResult {
  return {
    items: items.map((item) => ({
      id: item.id, name: item.name, kind: item.kind, unit: item.unit, data_type: item.dataType, has_children: item.hasChildren, sample: item.sample,
    })),
  };
}

export class Connector {
  readonly id: string;
  readonly runners = new Map<number, ConnectionRunner>();
  private readonly redis: Redis;
  private readonly leases: Leases;
  private readonly lastRenewed = new Map<number, number>();
  private readonly secretKey: Buffer | null;
  private browseWorker: Worker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: ConnectorOptions) {
    this.id = options.connectorId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    // Lease commands fail at once while Redis is away, so the holder notices in time.
    this.redis = createRedis(options.env.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false }, options.log);
    this.leases = new Leases(this.redis, options.env.QUEUE_PREFIX, this.id, options.env.CONNECTOR_LEASE_MS);
    this.secretKey = options.env.INTEGRATIONS_SECRET_KEY ? parseSecretKey(options.env.INTEGRATIONS_SECRET_KEY) : null;
    if (!this.secretKey) options.log.error('INTEGRATIONS_SECRET_KEY is not set: connections with secrets cannot run and no reading can be delivered');
  }

  async start(): Promise<void> {
    this.browseWorker = new Worker(INTEGRATION_BROWSE_QUEUE, async (job: Job) => this.answerBrowse(job), {
      connection: createRedis(this.options.env.REDIS_URL, {}, this.options.log), prefix: this.options.env.QUEUE_PREFIX, concurrency: 4,
    });
    this.browseWorker.on('error', (error) => this.options.log.debug({ err: error }, 'browse worker connection error'));
    await this.poll();
    const schedule = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => { this.polling = this.poll().finally(schedule); }, this.options.env.CONNECTOR_POLL_MS);
    };
    schedule();
  }

  /** One pass: read, renew, claim, update, publish. Never throws: a service away is retried next pass. */
  async poll(): Promise<void> {
    if (this.stopped) return;
    const log = this.options.log;
    let connections: RunnableConnection[] | null = null;
    try {
      connections = await loadConnections(this.options.pg);
    } catch (error) {
      log.warn({ err: error }, 'connections cannot be read; the running ones go on');
    }
    let live = 1;
    try {
      live = await this.leases.heartbeat();
    } catch (error) {
      log.warn({ err: error }, 'Redis cannot be reached for leases');
    }
    await this.renewLeases(connections);
    if (connections) {
      await this.shed(connections.length, live);
      await this.claim(connections, live);
    }
    await this.publishStatus();
  }

  private async renewLeases(connections: RunnableConnection[] | null): Promise<void> {
    const byId = new Map(connections?.map((runnable) => [runnable.connection.id, runnable]));
    for (const [connectionId, runner] of [...this.runners]) {
      if (connections && !byId.has(connectionId)) {
        this.runners.delete(connectionId);
        await runner.discard();
        await this.leases.release(connectionId).catch(() => undefined);
        continue;
      }
      let renewed = false;
      try {
        renewed = await this.leases.renew(connectionId);
      } catch {
        // Redis away: the lease may still be ours until it lapses; stop before it can have passed on.
        if (Date.now() - (this.lastRenewed.get(connectionId) ?? 0) < this.options.env.CONNECTOR_LEASE_MS / 2) continue;
      }
      if (!renewed) {
        this.options.log.warn({ connectionId }, 'lease lost; stopping the connection here');
        this.runners.delete(connectionId);
        await runner.stop();
        continue;
      }
      this.lastRenewed.set(connectionId, Date.now());
      const runnable = byId.get(connectionId);
      if (runnable) await runner.update(runnable).catch((error: unknown) => runner.status.error(`Applying a change failed: ${(error as Error).message}`));
    }
  }

  /**
   * Gives back one connection beyond this connector's share (another connector joined), so the share
   * evens out one connection per pass. Only one whose buffer is empty: unsent readings stay with the
   * connector that holds them on its disk.
   */
  private async shed(total: number, live: number): Promise<void> {
    if (this.runners.size <= Math.ceil(total / live)) return;
    for (const [connectionId, runner] of this.runners) {
      if (runner.snapshot().buffered_bytes > 0) continue;
      this.runners.delete(connectionId);
      await runner.stop();
      await this.leases.release(connectionId).catch(() => undefined);
      this.options.log.info({ connectionId, connector: this.id }, 'connection given back to even out the share');
      return;
    }
  }

  private async claim(connections: RunnableConnection[], live: number): Promise<void> {
    const share = Math.ceil(connections.length / live);
    for (const runnable of connections) {
      if (this.runners.size >= share || this.stopped) return;
      const connectionId = runnable.connection.id;
      if (this.runners.has(connectionId)) continue;
      const acquired = await this.leases.acquire(connectionId).catch(() => null);
      if (acquired === null) return;
      if (!acquired) continue;
      this.lastRenewed.set(connectionId, Date.now());
      const runner = new ConnectionRunner(runnable, {
        env: this.options.env, secretKey: this.secretKey, factories: this.options.factories, log: this.options.log,
      });
      this.runners.set(connectionId, runner);
      this.options.log.info({ connectionId, connector: this.id }, 'connection taken');
      try {
        await runner.start();
      } catch (error) {
        runner.status.failed(`The connection cannot start: ${(error as Error).message}`);
        this.options.log.error({ err: error, connectionId }, 'connection cannot start');
      }
    }
  }

  private async publishStatus(): Promise<void> {
    const ttlSeconds = Math.max(15, Math.ceil((this.options.env.CONNECTOR_POLL_MS * 3) / 1000));
    const now = new Date().toISOString();
    for (const [connectionId, runner] of this.runners) {
      const published: PublishedStatus = { ...runner.snapshot(), connector_id: this.id, published_at: now };
      await this.redis.set(integrationKeys.status(this.options.env.QUEUE_PREFIX, connectionId), JSON.stringify(published), 'EX', ttlSeconds).catch(() => undefined);
    }
  }

  private async answerBrowse(job: Job): Promise<BrowseResult> {
    const request = browseJobSchema.parse(job.data);
    const runner = this.runners.get(request.connection_id);
    if (runner) {
      try {
        return wireItems(await runner.browse(request.node_id));
      } catch (error) {
        return { error: (error as Error).message };
      }
    }
    const holder = await this.leases.holder(request.connection_id);
    // Another connector runs it: hand the job back (it is retried, and reaches the holder).
    if (holder && holder !== this.id) throw new Error(`connection ${request.connection_id} runs on another connector`);
    const [runnable] = await loadConnections(this.options.pg, request.connection_id);
    if (!runnable || runnable.connection.organization_id !== request.organization_id) return { error: 'the connection no longer exists' };
    if (runnable.connection.kind === 'mqtt') {
      return { error: 'no connector runs this connection (it is disabled, or a connector is starting): MQTT topics are listed once it runs' };
    }
    // An OPC UA server can be browsed from a session of its own, whoever runs the connection.
    const status = new ConnectionStatusTracker(runnable.connection.buffer_limit_bytes);
    let source;
    try {
      const secret = runnable.secretCiphertext && this.secretKey
        ? decryptSecret(this.secretKey, runnable.secretCiphertext, secretContext.source(runnable.connection.id))
        : null;
      source = this.options.factories.opcua(runnable.connection, secret, runnable.mappings, status, this.options.log);
      return wireItems(await source.browse(request.node_id));
    } catch (error) {
      return { error: (error as Error).message };
    } finally {
      await source?.stop().catch(() => undefined);
    }
  }

  /** Stops every connection (their buffers stay on disk) and gives their leases back for another connector. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    await this.browseWorker?.close();
    for (const [connectionId, runner] of this.runners) {
      await runner.stop();
      await this.leases.release(connectionId).catch(() => undefined);
    }
    this.runners.clear();
    await this.leases.leave().catch(() => undefined);
    this.redis.disconnect();
  }
}
