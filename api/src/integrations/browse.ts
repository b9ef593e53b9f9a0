/**
 * Browsing a source through the connector that holds its connection: the api queues a job on
 * `integration-browse` and waits for its answer; no answer within BROWSE_TIMEOUT_MS means no connector
 * runs (or none reached the source in time), which the caller learns as a 503.
 */
import { Queue, QueueEvents } from 'bullmq';
import { BROWSE_TIMEOUT_MS } from '@bioprocess/shared/integrations';
import {
  browseResultSchema, INTEGRATION_BROWSE_JOB, INTEGRATION_BROWSE_QUEUE, type BrowseJob, type BrowseResult,
} from '@bioprocess/shared/server/integration-protocol';
import { createRedis } from '@bioprocess/shared/server/redis';
import type { Logger } from '@bioprocess/shared/server/logger';

export interface BrowseRequests {
  /** The connector's answer, or null when none came in time. */
  browse(job: BrowseJob): Promise<BrowseResult | null>;
  close(): Promise<void>;
}

export function createBrowseRequests(env: { REDIS_URL: string; QUEUE_PREFIX: string }, logger: Logger): BrowseRequests {
  let opened: { queue: Queue; events: QueueEvents } | null = null;
  // Opened on the first browse: most api processes never browse, and QueueEvents holds a blocking connection.
  const open = () => {
    opened ??= {
      queue: new Queue(INTEGRATION_BROWSE_QUEUE, { connection: createRedis(env.REDIS_URL, {}, logger), prefix: env.QUEUE_PREFIX }),
      events: new QueueEvents(INTEGRATION_BROWSE_QUEUE, { connection: createRedis(env.REDIS_URL, {}, logger), prefix: env.QUEUE_PREFIX }),
    };
    opened.queue.on('error', (err) => logger.debug({ err }, 'browse queue connection error'));
    opened.events.on('error', (err) => logger.debug({ err }, 'browse events connection error'));
    return opened;
  };
  return {
    async browse(payload) {
      const { queue, events } = open();
      await events.waitUntilReady();
      const job = await queue.add(INTEGRATION_BROWSE_JOB, payload, {
        // The connector holding the connection may not be the first to take the job: others hand it back.
        attempts: 40, backoff: { type: 'fixed', delay: 200 },
        removeOnComplete: { age: 60 }, removeOnFail: { age: 60 },
      });
      try {
        return browseResultSchema.parse(await job.waitUntilFinished(events, BROWSE_TIMEOUT_MS));
      } catch (error) {
        // A browse nobody answers in time is of no use later: it must not run when a connector starts.
        await job.remove().catch(() => undefined);
        if (error instanceof Error && /timed out|Job wait/i.test(error.message)) return null;
        logger.warn({ err: error }, 'browse failed');
        return null;
      }
    },
    async close() {
      if (!opened) return;
      await Promise.allSettled([opened.queue.close(), opened.events.close()]);
    },
  };
}
