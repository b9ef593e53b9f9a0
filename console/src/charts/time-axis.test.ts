import { describe, expect, it } from 'vitest';
import {
  commentMinute, formatMinute, fromDateTimeLocalValue, minuteToEpochMs, minutesSince, toDateTimeLocalValue, toEpochMs,
} from './time-axis.ts';

const start = Date.parse('2025-02-26T10:00:00.000Z');

describe('time axis', () => {
  it('converts times to minutes since the start (60000 ms per minute)', () => {
    expect(minutesSince('2025-02-26T10:30:00.000Z', start)).toBe(30);
    expect(minutesSince(start + 90_000, start)).toBe(1.5);
    expect(minuteToEpochMs(30, start)).toBe(Date.parse('2025-02-26T10:30:00.000Z'));
  });

  it('reads ISO strings, Dates, epoch numbers and numeric strings', () => {
    expect(toEpochMs('2025-02-26T10:00:00.000Z')).toBe(start);
    expect(toEpochMs(new Date(start))).toBe(start);
    expect(toEpochMs(String(start))).toBe(start);
    expect(Number.isNaN(toEpochMs('not a date'))).toBe(true);
    expect(Number.isNaN(toEpochMs(null))).toBe(true);
  });

  it('treats comment timestamps above 1e12 as epoch milliseconds, relative to the start when there is one', () => {
    expect(commentMinute(start + 45 * 60_000, start)).toBe(45);
    expect(commentMinute(1_740_000_000_000, null)).toBe(1_740_000_000_000 / 60_000);
    // 1e12 itself and smaller numbers are minutes already.
    expect(commentMinute(1e12, start)).toBe(1e12);
    expect(commentMinute(12.5, start)).toBe(12.5);
  });

  it('places ISO comment timestamps relative to the start', () => {
    expect(commentMinute('2025-02-26T12:00:00.000Z', start)).toBe(120);
    expect(commentMinute('2025-02-26T09:00:00.000Z', start)).toBe(-60);
    expect(Number.isNaN(commentMinute('garbage', start))).toBe(true);
  });

  it('formats minutes', () => {
    expect(formatMinute(12)).toBe('12');
    expect(formatMinute(12.345)).toBe('12.3');
    expect(formatMinute(Number.NaN)).toBe('-');
  });

  it('round-trips datetime-local values in local time', () => {
    const ms = new Date(2025, 1, 26, 11, 7).getTime();
    expect(toDateTimeLocalValue(ms)).toBe('2025-02-26T11:07');
    expect(fromDateTimeLocalValue('2025-02-26T11:07')).toBe(ms);
    expect(Number.isNaN(fromDateTimeLocalValue(''))).toBe(true);
    expect(Number.isNaN(fromDateTimeLocalValue('26/02/2025'))).toBe(true);
  });
});
