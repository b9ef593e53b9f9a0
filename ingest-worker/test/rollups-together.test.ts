/**
 * The shared rollup pass of bulk posts finishing together (shared/src/server/rollups.ts,
 * recomputeRollupsTogether): the posts' own minute figures stored as they are when their minutes (and
 * hours) hold no other row, one statement per table when the writes hold only their own rows and
 * cannot share a key, one deduplicating statement per table for all of them otherwise (feeds whose
 * posts share minutes, 32 of them interleaving); with a committer's chains, the posts' figures added
 * to the rows it stored last (rollup-chains.ts), and a recomputation wherever that would not be exact.
 * The rollups agree with the points every way, whatever order owed writes take their turns in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { createTestContext, type TestContext } from '@bioprocess/api/test-support';
import type { MinuteFigure } from '@bioprocess/shared/minute-figures';
import { insertPoints } from '@bioprocess/shared/server/points-store';
import { recomputeRollups, recomputeRollupsTogether, type RollupRequest } from '@bioprocess/shared/server/rollups';
import { RollupChains } from '@bioprocess/shared/server/rollup-chains';
import { whileRecomputing } from '@bioprocess/shared/server/rollup-locks';
import { pointVersion, tombstoneVersion } from '@bioprocess/shared/ingest/versions';

const ORGANIZATION = 41;
const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);

interface Write {
  versionSeq: number;
  instrumentId: number;
  points: Array<[ts: number, value: number | null]>;
}

/** Stores a write's points with its versions, as a bulk post's chunk does. */
async function store(ctx: TestContext, write: Write): Promise<void> {
  const lines = write.points.map(([ts, value], index) =>
    `${ORGANIZATION}\t${write.instrumentId}\t${ts}\t${value ?? '\\N'}\t${pointVersion(write.versionSeq, index)}\t0\n`);
  await insertPoints(ctx.deps.clickhouse, lines.join(''), 'TabSeparated');
}

function requestOf(write: Write, own = true): RollupRequest {
  const times = write.points.map(([ts]) => ts);
  return {
    range: { organizationId: ORGANIZATION, instrumentIds: [write.instrumentId], startMs: Math.min(...times), endMs: Math.max(...times) },
    ownRows: own ? { versionSeq: write.versionSeq } : undefined,
  };
}

/** A bulk post's request: its own rows and its minute figures, as the api computes them. */
function requestWithFigures(write: Write): RollupRequest {
  const minuteFigures: MinuteFigure[] = Object.entries(expected([write], write.instrumentId, 60_000))
    .map(([minute, figure]) => ({ instrumentId: write.instrumentId, minute: Number(minute), ...figure }));
  return { ...requestOf(write), minuteFigures };
}

