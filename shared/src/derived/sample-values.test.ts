import { describe, expect, it } from 'vitest';
import { sampleValuesOn, type SamplePoint } from './sample-values.ts';

const DAY = 86_400_000;
const points: SamplePoint[] = [{ t: DAY, value: 6 }, { t: 2 * DAY, value: 5 }, { t: 4 * DAY, value: 3 }];
const grid = [0, DAY, 1.5 * DAY, 2 * DAY, 3 * DAY, 3.5 * DAY, 4 * DAY, 5 * DAY];
const values = (array: Float64Array) => Array.from(array, (value) => (Number.isNaN(value) ? null : value));

describe('sample values on a grid', () => {
  it('interpolates linearly between neighbouring samples, never before the first or after the last', () => {
    expect(values(sampleValuesOn(grid, points, 'interpolate'))).toEqual([null, 6, 5.5, 5, 4, 3.5, 3, null]);
  });

  it('holds the last sample until the next one, none before the first', () => {
    expect(values(sampleValuesOn(grid, points, 'last'))).toEqual([null, 6, 6, 5, 5, 5, 3, 3]);
  });

  it('leaves a gap where a flagged result stands: no interval touching it, no value held from it', () => {
    const flagged: SamplePoint[] = [{ t: 0, value: 2 }, { t: DAY, value: Number.NaN }, { t: 2 * DAY, value: 4 }, { t: 3 * DAY, value: 6 }];
    const times = [0, 0.5 * DAY, DAY, 1.5 * DAY, 2 * DAY, 2.5 * DAY];
    expect(values(sampleValuesOn(times, flagged, 'interpolate'))).toEqual([2, null, null, null, 4, 5]);
    expect(values(sampleValuesOn(times, flagged, 'last'))).toEqual([2, 2, null, null, 4, 4]);
  });

  it('has no values without samples, and a sample exactly on a grid time is its own value', () => {
    expect(values(sampleValuesOn([0, DAY], [], 'interpolate'))).toEqual([null, null]);
    expect(values(sampleValuesOn([DAY], [{ t: DAY, value: 7 }], 'interpolate'))).toEqual([7]);
  });
});
