/**
 * An organisation's slots (shared/src/server/organization-slots.ts) on a real BullMQ queue in Redis,
 * taken by workers that fetch jobs by hand, so each step is explicit: a job over its organisation's cap
 * is parked and promoted once a slot frees; a worker that dies holding a slot holds it only until
 * BullMQ's stall check takes its job back; a Redis that comes back empty forgets slots and parks along
 * with the jobs.
 */
import { randomBytes } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@bioprocess/shared/server/logger';
import { organizationSlots, type OrganizationSlots } from '@bioprocess/shared/server/organization-slots';

const A = 11;
const B = 12;

describe('slots of an organisation', () => {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  let prefix: string;
  let queue: Queue;
  let slots: OrganizationSlots;
  const takers: Array<{ worker: Worker; connection: Redis }> = [];

  /** A worker that takes jobs only when asked, renewing no lock: closing it without finishing its jobs is a kill. */
  function taker(lockDuration = 60_000): Worker {
    const own = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker('slots', null, { connection: own, prefix, lockDuration, stalledInterval: 200, autorun: false });
    takers.push({ worker, connection: own });
    return worker;
  }
  /** Takes the next job and asks for its slot: the job and whether it may run (a job without a slot is parked). */
  async function takeNext(worker: Worker, token: string): Promise<{ job: Job; runs: boolean }> {
    const job = await worker.getNextJob(token, { block: false });
    expect(job).toBeDefined();
    return { job, runs: await slots.take(job, token, (job.data as { organization_id: number }).organization_id) };
  }
  async function finish(job: Job, token: string): Promise<void> {
    await job.moveToCompleted('done', token, false);
    await slots.freed((job.data as { organization_id: number }).organization_id);
  }
  const add = (organizationId: number, name: string, priority: number) =>
    queue.add(name, { organization_id: organizationId }, { jobId: name, priority });
  const stateOf = async (name: string) => (await queue.getJob(name))?.getState();

  beforeEach(() => {
    prefix = `bp-test-slots-${randomBytes(4).toString('hex')}`;
    queue = new Queue('slots', { connection, prefix });
    slots = organizationSlots(queue, 1, createLogger('slots-test', 'silent'));
  });
  afterEach(async () => {
    for (const { worker, connection: own } of takers.splice(0)) {
      await worker.close(true);
      own.disconnect();
    }
    await queue.obliterate({ force: true });
    await queue.close();
  });
  afterAll(() => connection.disconnect());

  it('parks a job over its organisation\'s cap, lets another organisation\'s run, and promotes the parked one when the slot frees', async () => {
    await add(A, 'a1', 1);
    await add(A, 'a2', 2);
    await add(B, 'b1', 2);
    const worker = taker();
    const first = await takeNext(worker, 't1');
    expect([first.job.id, first.runs]).toEqual(['a1', true]);
    const second = await takeNext(worker, 't2');
    expect([second.job.id, second.runs]).toEqual(['a2', false]);
    expect(await stateOf('a2')).toBe('delayed');
    const third = await takeNext(worker, 't3');
    expect([third.job.id, third.runs]).toEqual(['b1', true]);

    await finish(first.job, 't1');
    // Promoted to the head of the queue: the next job taken, and it now has its organisation's slot.
    expect(await stateOf('a2')).toBe('prioritized');
    const again = await takeNext(worker, 't4');
    expect([again.job.id, again.runs]).toEqual(['a2', true]);
    await finish(again.job, 't4');
    await finish(third.job, 't3');
  });

  it('frees the slot of a worker killed holding it once BullMQ takes its job back, then runs the parked job', async () => {
    await add(A, 'a1', 1);
    await add(A, 'a2', 2);
    const doomed = taker(500);
    const held = await takeNext(doomed, 'dead');
    expect(held.runs).toBe(true);
    const survivor = taker();
    const parked = await takeNext(survivor, 's1');
    expect([parked.job.id, parked.runs]).toEqual(['a2', false]);

    // The holder dies without a word: its lock lapses and the survivor's stall check moves its job back.
    await doomed.close(true);
    await survivor.startStalledCheckTimer();
    for (let tries = 0; (await stateOf('a1')) !== 'waiting'; tries += 1) {
      expect(tries).toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const resumed = await takeNext(survivor, 's2');
    expect([resumed.job.id, resumed.runs]).toEqual(['a1', true]);
    await finish(resumed.job, 's2');
    const promoted = await takeNext(survivor, 's3');
    expect([promoted.job.id, promoted.runs]).toEqual(['a2', true]);
    await finish(promoted.job, 's3');
  });

  it('forgets slots and parks with a Redis that comes back empty: the jobs queued again run from a clean slate', async () => {
    await add(A, 'a1', 1);
    await add(A, 'a2', 2);
    const worker = taker();
    expect((await takeNext(worker, 'x1')).runs).toBe(true);
    expect((await takeNext(worker, 'x2')).runs).toBe(false);
    // Redis comes back empty: every key of the queue is gone, its slots' and parks' with the rest.
    expect(await connection.exists(queue.toKey(`parked:${A}`))).toBe(1);
    const keys = await connection.keys(`${prefix}:*`);
    await connection.del(...keys);

    // The reconciler's part: both deliveries made again from PostgreSQL.
    await add(A, 'a1', 1);
    await add(A, 'a2', 2);
    const first = await takeNext(worker, 'y1');
    expect([first.job.id, first.runs]).toEqual(['a1', true]);
    await finish(first.job, 'y1');
    const second = await takeNext(worker, 'y2');
    expect([second.job.id, second.runs]).toEqual(['a2', true]);
  });
});