/** Counts the aggregating statements (command), the row inserts (exec) and the questions (query) run through the client. */
function countingClient(clickhouse: ClickHouseClient): { client: ClickHouseClient; commands: () => number; inserts: () => number; queries: () => number } {
  let commands = 0;
  let inserts = 0;
  let queries = 0;
  const client = new Proxy(clickhouse, {
    get(target, property, receiver) {
      if (property === 'query') {
        return (...args: Parameters<ClickHouseClient['query']>) => {
          queries += 1;
          return target.query(...args);
        };
      }
      if (property === 'command') {
        return (...args: Parameters<ClickHouseClient['command']>) => {
          commands += 1;
          return target.command(...args);
        };
      }
      if (property === 'exec') {
        return (...args: Parameters<ClickHouseClient['exec']>) => {
          inserts += 1;
          return target.exec(...args);
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { client, commands: () => commands, inserts: () => inserts, queries: () => queries };
}

type Rollup = { points: number; count: number; sum: number; min: number | null; max: number | null };

async function rollups(ctx: TestContext, table: 'points_rollup_1m' | 'points_rollup_1h', instrumentId: number): Promise<Record<number, Rollup>> {
  const column = table === 'points_rollup_1m' ? 'minute' : 'hour';
  const result = await ctx.deps.clickhouse.query({
    query: `SELECT ${column} AS at, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
                   argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
              FROM ${table} WHERE organization_id = ${ORGANIZATION} AND instrument_id = ${instrumentId}
             GROUP BY at HAVING p > 0 ORDER BY at`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ at: string; p: string; n: string; s: number; lo: number | null; hi: number | null }>();
  return Object.fromEntries(rows.map((row) => [Number(row.at), { points: Number(row.p), count: Number(row.n), sum: row.s, min: row.lo, max: row.hi }]));
}

/** The rollups the readings of an instrument must give: the latest version of each key wins. */
function expected(writes: Write[], instrumentId: number, width: number): Record<number, Rollup> {
  const latest = new Map<number, number | null>();
  for (const write of [...writes].sort((a, b) => a.versionSeq - b.versionSeq)) {
    if (write.instrumentId === instrumentId) for (const [ts, value] of write.points) latest.set(ts, value);
  }
  const buckets: Record<number, Rollup> = {};
  for (const [ts, value] of latest) {
    const at = ts - (ts % width);
    const bucket = (buckets[at] ??= { points: 0, count: 0, sum: 0, min: null, max: null });
    bucket.points += 1;
    if (value !== null) {
      bucket.count += 1;
      bucket.sum += value;
      bucket.min = bucket.min === null ? value : Math.min(bucket.min, value);
      bucket.max = bucket.max === null ? value : Math.max(bucket.max, value);
    }
  }
  return buckets;
}

/** Small writes go straight to the recomputation; these tests take the fast ways a large write takes. */
const ASK_FIRST = { askAbovePoints: 0 };

const seconds = (from: number, count: number, value: (index: number) => number | null): Array<[number, number | null]> =>
  Array.from({ length: count }, (_, index) => [T0 + (from + index) * 1000, value(index)]);

describe('rollups of writes finishing together', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('covers writes holding only their own rows in one statement per table, exactly', async () => {
    const writes: Write[] = [
      // Two writes of one instrument meeting inside a minute, a third instrument's write, a null value.
      { versionSeq: 101, instrumentId: 1, points: seconds(0, 90, (index) => index) },
      { versionSeq: 102, instrumentId: 1, points: seconds(90, 4000, (index) => (index % 7 === 0 ? null : index * 0.5)) },
      { versionSeq: 103, instrumentId: 2, points: seconds(30, 200, (index) => 5 - index) },
    ];
    for (const write of writes) await store(ctx, write);
    const { client, commands } = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(client, ctx.deps.pg, writes.map((write) => requestOf(write)), ASK_FIRST);
    expect(commands()).toBe(2);
    for (const instrumentId of [1, 2]) {
      expect(await rollups(ctx, 'points_rollup_1m', instrumentId)).toEqual(expected(writes, instrumentId, 60_000));
      expect(await rollups(ctx, 'points_rollup_1h', instrumentId)).toEqual(expected(writes, instrumentId, 3_600_000));
    }
  });

  it('recomputes the writes from the deduplicated points, in one pass per table, when two may share a key or a range holds rows of another write', async () => {
    const earlier: Write = { versionSeq: 201, instrumentId: 3, points: seconds(0, 300, () => 1) };
    const overlapping: Write = { versionSeq: 202, instrumentId: 3, points: seconds(100, 100, () => 2) };
    for (const write of [earlier, overlapping]) await store(ctx, write);
    const together = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(together.client, ctx.deps.pg, [requestOf(earlier), requestOf(overlapping)], ASK_FIRST);
    expect(together.commands()).toBe(2);
    expect(await rollups(ctx, 'points_rollup_1m', 3)).toEqual(expected([earlier, overlapping], 3, 60_000));

    // A write over rows stored before it (instrument 3's), beside a write of its own instrument.
    const over: Write = { versionSeq: 203, instrumentId: 3, points: seconds(250, 20, () => 3) };
    const apart: Write = { versionSeq: 204, instrumentId: 4, points: seconds(0, 50, () => 4) };
    for (const write of [over, apart]) await store(ctx, write);
    const checked = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(checked.client, ctx.deps.pg, [requestOf(over), requestOf(apart)], ASK_FIRST);
    expect(checked.commands()).toBe(2);
    expect(await rollups(ctx, 'points_rollup_1m', 3)).toEqual(expected([earlier, overlapping, over], 3, 60_000));
    expect(await rollups(ctx, 'points_rollup_1h', 4)).toEqual(expected([apart], 4, 3_600_000));
  });

  it('stores the posts\' own minute figures, with no aggregation of points, when their minutes hold no other row (hours from the minute rollups)', async () => {
    const writes: Write[] = [
      // Two posts of one instrument meeting inside a minute (its row must count both), another instrument, nulls.
      { versionSeq: 301, instrumentId: 5, points: seconds(0, 90, (index) => index * 1.25) },
      { versionSeq: 302, instrumentId: 5, points: seconds(90, 4000, (index) => (index % 5 === 0 ? null : -index)) },
      { versionSeq: 303, instrumentId: 6, points: seconds(10, 30, () => null) },
    ];
    for (const write of writes) await store(ctx, write);
    const { client, commands, inserts } = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(client, ctx.deps.pg, writes.map(requestWithFigures), ASK_FIRST);
    // The minute rows as the posts computed them; the hours aggregated from at most 60 minute rows each.
    expect([commands(), inserts()]).toEqual([1, 1]);
    for (const instrumentId of [5, 6]) {
      expect(await rollups(ctx, 'points_rollup_1m', instrumentId)).toEqual(expected(writes, instrumentId, 60_000));
      expect(await rollups(ctx, 'points_rollup_1h', instrumentId)).toEqual(expected(writes, instrumentId, 3_600_000));
    }
  });

  it('aggregates the hours in the database when they hold other rows, and everything when the minutes do', async () => {
    const earlier: Write = { versionSeq: 401, instrumentId: 7, points: seconds(0, 60, (index) => index) };
    // Same hour, other minutes: the minutes are the post's alone, its hour is not.
    const sameHour: Write = { versionSeq: 402, instrumentId: 7, points: seconds(600, 120, (index) => 100 + index) };
    for (const write of [earlier, sameHour]) await store(ctx, write);
    await recomputeRollupsTogether(ctx.deps.clickhouse, ctx.deps.pg, [requestWithFigures(earlier)], ASK_FIRST);
    const hourShared = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(hourShared.client, ctx.deps.pg, [requestWithFigures(sameHour)], ASK_FIRST);
    expect([hourShared.commands(), hourShared.inserts()]).toEqual([1, 1]);
    expect(await rollups(ctx, 'points_rollup_1m', 7)).toEqual(expected([earlier, sameHour], 7, 60_000));
    expect(await rollups(ctx, 'points_rollup_1h', 7)).toEqual(expected([earlier, sameHour], 7, 3_600_000));

    // A post into a minute that already holds a reading: its own figures would miss that reading.
    const sameMinute: Write = { versionSeq: 403, instrumentId: 7, points: seconds(30, 10, () => 1_000) };
    await store(ctx, sameMinute);
    const minuteShared = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(minuteShared.client, ctx.deps.pg, [requestWithFigures(sameMinute)], ASK_FIRST);
    expect(minuteShared.inserts()).toBe(0);
    expect(await rollups(ctx, 'points_rollup_1m', 7)).toEqual(expected([earlier, sameHour, sameMinute], 7, 60_000));
    expect(await rollups(ctx, 'points_rollup_1h', 7)).toEqual(expected([earlier, sameHour, sameMinute], 7, 3_600_000));
  });

  it('recomputes only the minutes a post shares with another write, and takes its own figures for the rest', async () => {
    // A backfill in posts of 5,000 s: each shares its edge minutes with the next, finished apart.
    const first: Write = { versionSeq: 451, instrumentId: 9, points: seconds(0, 5_000, (index) => index % 13) };
    const second: Write = { versionSeq: 452, instrumentId: 9, points: seconds(5_000, 5_000, (index) => (index % 11 === 0 ? null : -index)) };
    await store(ctx, first);
    await recomputeRollupsTogether(ctx.deps.clickhouse, ctx.deps.pg, [requestWithFigures(first)], ASK_FIRST);
    await store(ctx, second);
    const edge = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(edge.client, ctx.deps.pg, [requestWithFigures(second)], ASK_FIRST);
    // Its figures in one insert, the shared minute and the hours aggregated in the database.
    expect([edge.inserts(), edge.commands()]).toEqual([1, 2]);
    expect(await rollups(ctx, 'points_rollup_1m', 9)).toEqual(expected([first, second], 9, 60_000));
    expect(await rollups(ctx, 'points_rollup_1h', 9)).toEqual(expected([first, second], 9, 3_600_000));
  });

  it('recomputes small posts sharing minutes from the points without asking first, exactly', async () => {
    // A feed's consecutive posts of 5 s (each minute already holds the previous post's rows), one across
    // a minute's end, a post sending one of them again with another value, and another instrument's.
    const writes: Write[] = [
      { versionSeq: 601, instrumentId: 10, points: seconds(0, 5, (index) => index) },
      { versionSeq: 602, instrumentId: 10, points: seconds(5, 5, (index) => (index === 2 ? null : 10 + index)) },
      { versionSeq: 603, instrumentId: 10, points: seconds(58, 5, () => 3.5) },
      { versionSeq: 604, instrumentId: 10, points: seconds(3, 1, () => 99) },
      { versionSeq: 605, instrumentId: 11, points: seconds(0, 5, (index) => 1 - 2 * index) },
    ];
    await store(ctx, writes[0]!);
    await recomputeRollupsTogether(ctx.deps.clickhouse, ctx.deps.pg, [{ ...requestWithFigures(writes[0]!), points: 5 }]);
    for (const write of writes.slice(1)) await store(ctx, write);
    const small = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(small.client, ctx.deps.pg, writes.slice(1).map((write) => ({ ...requestWithFigures(write), points: write.points.length })));
    expect([small.queries(), small.commands(), small.inserts()]).toEqual([0, 2, 0]);
    for (const instrumentId of [10, 11]) {
      expect(await rollups(ctx, 'points_rollup_1m', instrumentId)).toEqual(expected(writes, instrumentId, 60_000));
      expect(await rollups(ctx, 'points_rollup_1h', instrumentId)).toEqual(expected(writes, instrumentId, 3_600_000));
    }
  });

  it('counts a post in its hour when another post lands in that hour and finishes its rollups while the first is storing its own', async () => {
    const slow: Write = { versionSeq: 501, instrumentId: 8, points: seconds(0, 120, (index) => index) };
    const fast: Write = { versionSeq: 502, instrumentId: 8, points: seconds(1800, 60, () => 7) };
    await store(ctx, slow);
    // Right after the slow post's first check (its hour then held only its own rows), the fast post
    // lands in the same hour and stores all its rollups (as another ingest-worker would).
    let checks = 0;
    const interleaved = new Proxy(ctx.deps.clickhouse, {
      get(target, property, receiver) {
        if (property === 'query') {
          return async (...args: Parameters<ClickHouseClient['query']>) => {
            const result = await target.query(...args);
            checks += 1;
            if (checks === 1) {
              await store(ctx, fast);
              await recomputeRollupsTogether(ctx.deps.clickhouse, ctx.deps.pg, [requestWithFigures(fast)], ASK_FIRST);
            }
            return result;
          };
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    await recomputeRollupsTogether(interleaved, ctx.deps.pg, [requestWithFigures(slow)], ASK_FIRST);
    expect(await rollups(ctx, 'points_rollup_1m', 8)).toEqual(expected([slow, fast], 8, 60_000));
    expect(await rollups(ctx, 'points_rollup_1h', 8)).toEqual(expected([slow, fast], 8, 3_600_000));
  });
});

describe('rollups composed onto the rows a committer stored (rollup chains)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  let nextVersionSeq = 10_000;
  const post = (instrumentId: number, from: number, count: number, value: (second: number) => number | null): Write => ({
    versionSeq: nextVersionSeq++, instrumentId, points: seconds(from, count, (index) => value(from + index)),
  });
  const expectExact = async (writes: Write[], instrumentIds: number[]) => {
    for (const instrumentId of instrumentIds) {
      expect(await rollups(ctx, 'points_rollup_1m', instrumentId), `minutes of ${instrumentId}`).toEqual(expected(writes, instrumentId, 60_000));
      expect(await rollups(ctx, 'points_rollup_1h', instrumentId), `hours of ${instrumentId}`).toEqual(expected(writes, instrumentId, 3_600_000));
    }
  };

  it('composes 32 interleaving feeds\' posts with no aggregation in ClickHouse, exact after every flush, across an hour\'s end', async () => {
    const chains = new RollupChains();
    const feeds = Array.from({ length: 32 }, (_, index) => 1_000 + index);
    const value = (feed: number) => (second: number) => ((feed * 7 + second) % 11 === 0 ? null : ((feed + second) % 13) * 0.25 - 1);
    const written: Write[] = [];
    // 5 s posts from a minute before an hour's end to a minute after it; four flushes of eight feeds per round.
    for (let from = 3_540; from < 3_660; from += 5) {
      for (let group = 0; group < 4; group += 1) {
        const writes = feeds.slice(group * 8, group * 8 + 8).map((feed) => post(feed, from, 5, value(feed)));
        for (const write of writes) await store(ctx, write);
        written.push(...writes);
        const counted = countingClient(ctx.deps.clickhouse);
        await recomputeRollupsTogether(counted.client, ctx.deps.pg, writes.map(requestWithFigures), { chains });
        // One question, then the composed minute and hour rows: never an aggregation of points.
        expect([counted.queries(), counted.commands(), counted.inserts()]).toEqual([1, 0, 2]);
      }
      if (from % 60 === 55) await expectExact(written, feeds.slice(0, 9));
    }
    await expectExact(written, feeds);
  });

  it('recomputes what composing would get wrong: keys stored before, another writer\'s rows, another committer, a held lock, a failed insert', async () => {
    const chains = new RollupChains();
    const instrumentId = 1_100;
    const written: Write[] = [];
    const flush = async (write: Write, using = chains, clickhouse = ctx.deps.clickhouse) => {
      await store(ctx, write);
      written.push(write);
      const counted = countingClient(clickhouse);
      await recomputeRollupsTogether(counted.client, ctx.deps.pg, [requestWithFigures(write)], { chains: using });
      return counted;
    };
    expect((await flush(post(instrumentId, 0, 10, (second) => second))).commands()).toBe(0);
    // Sends seconds 5-9 again with other values, and a merge drops the rows it replaced before its
    // rollups run: its figures would count those seconds twice, and the points no longer show them.
    const again = post(instrumentId, 5, 10, (second) => -second);
    await store(ctx, again);
    written.push(again);
    await ctx.deps.clickhouse.command({ query: 'OPTIMIZE TABLE points FINAL' });
    const replacing = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(replacing.client, ctx.deps.pg, [requestWithFigures(again)], { chains });
    expect(replacing.commands()).toBe(2);
    await expectExact(written, [instrumentId]);

    // Another writer (a deletion's or the backlog pass's recomputation) stores newer rows.
    await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, { organizationId: ORGANIZATION, instrumentIds: [instrumentId], startMs: T0, endMs: T0 + 59_000 });
    expect((await flush(post(instrumentId, 15, 5, () => 2))).commands()).toBe(2);
    // Another committer (a second ingest-worker) does not know this one's rows, nor this one its.
    expect((await flush(post(instrumentId, 20, 5, () => 3), new RollupChains())).commands()).toBe(2);
    expect((await flush(post(instrumentId, 25, 5, () => 4))).commands()).toBe(2);
    await expectExact(written, [instrumentId]);

    // The next minute starts a chain again, onto the hour this committer recomputed last.
    expect((await flush(post(instrumentId, 60, 5, () => 5))).commands()).toBe(0);
    expect((await flush(post(instrumentId, 65, 5, () => 6))).commands()).toBe(0);

    // A recomputation holding the organization's lock: the flush recomputes beside it rather than wait.
    let held!: () => void;
    let release!: () => void;
    const holding = whileRecomputing(ctx.deps.pg, [ORGANIZATION], () => new Promise<void>((resolve) => {
      held();
      release = resolve;
    }));
    await new Promise<void>((resolve) => { held = resolve; });
    const beside = await flush(post(instrumentId, 70, 5, () => 7));
    release();
    await holding;
    expect([beside.commands(), beside.inserts()]).toEqual([2, 0]);
    await expectExact(written, [instrumentId]);

    // After another writer's rows the hour is recomputed, then composed onto again.
    expect((await flush(post(instrumentId, 120, 5, () => 8))).commands()).toBe(1);
    expect((await flush(post(instrumentId, 125, 5, () => 8.5))).commands()).toBe(0);
    // The hour's insert fails after the minute's was stored: the next flush recomputes both.
    const failing = new Proxy(ctx.deps.clickhouse, {
      get(target, property, receiver) {
        if (property === 'exec') {
          return (...args: Parameters<ClickHouseClient['exec']>) => (args[0].query.includes('points_rollup_1h') ? Promise.reject(new Error('ClickHouse went away')) : target.exec(...args));
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    await expect(flush(post(instrumentId, 130, 5, () => 9), chains, failing)).rejects.toThrow('ClickHouse went away');
    expect((await flush(post(instrumentId, 135, 5, () => 10))).commands()).toBe(2);
    await expectExact(written, [instrumentId]);
  });

  it('recomputes a post whose readings a deletion removed before its turn (the deletion\'s rows say so, though no reading is left)', async () => {
    const chains = new RollupChains();
    const instrumentId = 1_150;
    const write = post(instrumentId, 0, 30, (second) => second);
    await store(ctx, write);
    // A deletion accepted after the post runs in full first: tombstones over its readings, then its rollups.
    const tombstones = write.points.map(([ts]) => `${ORGANIZATION}\t${instrumentId}\t${ts}\t\\N\t${tombstoneVersion(nextVersionSeq++)}\t1\n`);
    await insertPoints(ctx.deps.clickhouse, tombstones.join(''), 'TabSeparated');
    await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, { organizationId: ORGANIZATION, instrumentIds: [instrumentId], startMs: T0, endMs: T0 + 29_000 });
    const counted = countingClient(ctx.deps.clickhouse);
    await recomputeRollupsTogether(counted.client, ctx.deps.pg, [requestWithFigures(write)], { chains });
    expect(counted.inserts()).toBe(0);
    expect(await rollups(ctx, 'points_rollup_1m', instrumentId)).toEqual({});
    expect(await rollups(ctx, 'points_rollup_1h', instrumentId)).toEqual({});
  });

  it.each([20261125, 7, 424242])('counts a write whose rollups are still owed when its turn comes, and never twice, whatever the order (random run %i)', async (seed) => {
    let state = seed;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const instruments = [1_200, 1_201, 1_202].map((id) => id + seed % 1_000 * 3);
    const committer = new RollupChains();
    const another = new RollupChains();
    const written: Write[] = [];
    let owed: Write[] = [];
    const counted = countingClient(ctx.deps.clickhouse);
    const settle = async () => {
      for (const write of owed) await recomputeRollupsTogether(counted.client, ctx.deps.pg, [requestWithFigures(write)], { chains: committer });
      owed = [];
      await expectExact(written, instruments);
    };
    for (let step = 0; step < 150; step += 1) {
      // Now and then every owed write takes its turn: the rollups must then agree with the points.
      if (step % 25 === 24) await settle();
      const action = random();
      if (action < 0.5) {
        // A feed's next seconds, or seconds sent before, across minutes of two hours.
        const write = post(pick(instruments), Math.floor(random() * 240) + 3_480, 1 + Math.floor(random() * 8), () => (random() < 0.1 ? null : Math.floor(random() * 40) * 0.5 - 10));
        await store(ctx, write);
        written.push(write);
        owed.push(write);
        // Now and then a merge drops the rows replaced so far.
        if (random() < 0.1) await ctx.deps.clickhouse.command({ query: 'OPTIMIZE TABLE points FINAL' });
      } else if (action < 0.96 && owed.length > 0) {
        const flushed = owed.filter(() => random() < 0.3);
        owed = owed.filter((write) => !flushed.includes(write));
        await recomputeRollupsTogether(counted.client, ctx.deps.pg, flushed.map(requestWithFigures), { chains: random() < 0.9 ? committer : another });
      } else {
        // Another writer recomputes an instrument's range while some of its writes are still owed.
        await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, { organizationId: ORGANIZATION, instrumentIds: [pick(instruments)], startMs: T0 + 3_480_000, endMs: T0 + 3_720_000 });
      }
    }
    await settle();
    // Composed rows were stored many times over (the run tests the chains, not only the recomputation).
    expect(counted.inserts()).toBeGreaterThan(10);
  });
});
