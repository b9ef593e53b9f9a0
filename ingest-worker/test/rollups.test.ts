/**
 * The invariant of ingest-worker/src/rollups/recompute.ts: whatever writes, replacements and
 * deletions were stored, and however their recomputations were grouped, ordered or interleaved with
 * further writes, the newest rollup of every minute and hour equals the aggregation of the
 * deduplicated points. Also the work a recomputation does: writes asked for together share one
 * statement per table, and a heavy range is recomputed a few instruments at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { createTestContext, type TestContext } from '@bioprocess/api/test-support';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import type { RangeOnInstruments } from '@bioprocess/shared/ingest/requests';
import { seededRandom } from '@bioprocess/shared/seeded-random';
import { insertPoints } from '../src/points-store.ts';
import { writeTombstones } from '../src/deletions.ts';
import { recomputeRollups } from '../src/rollups/recompute.ts';

const ORGANIZATION = 41;
const T0 = Date.UTC(2024, 4, 1, 10, 58, 0);
const INSTRUMENTS = [1, 2, 3];

type Figures = { points: number; count: number; sum: number; min: number | null; max: number | null };
type Readings = Array<[ts: number, value: number | null]>;

/** Counts the aggregating statements run through the client. */
function countingCommands(clickhouse: ClickHouseClient): { client: ClickHouseClient; commands: () => number } {
  let commands = 0;
  const client = new Proxy(clickhouse, {
    get(target, property, receiver) {
      if (property !== 'command') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<ClickHouseClient['command']>) => {
        commands += 1;
        return target.command(...args);
      };
    },
  });
  return { client, commands: () => commands };
}

