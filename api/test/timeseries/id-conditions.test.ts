/**
 * The SQL condition that names instruments (and requests' versions) in time-series statements
 * (`oneOf`, shared/src/points-sql.ts): whichever form it takes (ranges of consecutive ids, a list, an
 * array for a long scattered list), ClickHouse selects exactly the ids named, and a key-ordered table
 * still reads only their part of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOf } from '@bioprocess/shared/points-sql';
import { createTestContext, type TestContext } from '../support/test-context.ts';

const IDS = 5_000;

describe('the condition naming ids', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext();
    await ctx.deps.clickhouse.command({ query: 'DROP TABLE IF EXISTS id_condition_probe' });
    await ctx.deps.clickhouse.command({
      query: 'CREATE TABLE id_condition_probe (instrument_id UInt64, n UInt64) ENGINE = MergeTree ORDER BY instrument_id SETTINGS index_granularity = 64',
    });
    await ctx.deps.clickhouse.command({ query: `INSERT INTO id_condition_probe SELECT number + 1, number FROM system.numbers LIMIT ${IDS}` });
  });
  afterAll(async () => {
    await ctx?.deps.clickhouse.command({ query: 'DROP TABLE IF EXISTS id_condition_probe' });
    await ctx?.close();
  });

  const selected = async (ids: number[]) => {
    const result = await ctx.deps.clickhouse.query({
      query: `SELECT toString(instrument_id) FROM id_condition_probe WHERE ${oneOf('instrument_id', ids)} ORDER BY instrument_id`, format: 'JSONCompact',
    });
    return (await result.json<[string]>()).data.map(([id]) => Number(id));
  };
  const distinctSorted = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);

  it('writes consecutive ids as ranges, a few scattered ones as a list, many as an array, and selects exactly them', async () => {
    const consecutive = Array.from({ length: 2_000 }, (_, index) => 4_000 - index);
    const runs = [...Array.from({ length: 50 }, (_, index) => 100 + index), 7, 900, 901, 902];
    const scattered = Array.from({ length: 150 }, (_, index) => 3 + index * 31);
    const many = Array.from({ length: 1_500 }, (_, index) => 1 + index * 3).concat([2, 2, 4_999]);

    expect(oneOf('instrument_id', consecutive)).toBe('(instrument_id >= 2001 AND instrument_id <= 4000)');
    expect(oneOf('instrument_id', runs)).toBe('(instrument_id = 7 OR (instrument_id >= 100 AND instrument_id <= 149) OR (instrument_id >= 900 AND instrument_id <= 902))');
    expect(oneOf('instrument_id', scattered)).toMatch(/^instrument_id IN \(3,34,65,/);
    expect(oneOf('instrument_id', many)).toMatch(/^instrument_id IN \(SELECT arrayJoin\(CAST\(\[1,2,4,7,/);
    expect(oneOf('instrument_id', [42])).toBe('instrument_id = 42');
    expect(() => oneOf('instrument_id', [])).toThrow('empty id list');

    for (const ids of [consecutive, runs, scattered, many, [42], [IDS + 10]]) {
      expect(await selected(ids)).toEqual(distinctSorted(ids).filter((id) => id <= IDS));
    }
  });

  it('lets ClickHouse read only the granules of the ids named', async () => {
    for (const ids of [[10, 11, 12], Array.from({ length: 300 }, (_, index) => 4_000 + index * 2)]) {
      const result = await ctx.deps.clickhouse.query({
        query: `SELECT count() FROM id_condition_probe WHERE ${oneOf('instrument_id', ids)}`, format: 'JSONCompact',
      });
      const { data, statistics } = await result.json<[string]>() as { data: Array<[string]>; statistics?: { rows_read: number } };
      expect(Number(data[0]![0])).toBe(ids.length);
      // 5,000 rows in granules of 64: the ids' own granules, not the table.
      expect(statistics?.rows_read).toBeLessThan(1_000);
    }
  });
});
