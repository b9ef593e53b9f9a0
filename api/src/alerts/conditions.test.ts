import { describe, expect, it } from 'vitest';
import { advance, judgeRates, type SeriesState } from './conditions.ts';
import { dueAfterQuietHours } from './notifications.ts';

const MINUTE = 60_000;
const fresh: SeriesState = { state: 'ok', sinceMs: null, lastPointMs: null };
const judged = (values: Array<[minute: number, meets: boolean | null]>) => values.map(([minute, meets]) => ({ ts: minute * MINUTE, value: minute, meets }));

describe('a series state as readings arrive', () => {
  it('fires once the condition held for the hold time, in the readings\' time, and resolves at the first reading that does not meet it', () => {
    const { next, transitions } = advance(fresh, judged([[1, true], [2, true], [3, true], [4, false]]), 2 * MINUTE);
    expect(transitions).toEqual([
      { kind: 'fire', startedMs: 1 * MINUTE, firedMs: 3 * MINUTE, value: 3 },
      { kind: 'resolve', resolvedMs: 4 * MINUTE, value: 4 },
    ]);
    expect(next).toEqual({ state: 'ok', sinceMs: null, lastPointMs: 4 * MINUTE });
  });

  it('a condition shorter than the hold never fires; readings in any order are applied in time order', () => {
    expect(advance(fresh, judged([[2, false], [1, true]]), 2 * MINUTE).transitions).toEqual([]);
    const { next } = advance(fresh, judged([[3, true], [1, false], [2, true]]), 5 * MINUTE);
    expect(next).toEqual({ state: 'pending', sinceMs: 2 * MINUTE, lastPointMs: 3 * MINUTE });
  });

  it('skips readings not newer than the last applied (a late reading, or the same readings again) and those it cannot judge', () => {
    const once = advance(fresh, judged([[1, true]]), 0);
    expect(once.transitions).toHaveLength(1);
    expect(advance(once.next, judged([[1, true], [0, false]]), 0).transitions).toEqual([]);
    expect(advance(once.next, judged([[2, null]]), 0).next.state).toBe('firing');
  });
});

describe('rates of change', () => {
  const condition = { kind: 'rate_of_change', direction: 'rising', per_minute: 1, window_seconds: 120, hold_seconds: 0 } as const;
  it('compares each reading with the first one inside its window', () => {
    const readings = [[0, 10], [1, 10.5], [2, 13], [3, 13.5], [10, 14]].map(([minute, value]) => ({ ts: minute! * MINUTE, value: value! }));
    expect(judgeRates(condition, readings).map((reading) => [reading.value, reading.meets])).toEqual([
      [10, null], [0.5, false], [1.5, true], [1.5, true], [14, null],
    ]);
    expect(judgeRates({ ...condition, direction: 'falling' }, readings)[2]!.meets).toBe(false);
    expect(judgeRates({ ...condition, direction: 'either' }, readings)[2]!.meets).toBe(true);
  });
});

describe('quiet hours', () => {
  const at = (iso: string) => Date.parse(iso);
  it('holds a message due inside them until they end, in the user\'s time zone, over midnight too', () => {
    const nights = { startMinute: 22 * 60, endMinute: 7 * 60, timeZone: 'Europe/Berlin' };
    // 23:30 in Berlin (CET, UTC+1) is 22:30 UTC: held until 07:00 Berlin, 06:00 UTC.
    expect(dueAfterQuietHours(nights, at('2026-01-10T22:30:00Z'))).toBe(at('2026-01-11T06:00:00Z'));
    expect(dueAfterQuietHours(nights, at('2026-01-11T05:59:00Z'))).toBe(at('2026-01-11T06:00:00Z'));
    expect(dueAfterQuietHours(nights, at('2026-01-11T06:00:00Z'))).toBe(at('2026-01-11T06:00:00Z'));
    expect(dueAfterQuietHours(nights, at('2026-01-11T12:00:00Z'))).toBe(at('2026-01-11T12:00:00Z'));
    expect(dueAfterQuietHours(null, at('2026-01-11T12:00:00Z'))).toBe(at('2026-01-11T12:00:00Z'));
  });
});
