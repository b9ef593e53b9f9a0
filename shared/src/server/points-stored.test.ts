import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedis } from './redis.ts';
import {
  announceAllPointsStored, announcePointsStored, lastPointsStoredId, POINTS_STORED_STREAM, pointsStoredCovers, readPointsStored, readPointsStoredBetween,
} from './points-stored.ts';

const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6380');
const prefixes: string[] = [];
const freshPrefix = () => {
  const prefix = `points-stored-test-${randomUUID()}`;
  prefixes.push(prefix);
  return prefix;
};

afterAll(async () => {
  for (const prefix of prefixes) await redis.del(POINTS_STORED_STREAM(prefix));
  redis.disconnect();
});

const entry = (instrumentId: number, fromMs: number) => ({
  organizationId: 7, instrumentIds: [instrumentId], fromMs, toMs: fromMs + 999, kind: 'points' as const, jobIds: [`job-${instrumentId}`], points: 10,
});

describe('points-stored stream', () => {
  it('reads back what was announced, in order, with its stream ids', async () => {
    const prefix = freshPrefix();
    const first = await announcePointsStored(redis, prefix, entry(1, 1_000));
    await announceAllPointsStored(redis, prefix, [entry(2, 2_000), { ...entry(3, 3_000), kind: 'deletion' }]);
    const all = await readPointsStored(redis, prefix, '0-0', { count: 10 });
    expect(all.map((read) => [read.instrumentIds, read.kind, read.jobIds, read.fromMs, read.toMs, read.points])).toEqual([
      [[1], 'points', ['job-1'], 1_000, 1_999, 10],
      [[2], 'points', ['job-2'], 2_000, 2_999, 10],
      [[3], 'deletion', ['job-3'], 3_000, 3_999, 10],
    ]);
    expect(all[0]!.id).toBe(first);
    expect(await readPointsStored(redis, prefix, first!)).toHaveLength(2);
    expect(await readPointsStoredBetween(redis, prefix, first!, all[1]!.id)).toEqual([all[1]]);
    expect(await lastPointsStoredId(redis, prefix)).toBe(all[2]!.id);
  });

  it('a blocked read wakes for an entry appended meanwhile', async () => {
    const prefix = freshPrefix();
    const reader = redis.duplicate();
    try {
      const blockedClients = async () => Number(/blocked_clients:(\d+)/.exec(await redis.info('clients'))?.[1] ?? 0);
      const blockedBefore = await blockedClients();
      // From the start of the (still empty) stream rather than '$': other readers of this Redis (the
      // suite's apis and alert workers) block too, so the count below may rise for one of them, and an
      // entry appended before this read began must still be read.
      const waiting = readPointsStored(reader, prefix, '0-0', { blockMs: 30_000 });
      // The reader is blocked once Redis counts one more blocked client; then the entry goes in.
      for (let tries = 0; tries < 200; tries += 1) {
        if (await blockedClients() > blockedBefore) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await announcePointsStored(redis, prefix, entry(4, 4_000));
      expect((await waiting).map((read) => read.instrumentIds)).toEqual([[4]]);
    } finally {
      reader.disconnect();
    }
  });

  it('judges whether a resume point is still covered', async () => {
    const prefix = freshPrefix();
    expect(await pointsStoredCovers(redis, prefix, '1-0')).toBe(false);
    const ids: string[] = [];
    for (let at = 0; at < 5; at += 1) ids.push((await announcePointsStored(redis, prefix, entry(at + 1, at * 1_000)))!);
    expect(await pointsStoredCovers(redis, prefix, ids[0]!)).toBe(true);
    expect(await pointsStoredCovers(redis, prefix, ids[4]!)).toBe(true);
    // Trimmed to its last three: a client that saw the third missed nothing; one that saw the first
    // missed the second.
    await redis.xtrim(POINTS_STORED_STREAM(prefix), 'MAXLEN', 3);
    expect(await pointsStoredCovers(redis, prefix, ids[2]!)).toBe(true);
    expect(await pointsStoredCovers(redis, prefix, ids[0]!)).toBe(false);
    // A stream started again (Redis lost it): an id of the old one is not covered.
    await redis.del(POINTS_STORED_STREAM(prefix));
    await announcePointsStored(redis, prefix, entry(9, 9_000));
    expect(await pointsStoredCovers(redis, prefix, ids[4]!)).toBe(false);
    // An id from the future of this stream came from another one.
    expect(await pointsStoredCovers(redis, prefix, '99999999999999-0')).toBe(false);
  });

  it('an announcement while Redis is unreachable is logged and answers null, never throws', async () => {
    const down = createRedis('redis://127.0.0.1:1', { lazyConnect: true, retryStrategy: () => 50 });
    down.on('error', () => {});
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as never;
    try {
      expect(await announcePointsStored(down, freshPrefix(), entry(1, 0), logger, 200)).toBeNull();
      await announceAllPointsStored(down, freshPrefix(), [entry(1, 0), entry(2, 0)], logger, 200);
      expect(warnings).toHaveLength(2);
    } finally {
      down.disconnect();
    }
  });
});
