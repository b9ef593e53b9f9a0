/**
 * Reads the points-stored stream as a member of one consumer group, so several alert workers share
 * the announcements, and acknowledges an entry only once its transitions committed. An entry a
 * worker took and never acknowledged (it was killed, or PostgreSQL failed) is claimed by any worker
 * after `claimIdleMs` (XAUTOCLAIM) and applied again, which the evaluator makes harmless.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from '@bioprocess/shared/server/logger';
import type { Redis } from '@bioprocess/shared/server/redis';
import {
  POINTS_STORED_STREAM, parsePointsStoredEntries, type PointsStoredAnnouncement,
} from '@bioprocess/shared/server/points-stored';

export const ALERT_CONSUMER_GROUP = 'alert-evaluators';

type RawEntry = [string, string[] | null];

/**
 * Creates the alert workers' group on the stream unless it exists, from its end (or `from`). The demo
 * seed calls it before posting its readings, so they are evaluated even when the alert worker starts later.
 */
export async function ensureAlertConsumerGroup(redis: Redis, prefix: string, from: '$' | '0' = '$'): Promise<void> {
  try {
    await redis.xgroup('CREATE', POINTS_STORED_STREAM(prefix), ALERT_CONSUMER_GROUP, from, 'MKSTREAM');
  } catch (error) {
    if (!String((error as Error).message).includes('BUSYGROUP')) throw error;
  }
}

export interface ConsumerOptions {
  prefix: string;
  claimIdleMs: number;
  blockMs?: number;
  batch?: number;
}

export class AnnouncementConsumer {
  readonly name = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private readonly key: string;
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly options: ConsumerOptions,
    private readonly handle: (announcement: PointsStoredAnnouncement) => Promise<unknown>,
    private readonly logger: Logger,
  ) {
    this.key = POINTS_STORED_STREAM(options.prefix);
  }

  /**
   * Creates the group at the stream's end (announcements before the first alert worker started are
   * history). A group missing later means Redis lost the stream: everything in the new one is unread.
   */
  async ensureGroup(from: '$' | '0' = '$'): Promise<void> {
    await ensureAlertConsumerGroup(this.redis, this.options.prefix, from);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    await this.ensureGroup();
    while (!this.stopped) {
      try {
        await this.pass();
      } catch (error) {
        if (String((error as Error).message).includes('NOGROUP')) {
          await this.ensureGroup('0').catch(() => undefined);
          continue;
        }
        this.logger.warn({ err: error }, 'alert evaluation pass failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  /** One pass: entries others left (or this one failed) first, then new ones. Answers entries applied. */
  async pass(): Promise<number> {
    const claimed = await this.redis.xautoclaim(this.key, ALERT_CONSUMER_GROUP, this.name, this.options.claimIdleMs, '0-0', 'COUNT', this.options.batch ?? 100) as [string, RawEntry[], string[]?];
    let applied = await this.applyAll(claimed[1] ?? []);
    // Entries trimmed from the stream while pending: nothing left to apply.
    const gone = claimed[2] ?? [];
    if (gone.length > 0) await this.redis.xack(this.key, ALERT_CONSUMER_GROUP, ...gone);
    const fresh = await this.redis.xreadgroup(
      'GROUP', ALERT_CONSUMER_GROUP, this.name, 'COUNT', this.options.batch ?? 100, 'BLOCK', this.options.blockMs ?? 2_000, 'STREAMS', this.key, '>',
    ) as Array<[string, RawEntry[]]> | null;
    applied += await this.applyAll(fresh?.[0]?.[1] ?? []);
    return applied;
  }

  private async applyAll(raw: readonly RawEntry[]): Promise<number> {
    if (raw.length === 0) return 0;
    const parsed = new Map(parsePointsStoredEntries(raw).map((entry) => [entry.id, entry]));
    let applied = 0;
    for (const [id] of raw) {
      if (this.stopped) break;
      const entry = parsed.get(id);
      // Stops at the first failure: the rest stay pending, in order, for the next pass.
      if (entry) await this.handle(entry);
      await this.redis.xack(this.key, ALERT_CONSUMER_GROUP, id);
      applied += 1;
    }
    return applied;
  }
}