/** The newest rollup of each period with readings, per instrument and period start. */
async function storedRollups(ctx: TestContext, period: 'minute' | 'hour'): Promise<Record<string, Figures>> {
  const table = period === 'minute' ? 'points_rollup_1m' : 'points_rollup_1h';
  const result = await ctx.deps.clickhouse.query({
    query: `SELECT instrument_id AS i, ${period} AS at, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
                   argMax(tuple(value_min), version).1 AS lo, argMax(tuple(value_max), version).1 AS hi
              FROM ${table} WHERE organization_id = ${ORGANIZATION}
             GROUP BY i, at HAVING p > 0 ORDER BY i, at`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ i: string; at: string; p: string; n: string; s: number; lo: number | null; hi: number | null }>();
  return Object.fromEntries(rows.map((row) => [`${row.i}:${row.at}`, { points: Number(row.p), count: Number(row.n), sum: row.s, min: row.lo, max: row.hi }]));
}

/** What the rollups must hold: the aggregation of the newest live reading of every key. */
function expectedRollups(latest: Map<string, number | null>, width: number): Record<string, Figures> {
  const figures: Record<string, Figures> = {};
  for (const [key, value] of [...latest].sort(([a], [b]) => a.localeCompare(b))) {
    const [instrumentId, ts] = key.split(':').map(Number) as [number, number];
    const bucket = (figures[`${instrumentId}:${ts - (ts % width)}`] ??= { points: 0, count: 0, sum: 0, min: null, max: null });
    bucket.points += 1;
    if (value === null) continue;
    bucket.count += 1;
    bucket.sum += value;
    bucket.min = bucket.min === null ? value : Math.min(bucket.min, value);
    bucket.max = bucket.max === null ? value : Math.max(bucket.max, value);
  }
  return figures;
}

describe('rollups', () => {
  let ctx: TestContext;
  let versionSeq = 0;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await ctx.close();
  });

  const store = async (instrumentId: number, readings: Readings) => {
    versionSeq += 1;
    const seq = versionSeq;
    const lines = readings.map(([ts, value], index) => `${ORGANIZATION}\t${instrumentId}\t${ts}\t${value ?? '\\N'}\t${pointVersion(seq, index)}\t0\n`);
    await insertPoints(ctx.deps.clickhouse, lines.join(''), 'TabSeparated');
  };

  it('equal the deduplicated points after random writes, replacements and deletions recomputed in random groups and orders', async () => {
    const random = seededRandom(43);
    const pick = (count: number) => Math.floor(random() * count);
    /** The newest live reading of each `instrument:ts`, as the writes are applied in version order. */
    const latest = new Map<string, number | null>();
    let owed: Array<{ range: RangeOnInstruments; points: number }> = [];
    const recomputeSome = async () => {
      // Some owed recomputations, in a random group, while others stay owed for later.
      const taken = owed.filter(() => random() < 0.6);
      owed = owed.filter((request) => !taken.includes(request));
      await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, taken);
    };
    for (let step = 0; step < 60; step += 1) {
      const instrumentId = INSTRUMENTS[pick(INSTRUMENTS.length)]!;
      // Within four minutes around an hour's end, so writes share minutes and hours.
      const start = T0 + pick(240) * 1_000;
      const range = { organizationId: ORGANIZATION, instrumentIds: [instrumentId], startMs: start, endMs: start };
      if (random() < 0.15) {
        const endMs = start + pick(90) * 1_000;
        versionSeq += 1;
        await writeTombstones(ctx.deps.clickhouse, { ...range, endMs }, versionSeq);
        for (const key of [...latest.keys()]) {
          const [id, ts] = key.split(':').map(Number) as [number, number];
          if (id === instrumentId && ts >= start && ts <= endMs) latest.delete(key);
        }
        owed.push({ range: { ...range, endMs }, points: 0 });
      } else {
        // A feed's post of up to 30 s: some of its keys may repeat earlier ones with other values (or none).
        const readings: Readings = Array.from({ length: 1 + pick(30) }, (_, index) => [start + index * 1_000, random() < 0.1 ? null : pick(400) / 4 - 50]);
        const writing = store(instrumentId, readings);
        // Another write's recomputation may run while this one is being stored.
        await Promise.all([writing, random() < 0.3 ? recomputeSome() : Promise.resolve()]);
        for (const [ts, value] of readings) latest.set(`${instrumentId}:${ts}`, value);
        owed.push({ range: { ...range, endMs: readings.at(-1)![0] }, points: readings.length });
      }
      if (random() < 0.3) await recomputeSome();
    }
    // Whatever order the rest come in, one at a time or together.
    owed.sort(() => random() - 0.5);
    await Promise.all([recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, owed.slice(0, 5)), recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, owed.slice(5))]);

    const minutes = await storedRollups(ctx, 'minute');
    expect(Object.keys(minutes).length).toBeGreaterThan(INSTRUMENTS.length * 3);
    expect(minutes).toEqual(expectedRollups(latest, 60_000));
    const hours = await storedRollups(ctx, 'hour');
    expect(Object.keys(hours)).toHaveLength(INSTRUMENTS.length * 2);
    expect(hours).toEqual(expectedRollups(latest, 3_600_000));
  }, 120_000);

  it('deduplicate every minute of a write that replaced the keys of hundreds of minutes', async () => {
    const organizationId = ORGANIZATION + 2;
    const readings = (offset: number): Readings => Array.from({ length: 6 * 360 }, (_, index) => [T0 + index * 10_000, index % 13 === 0 ? null : offset + (index % 50)]);
    const latest = new Map<string, number | null>();
    for (const offset of [0, 1_000]) {
      versionSeq += 1;
      const seq = versionSeq;
      const rows = readings(offset);
      await insertPoints(ctx.deps.clickhouse, rows.map(([ts, value], index) => `${organizationId}\t7\t${ts}\t${value ?? '\\N'}\t${pointVersion(seq, index)}\t0\n`).join(''), 'TabSeparated');
      for (const [ts, value] of rows) latest.set(`7:${ts}`, value);
      await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, [{ range: { organizationId, instrumentIds: [7], startMs: rows[0]![0], endMs: rows.at(-1)![0] }, points: rows.length }]);
    }
    const result = await ctx.deps.clickhouse.query({
      query: `SELECT instrument_id AS i, minute AS at, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
                     argMax(tuple(value_min), version).1 AS lo, argMax(tuple(value_max), version).1 AS hi
                FROM points_rollup_1m WHERE organization_id = ${organizationId} GROUP BY i, at ORDER BY i, at`,
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ i: string; at: string; p: string; n: string; s: number; lo: number | null; hi: number | null }>();
    expect(rows).toHaveLength(360);
    expect(Object.fromEntries(rows.map((row) => [`${row.i}:${row.at}`, { points: Number(row.p), count: Number(row.n), sum: row.s, min: row.lo, max: row.hi }])))
      .toEqual(expectedRollups(latest, 60_000));
  });

  it('recompute writes asked for together in one statement per table, a heavy range in slices, a sparse one at once', async () => {
    const organizationId = ORGANIZATION + 1;
    const feeds = Array.from({ length: 40 }, (_, index) => ({
      range: { organizationId, instrumentIds: [100 + (index % 8)], startMs: T0 + index * 5_000, endMs: T0 + index * 5_000 + 4_000 }, points: 5,
    }));
    const together = countingCommands(ctx.deps.clickhouse);
    await recomputeRollups(together.client, ctx.deps.pg, feeds);
    expect(together.commands()).toBe(2);

    // Eight days of readings of unknown number on ten instruments, counted as one a second (6.9 M):
    // four, four and two instruments, each four in two slices of 96 hours, the two in one: five pairs
    // of statements.
    const heavy = countingCommands(ctx.deps.clickhouse);
    await recomputeRollups(heavy.client, ctx.deps.pg, [{
      range: { organizationId, instrumentIds: Array.from({ length: 10 }, (_, index) => 200 + index), startMs: T0 + 120_000, endMs: T0 + 120_000 + 8 * 86_400_000 - 1 },
    }]);
    expect(heavy.commands()).toBe(10);

    // A write of a thousand points spread over two years is read in one pair, however long its range.
    const sparse = countingCommands(ctx.deps.clickhouse);
    await recomputeRollups(sparse.client, ctx.deps.pg, [{
      range: { organizationId, instrumentIds: Array.from({ length: 10 }, (_, index) => 300 + index), startMs: T0, endMs: T0 + 730 * 86_400_000 }, points: 1_000,
    }]);
    expect(sparse.commands()).toBe(2);
  });
});
