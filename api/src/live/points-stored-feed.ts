/**
 * One reader of the points-stored stream per api process (XREAD BLOCK on a Redis connection of its
 * own), handing each batch of announcements to the process's listeners in order. Every api process
 * reads the stream itself, so a write announced by any worker reaches the live viewers of every api.
 *
 * `position` is the id of the last entry read: a listener registered now receives every entry after
 * it (and possibly some before it, which it skips by id). When Redis lost entries the feed had not read (restart, trim past its position),
 * listeners are told to start over (`reset`).
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import { createRedis, type Redis } from '@bioprocess/shared/server/redis';
import {
  lastPointsStoredId, pointsStoredCovers, readPointsStored, type PointsStoredAnnouncement,
} from '@bioprocess/shared/server/points-stored';

/** How long one XREAD blocks: the loop notices a stop within this. */
const BLOCK_MS = 5_000;
const BATCH_ENTRIES = 1_000;
const RETRY_MS = 500;

export interface FeedListener {
  /**
   * A batch of entries, in stream order. The feed waits for it to resolve before reading on, so
   * listeners see batches one at a time.
   */
  entries(batch: readonly PointsStoredAnnouncement[]): Promise<void>;
  /** Entries were lost; the feed goes on from `position`. */
  reset(position: string, reason: string): void;
}

export class PointsStoredFeed {
  private redis: Redis | null = null;
  private started: Promise<void> | null = null;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private current = '0-0';
  private readonly listeners = new Set<FeedListener>();

  constructor(private readonly options: { redisUrl: string; prefix: string; logger: Logger }) {}

  /** The id of the last entry handed to listeners (valid once `start` resolved). */
  get position(): string {
    return this.current;
  }

  /** Starts reading at the stream's end, once; later calls wait for the same start. */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.redis = createRedis(this.options.redisUrl, {}, this.options.logger);
      try {
        this.current = await lastPointsStoredId(this.redis, this.options.prefix);
      } catch (error) {
        this.started = null;
        this.redis.disconnect();
        this.redis = null;
        throw error;
      }
      this.loop = this.run();
    })();
    return this.started;
  }

  listen(listener: FeedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.redis?.disconnect();
    await this.loop?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    const redis = this.redis!;
    let failing = false;
    while (!this.stopped) {
      let batch: PointsStoredAnnouncement[];
      try {
        if (failing) {
          // Back from an outage: entries after our position may be gone with Redis.
          if (!await pointsStoredCovers(redis, this.options.prefix, this.current)) {
            const from = this.current;
            this.current = await lastPointsStoredId(redis, this.options.prefix);
            this.options.logger.warn({ from, to: this.current }, 'points-stored entries lost while Redis was away; live viewers reset');
            for (const listener of this.listeners) listener.reset(this.current, 'announcements were lost while the server reconnected');
          }
          failing = false;
        }
        batch = await readPointsStored(redis, this.options.prefix, this.current, { count: BATCH_ENTRIES, blockMs: BLOCK_MS });
      } catch (error) {
        if (this.stopped) break;
        if (!failing) this.options.logger.warn({ err: error }, 'points-stored feed cannot read; retrying');
        failing = true;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      if (batch.length === 0) continue;
      // A trim that overtook this reader (it fell more than the stream's bound behind) loses entries.
      if (batch.length === BATCH_ENTRIES && !await pointsStoredCovers(redis, this.options.prefix, this.current).catch(() => true)) {
        for (const listener of this.listeners) listener.reset(this.current, 'the server fell behind the announcements');
      }
      // The position moves before the batch is handed out: a listener registering meanwhile reads up to
      // it itself and skips what it then receives twice (ids are its dedup key).
      this.current = batch[batch.length - 1]!.id;
      await Promise.all([...this.listeners].map((listener) => listener.entries(batch).catch((error: unknown) => {
        this.options.logger.error({ err: error }, 'live listener failed on a batch');
      })));
    }
  }
}
