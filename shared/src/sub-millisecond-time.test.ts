import { describe, expect, it } from 'vitest';
import { fractionMicros, isoWithMicros, splitEpochMs } from './sub-millisecond-time.ts';
import { parseTimestampInputMicros } from './timeseries.ts';

describe('fractionMicros', () => {
  it('reads the 4th to 6th fraction digits after the seconds, in any date form, cutting the rest', () => {
    expect(fractionMicros('2021-05-02T07:12:51.123456Z')).toBe(456);
    expect(fractionMicros('2021-05-02 07:12:51.1234')).toBe(400);
    expect(fractionMicros('2021-05-02T07:12:51.12345678+02:00')).toBe(456);
    expect(fractionMicros('02/05/2021 07:12:51,000999')).toBe(999);
    expect(fractionMicros('5/2/21 7:12:51.0001 PM')).toBe(100);
  });

  it('answers 0 without microseconds or without a fraction of seconds', () => {
    for (const text of ['2021-05-02T07:12:51.123Z', '2021-05-02T07:12:51Z', '2021-05-02', '45000.123456', '1620000000123', '12.345678', '']) {
      expect(fractionMicros(text), text).toBe(0);
    }
  });
});

describe('splitEpochMs and parseTimestampInputMicros', () => {
  it('keep the millisecond as before and the fraction of a number as microseconds', () => {
    expect(splitEpochMs(1_619_939_571_123.456)).toEqual({ ms: 1_619_939_571_123, micros: 456 });
    expect(splitEpochMs(1_619_939_571_123)).toEqual({ ms: 1_619_939_571_123, micros: 0 });
    expect(splitEpochMs(-5.5)).toEqual({ ms: -5, micros: 0 });
    expect(parseTimestampInputMicros('2021-05-02T07:12:51.123456Z')).toEqual({ ms: Date.UTC(2021, 4, 2, 7, 12, 51, 123), micros: 456 });
    expect(parseTimestampInputMicros('1620000000123')).toEqual({ ms: 1_620_000_000_123, micros: 0 });
    expect(parseTimestampInputMicros('not a time').ms).toBeNaN();
  });
});

describe('isoWithMicros', () => {
  it('writes six fraction digits only when there are microseconds', () => {
    expect(isoWithMicros(Date.UTC(2021, 4, 2, 7, 12, 51, 123), 0)).toBe('2021-05-02T07:12:51.123Z');
    expect(isoWithMicros(Date.UTC(2021, 4, 2, 7, 12, 51, 123), 45)).toBe('2021-05-02T07:12:51.123045Z');
    expect(isoWithMicros(-1, 1)).toBe('1969-12-31T23:59:59.999001Z');
  });
});
