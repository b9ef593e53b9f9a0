import { describe, expect, it } from 'vitest';
import { coverParts, splitRange, windowsCondition } from './points-read.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;

describe('splitRange', () => {
  const covered = (spans: ReadonlyArray<readonly [number, number]>) => spans.reduce((total, [from, to]) => total + to - from + 1, 0);

  it('cuts a range into whole hours, whole minutes and partial minutes that cover it once', () => {
    const start = 5 * HOUR - 2 * MINUTE - 1_500;
    const end = 8 * HOUR + 3 * MINUTE + 700;
    const split = splitRange(start, end, 'hour');
    expect(split.hours).toEqual([[5 * HOUR, 8 * HOUR - 1]]);
    expect(split.minutes).toEqual([[5 * HOUR - 2 * MINUTE, 5 * HOUR - 1], [8 * HOUR, 8 * HOUR + 3 * MINUTE - 1]]);
    expect(split.edges).toEqual([[start, 5 * HOUR - 2 * MINUTE - 1], [8 * HOUR + 3 * MINUTE, end]]);
    expect(covered([...split.hours, ...split.minutes, ...split.edges])).toBe(end - start + 1);
  });

  it('reads minutes only when asked for minutes, and points only inside one minute', () => {
    expect(splitRange(0, 2 * HOUR - 1, 'minute')).toEqual({ hours: [], minutes: [[0, 2 * HOUR - 1]], edges: [] });
    expect(splitRange(-30_000, 10_000, 'hour')).toEqual({ hours: [], minutes: [], edges: [[-30_000, 10_000]] });
    expect(splitRange(-90_000, 10_000, 'hour')).toEqual({ hours: [], minutes: [[-60_000, -1]], edges: [[-90_000, -60_001], [0, 10_000]] });
    expect(splitRange(1_000, 59_000, 'hour')).toEqual({ hours: [], minutes: [], edges: [[1_000, 59_000]] });
    expect(splitRange(-HOUR, -1, 'hour')).toEqual({ hours: [[-HOUR, -1]], minutes: [], edges: [] });
  });
});

describe('windowsCondition', () => {
  it('names the organisation, lists instruments sharing a span together and spans of the same instruments together', () => {
    expect(windowsCondition(7, 'ts', [{ instrumentIds: [3], from: 0, to: 9 }, { instrumentIds: [1], from: 0, to: 9 }]))
      .toBe('organization_id = 7 AND (((instrument_id = 1 OR instrument_id = 3) AND ts >= 0 AND ts <= 9))');
    expect(windowsCondition(7, 'minute', [{ instrumentIds: [4, 5], from: 0, to: 9 }, { instrumentIds: [5, 4], from: 20, to: 29 }]))
      .toBe('organization_id = 7 AND (((instrument_id >= 4 AND instrument_id <= 5) AND ((minute >= 0 AND minute <= 9) OR (minute >= 20 AND minute <= 29))))');
  });

  it('refuses what is not a safe integer and an empty read', () => {
    expect(() => windowsCondition(1, 'ts', [{ instrumentIds: [1], from: 0.5, to: 9 }])).toThrow();
    expect(() => windowsCondition(Number.NaN, 'ts', [{ instrumentIds: [1], from: 0, to: 9 }])).toThrow();
    expect(() => windowsCondition(1, 'ts', [])).toThrow();
  });
});

describe('coverParts', () => {
  it('reads each level once with its own deduplication, and FINAL minutes only when asked', () => {
    const windows = [{ instrumentIds: [1], from: HOUR - 1_000, to: 3 * HOUR + MINUTE + 5 }];
    const parts = coverParts(2, windows, { coarsest: 'hour', figures: ['p'] });
    expect(parts).toHaveLength(3);
    expect(parts[0]).toMatch(/FROM points_rollup_1h WHERE .*GROUP BY instrument_id, hour/s);
    expect(parts[1]).toMatch(/argMax\(points, version\) AS p\s+FROM points_rollup_1m WHERE .*GROUP BY instrument_id, minute/s);
    expect(parts[2]).toMatch(/argMax\(tuple\(value\), version\)\.1 AS v, argMax\(is_deleted, version\) AS d\s+FROM points WHERE/s);
    expect(parts[2]).toMatch(/WHERE d = 0$/);
    const analysis = coverParts(2, windows, { coarsest: 'minute', figures: ['n', 's'], minutes: 'final' });
    expect(analysis).toHaveLength(2);
    expect(analysis[0]).toMatch(/value_count AS n, value_sum AS s\s+FROM points_rollup_1m FINAL WHERE/);
  });
});
