/**
 * Turns between organisations (shared/src/server/fair-turns.ts) on a real BullMQ queue in Redis, no
 * worker: the order of the prioritized set is the order a worker would take the jobs in.
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LAST_TURN, takeTurns, turnsKey } from '@bioprocess/shared/server/fair-turns';

describe('turns between organisations', () => {
  const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const queue = new Queue('turns', { connection, prefix: `bp-test-turns-${randomBytes(4).toString('hex')}` });

  /** Adds one job per entry (its organisations), in the turn it takes; answers the turns. */
  async function add(...organizations: number[][]): Promise<number[]> {
    const turns = await takeTurns(queue, organizations);
    await queue.addBulk(organizations.map((owners, index) => ({ name: 'job', data: { owners }, opts: { priority: turns[index]!, jobId: `${owners.join('+')}-${randomBytes(3).toString('hex')}` } })));
    return turns;
  }
  const waitingOwners = async () => (await queue.getPrioritized()).map((job) => (job.data as { owners: number[] }).owners.join('+'));

  beforeEach(async () => {
    await queue.obliterate({ force: true });
    await connection.del(turnsKey(queue));
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  });

  it('puts a newcomer\'s job right behind the head of a flooding organisation\'s backlog', async () => {
    expect(await add([1], [1], [1], [1])).toEqual([1, 2, 3, 4]);
    expect(await add([2])).toEqual([1]);
    expect(await add([3], [3])).toEqual([1, 2]);
    expect(await waitingOwners()).toEqual(['1', '2', '3', '1', '3', '1', '1']);
  });

  it('gives an organisation that was idle no credit: its job is due no earlier than the turn being served', async () => {
    await add([1], [1], [1], [1], [1], [1]);
    // The workers took the first four of them: the queue now serves turn 5.
    for (const job of (await queue.getPrioritized()).slice(0, 4)) await job.remove();
    expect(await add([2])).toEqual([5]);
    expect(await waitingOwners()).toEqual(['1', '2', '1']);
  });

  it('lets a batch of several organisations take the earliest turn among them and use up a turn of each', async () => {
    await add([1], [1], [1]);
    expect(await add([1, 2])).toEqual([1]);
    expect(await add([2], [1])).toEqual([2, 4]);
  });

  it('starts every organisation level again once no job waits, and never hands out a turn past BullMQ\'s largest priority', async () => {
    await add([1], [1], [1]);
    await queue.obliterate({ force: true });
    expect(await add([1])).toEqual([1]);
    await connection.hset(turnsKey(queue), '7', String(LAST_TURN + 10));
    expect(await add([7], [7])).toEqual([LAST_TURN, LAST_TURN]);
    expect(await waitingOwners()).toEqual(['1', '7', '7']);
  });
});
