import { describe, expect, it } from 'vitest';
import { patchReadings, patchSeries, removeRange, removeReadings } from './live-series.ts';
import { parseLiveBuffer } from './live-client.ts';

const START = Date.UTC(2024, 0, 1);
const at = (minute: number) => START + minute * 60_000;

describe('patchSeries', () => {
  const drawn: Array<[number, number]> = [[0, 1], [10, 2], [20, 3]];

  it('appends readings after the last drawn point, keeping the downsampled history as it is', () => {
    const patched = patchSeries(drawn, [{ ts: at(21), value: 4 }, { ts: at(22), value: 5 }], START);
    expect(patched).toEqual([[0, 1], [10, 2], [20, 3], [21, 4], [22, 5]]);
    expect(drawn).toHaveLength(3);
  });

  it('replaces a point at the same time (a correction) and inserts a late one in order', () => {
    expect(patchSeries(drawn, [{ ts: at(10), value: 20 }, { ts: at(15), value: 9 }], START)).toEqual([[0, 1], [10, 20], [15, 9], [20, 3]]);
  });

  it('removes a point stored empty, ignores readings before the start, and returns the same array when nothing changed', () => {
    expect(patchSeries(drawn, [{ ts: at(10), value: null }], START)).toEqual([[0, 1], [20, 3]]);
    expect(patchSeries(drawn, [{ ts: START - 1, value: 7 }, { ts: at(20), value: 3 }], START)).toBe(drawn);
  });

  it('removes a deleted range, edges included', () => {
    expect(removeRange(drawn, at(10), at(20), START)).toEqual([[0, 1]]);
    expect(removeRange(drawn, at(30), at(40), START)).toBe(drawn);
  });
});

describe('patchReadings', () => {
  const readings = [
    { ts: new Date(at(0)).toISOString(), instrumentId: 1, value: 1 },
    { ts: new Date(at(1)).toISOString(), instrumentId: 2, value: 5 },
  ];

  it('merges live readings by instrument and time, in time order', () => {
    const patched = patchReadings(readings, [{ instrument_id: 1, ts: at(0), value: 10 }, { instrument_id: 1, ts: at(2), value: 3 }, { instrument_id: 2, ts: at(1), value: null }]);
    expect(patched.map((reading) => [reading.instrumentId, reading.value])).toEqual([[1, 10], [1, 3]]);
  });

  it('removes the deleted instruments\' readings in the range only', () => {
    expect(removeReadings(readings, [2], at(0), at(5)).map((reading) => reading.instrumentId)).toEqual([1]);
  });
});

describe('parseLiveBuffer', () => {
  it('reads ids, events and data, keeps the unfinished rest, and reports id-only blocks', () => {
    const { blocks, rest } = parseLiveBuffer('id: 5-0\nevent: points\ndata: {"a":1}\n\n: keep-alive\n\nid: 6-0\nevent: position\ndata: {}\n\nid: 7');
    expect(blocks).toEqual([{ id: '5-0', event: 'points', data: '{"a":1}' }, { id: '6-0', event: 'position', data: '{}' }]);
    expect(rest).toBe('id: 7');
  });
});
