import { describe, expect, it } from 'vitest';
import { SERIES_PALETTE, paletteColor, pointStyleAt, opacityAt, POINT_STYLES } from './chart-constants.ts';
import { groupReadingsByInstrument, mergeWindow, parameterLabel, rangeEndMs, readingsToPoints } from './series-model.ts';
import { nearestCommentWithin } from './comment-markers.ts';

const start = Date.parse('2025-01-01T00:00:00Z');
const at = (minutes: number) => new Date(start + minutes * 60_000).toISOString();

describe('series building', () => {
  it('keeps non-null readings inside the range, as sorted minutes since the start', () => {
    const readings = [
      { ts: at(10), instrumentId: 1, value: 2 },
      { ts: at(-5), instrumentId: 1, value: 1 },
      { ts: at(5), instrumentId: 1, value: null },
      { ts: at(2.5), instrumentId: 1, value: 3 },
      { ts: at(200), instrumentId: 1, value: 9 },
    ];
    expect(readingsToPoints(readings, start, start + 100 * 60_000)).toEqual([[2.5, 3], [10, 2]]);
    expect(readingsToPoints(readings, start, start + 100 * 60_000, { roundMinutes: true })).toEqual([[3, 3], [10, 2]]);
  });

  it('uses now as the end of an open range', () => {
    expect(rangeEndMs(null, 1234)).toBe(1234);
    expect(rangeEndMs(at(5), 1234)).toBe(start + 5 * 60_000);
  });

  it('labels parameters as type [unit]', () => {
    expect(parameterLabel('temperature', 'celsius')).toBe('temperature [celsius]');
    expect(parameterLabel('optical_density', null)).toBe('optical_density');
  });

  it('groups readings by instrument', () => {
    const grouped = groupReadingsByInstrument([
      { ts: at(1), instrumentId: 2, value: 1 }, { ts: at(1), instrumentId: 3, value: 1 }, { ts: at(2), instrumentId: 2, value: 2 },
    ]);
    expect([...grouped.keys()]).toEqual([2, 3]);
    expect(grouped.get(2)!.map((r) => r.value)).toEqual([1, 2]);
  });

  it('merges a finer zoom window into the overview', () => {
    const overview: [number, number][] = [[0, 1], [10, 2], [20, 3], [30, 4]];
    const fine: [number, number][] = [[10, 2], [12, 2.2], [15, 2.5], [20, 3]];
    expect(mergeWindow(overview, fine, 10, 20)).toEqual([[0, 1], [10, 2], [12, 2.2], [15, 2.5], [20, 3], [30, 4]]);
  });

  it('cycles the palette, the point styles and the opacity steps', () => {
    expect(SERIES_PALETTE.length).toBeGreaterThanOrEqual(20);
    expect(paletteColor(SERIES_PALETTE.length)).toBe(paletteColor(0));
    expect(pointStyleAt(POINT_STYLES.length)).toBe('circle');
    expect(pointStyleAt(4)).toBe('cross');
    expect([0, 1, 2, 3, 4, 5].map(opacityAt)).toEqual([1, 0.8, 0.6, 0.4, 0.2, 1]);
  });
});

describe('comment markers', () => {
  const comments = [{ id: 1, minute: 10 }, { id: 2, minute: 20 }];
  const toPixel = (minute: number) => minute * 10; // 10 px per minute

  it('selects the nearest comment within 20 px', () => {
    expect(nearestCommentWithin(comments, 105, toPixel)?.id).toBe(1);
    expect(nearestCommentWithin(comments, 185, toPixel)?.id).toBe(2);
    expect(nearestCommentWithin(comments, 120, toPixel)?.id).toBe(1);
  });

  it('selects none farther away', () => {
    expect(nearestCommentWithin(comments, 150, toPixel)).toBeNull();
    expect(nearestCommentWithin(comments, 121, toPixel, 20)).toBeNull();
  });
});
