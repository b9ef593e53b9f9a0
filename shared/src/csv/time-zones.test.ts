import { describe, expect, it } from 'vitest';
import { formatUtcOffset, parseTimeZone, WallClockConverter } from './time-zones.ts';
import { createTimestampParser, hasOwnUtcOffset } from './timestamps.ts';

const wall = (text: string) => Date.parse(`${text}Z`);

describe('time zone names', () => {
  it('reads UTC, fixed offsets and IANA names; refuses anything else', () => {
    expect(parseTimeZone('UTC')).toEqual({ kind: 'fixed', offsetMinutes: 0, name: 'UTC' });
    expect(parseTimeZone('+02:00')).toEqual({ kind: 'fixed', offsetMinutes: 120, name: '+02:00' });
    expect(parseTimeZone('UTC-0530')).toEqual({ kind: 'fixed', offsetMinutes: -330, name: '-05:30' });
    expect(parseTimeZone('+2')).toEqual({ kind: 'fixed', offsetMinutes: 120, name: '+02:00' });
    expect(parseTimeZone('Europe/Amsterdam')).toEqual({ kind: 'iana', name: 'Europe/Amsterdam' });
    expect(parseTimeZone('europe/amsterdam')).toEqual({ kind: 'iana', name: 'Europe/Amsterdam' });
    for (const bad of ['Mars/Olympus', '', '+25:00', '+02:75', 'Europe/Amsterdam; DROP', 'local']) expect(parseTimeZone(bad), bad).toBeNull();
    expect(formatUtcOffset(-90)).toBe('-01:30');
  });
});

describe('wall-clock times to instants', () => {
  const amsterdam = new WallClockConverter(parseTimeZone('Europe/Amsterdam')!);

  it('applies summer and winter time', () => {
    expect(amsterdam.toInstant(wall('2020-07-14T09:55:33'))).toBe(Date.UTC(2020, 6, 14, 7, 55, 33));
    expect(amsterdam.toInstant(wall('2020-12-14T09:55:33'))).toBe(Date.UTC(2020, 11, 14, 8, 55, 33));
  });

  it('reads a time skipped when clocks jump forward with the offset before the jump', () => {
    // 2021-03-28: 02:00 CET becomes 03:00 CEST; 02:30 does not exist and reads as 03:30 CEST.
    expect(amsterdam.toInstant(wall('2021-03-28T01:59:00'))).toBe(Date.UTC(2021, 2, 28, 0, 59));
    expect(amsterdam.toInstant(wall('2021-03-28T02:30:00'))).toBe(Date.UTC(2021, 2, 28, 1, 30));
    expect(amsterdam.toInstant(wall('2021-03-28T03:00:00'))).toBe(Date.UTC(2021, 2, 28, 1, 0));
  });

  it('keeps a log running through the repeated hour in order when clocks go back', () => {
    // 2021-10-31: 03:00 CEST becomes 02:00 CET; 02:00-02:59 happens twice.
    const rows = ['01:30', '02:00', '02:30', '02:00', '02:30', '03:00'].map((time) => wall(`2021-10-31T${time}:00`));
    let previous = Number.NEGATIVE_INFINITY;
    const instants = rows.map((row) => (previous = amsterdam.toInstant(row, previous)));
    expect(instants.map((instant) => new Date(instant).toISOString().slice(11, 16))).toEqual(['23:30', '00:00', '00:30', '01:00', '01:30', '02:00']);
    // Alone, a repeated time is the earlier instant.
    expect(amsterdam.toInstant(wall('2021-10-31T02:30:00'))).toBe(Date.UTC(2021, 9, 31, 0, 30));
  });

  it('handles zones with half-hour offsets and the southern hemisphere', () => {
    const adelaide = new WallClockConverter(parseTimeZone('Australia/Adelaide')!);
    expect(adelaide.toInstant(wall('2021-01-10T12:00:00'))).toBe(Date.UTC(2021, 0, 10, 1, 30)); // +10:30 in summer
    expect(adelaide.toInstant(wall('2021-07-10T12:00:00'))).toBe(Date.UTC(2021, 6, 10, 2, 30)); // +09:30 in winter
  });
});

describe('zoned timestamp parsing', () => {
  const iso = { format: 'iso-space', order: null, dayFirst: false } as const;

  it('reads zone-less values in the zone and lets a value\'s own offset win', () => {
    const parse = createTimestampParser(iso, { timeZone: parseTimeZone('America/New_York')! });
    expect(parse('2024-01-15 08:00:00')).toBe(Date.UTC(2024, 0, 15, 13));
    expect(parse('2024-07-15 08:00:00')).toBe(Date.UTC(2024, 6, 15, 12));
    expect(parse('2024-07-15T08:00:00Z')).toBe(Date.UTC(2024, 6, 15, 8));
    expect(parse('2024-07-15 08:00:00+02:00')).toBe(Date.UTC(2024, 6, 15, 6));
    expect(parse('2024-02-30 08:00:00')).toBeNull();
    expect(parse('soon')).toBeNull();
  });

  it('reads day-month forms and spreadsheet serials in the zone too', () => {
    const dmy = createTimestampParser({ format: 'dot', order: 'dmy', dayFirst: true }, { timeZone: parseTimeZone('Europe/Berlin')! });
    expect(dmy('14.07.2020 09:55')).toBe(Date.UTC(2020, 6, 14, 7, 55));
    const serial = createTimestampParser({ format: 'spreadsheet-serial', order: null, dayFirst: false }, { timeZone: parseTimeZone('+02:00')! });
    expect(serial('44026.5')).toBe(Date.UTC(2020, 6, 14, 10));
  });

  it('tells values with their own offset apart', () => {
    expect(hasOwnUtcOffset('2021-09-30T15:24:29.000Z')).toBe(true);
    expect(hasOwnUtcOffset('2021-09-30 15:24:29+0200')).toBe(true);
    expect(hasOwnUtcOffset('2020-07-14 09:55:33')).toBe(false);
    expect(hasOwnUtcOffset('14.07.2020 09:55')).toBe(false);
  });
});
