/**
 * Putting ingest deliveries on their BullMQ queues, the same way for the api that accepts a job, the
 * reconciler that queues a lost delivery again and the sweeper that re-drives a stuck job: each on
 * its queue (bulk posts on their own), a batch's deliveries joined into one, with the ingest options
 * and its organisation's turn (shared/src/server/fair-turns.ts).
 */
import { ingestQueueOf, joinBatchDeliveries, organizationsOf, QUEUE_NAMES, type IngestDelivery } from '../queues.ts';
import { takeTurns, type TurnQueue } from '../server/fair-turns.ts';
import { INGEST_JOB_OPTIONS } from './retry-policy.ts';

/** What is used of a BullMQ queue here. */
export interface DeliveryQueue extends TurnQueue {
  addBulk(jobs: Array<{ name: string; data: unknown; opts: typeof INGEST_JOB_OPTIONS & { jobId: string; priority: number } }>): Promise<unknown>;
}

export interface IngestQueues<Q> {
  ingest: Q;
  ingestBulk: Q;
}

/** The queue that carries the delivery. */
export function queueOfDelivery<Q>(queues: IngestQueues<Q>, delivery: IngestDelivery): Q {
  return ingestQueueOf(delivery.name) === QUEUE_NAMES.ingestBulk ? queues.ingestBulk : queues.ingest;
}

/** Adds the deliveries, one addBulk per queue; adding one whose job id is queued already is a no-op. */
export async function addIngestDeliveries(queues: IngestQueues<DeliveryQueue>, deliveries: readonly IngestDelivery[]): Promise<void> {
  const joined = joinBatchDeliveries(deliveries);
  await Promise.all([queues.ingest, queues.ingestBulk].map(async (queue) => {
    const own = joined.filter((delivery) => queueOfDelivery(queues, delivery) === queue);
    if (own.length === 0) return undefined;
    // A delivery still queued keeps its turn (BullMQ takes a second add of its id as a no-op); the turn
    // taken for it here goes unused.
    const turns = await takeTurns(queue, own.map(organizationsOf));
    return queue.addBulk(own.map((delivery, index) => ({
      name: delivery.name, data: delivery.data, opts: { ...INGEST_JOB_OPTIONS, jobId: delivery.jobId, priority: turns[index]! },
    })));
  }));
}
