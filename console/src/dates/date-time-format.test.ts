import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  dateTimeFieldText, fileStamp, isDateText, formatDate, formatDateWithZone, parseDateTimeText, setDisplayTimeZone, timeZoneName, toDate, toDateTimeLocal,
  wallTimeToIso,
} from './date-time-format.ts';

describe('date and time format', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes dates one way whatever the input', () => {
    const local = new Date(2026, 10, 19, 19, 51, 7);
    expect(formatDate(local)).toBe('2026-11-19 19:51');
    expect(formatDate(local.getTime())).toBe('2026-11-19 19:51');
    expect(formatDate('2026-11-19T19:51:07')).toBe('2026-11-19 19:51');
    expect(formatDate(local, 'date')).toBe('2026-11-19');
    expect(formatDate(local, 'dateTimeSeconds')).toBe('2026-11-19 19:51:07');
  });

  it('shows a dash for a missing or unreadable time', () => {
    expect(formatDate(null)).toBe('-');
    expect(formatDate(undefined)).toBe('-');
    expect(formatDate('')).toBe('-');
    expect(formatDate('not a date')).toBe('-');
    expect(toDate('not a date')).toBeNull();
  });

  it('names the zone where it matters', () => {
    vi.spyOn(Intl.DateTimeFormat.prototype, 'resolvedOptions').mockReturnValue({ timeZone: 'Europe/Amsterdam' } as Intl.ResolvedDateTimeFormatOptions);
    expect(timeZoneName()).toBe('Europe/Amsterdam');
    expect(formatDateWithZone('2026-01-02T03:04:00Z')).toBe('2026-01-02 04:04 Europe/Amsterdam');
    expect(formatDateWithZone(null)).toBe('-');
  });

  it('fills datetime-local inputs and file names', () => {
    expect(toDateTimeLocal('2026-11-19T19:51:07')).toBe('2026-11-19T19:51:07');
    expect(toDateTimeLocal(null)).toBe('');
    expect(fileStamp(new Date(2026, 10, 19, 19, 51))).toBe('2026-11-19-1951');
  });

  it('reads date-time fields typed in ISO 24 h, with or without seconds, and shows them that way', () => {
    expect(parseDateTimeText('2021-05-02 07:12:51')).toBe('2021-05-02T07:12:51');
    expect(parseDateTimeText(' 2021-05-02 19:12 ')).toBe('2021-05-02T19:12');
    expect(parseDateTimeText('2021-05-02T07:12:51')).toBe('2021-05-02T07:12:51');
    for (const bad of ['05/02/2021, 07:12:51 AM', '2021-05-02 7:12', '2021-13-02 07:12', '2021-02-30 07:12', '2021-05-02 24:00', '2021-05-0', '']) {
      expect(parseDateTimeText(bad), bad).toBeNull();
    }
    expect(dateTimeFieldText('2021-05-02T07:12:51')).toBe('2021-05-02 07:12:51');
    expect(dateTimeFieldText('2021-05-0')).toBe('2021-05-0');
    expect(dateTimeFieldText('')).toBe('');
  });

  it('tells a real day written yyyy-MM-dd from anything else', () => {
    expect(isDateText('2027-06-30')).toBe(true);
    for (const bad of ['06/30/2027', '2027-6-30', '2027-02-30', '2027-06', '']) expect(isDateText(bad), bad).toBe(false);
  });
});

describe('the display zone', () => {
  afterEach(() => setDisplayTimeZone(null));

  it("writes and reads times in the organisation's zone, whatever the browser's", () => {
    setDisplayTimeZone('America/New_York');
    expect(timeZoneName()).toBe('America/New_York');
    // 15:00 UTC is 10:00 in New York in winter, 11:00 in summer.
    expect(formatDate('2026-01-15T15:00:00Z')).toBe('2026-01-15 10:00');
    expect(formatDate('2026-07-15T15:00:00Z', 'dateTimeSeconds')).toBe('2026-07-15 11:00:00');
    expect(formatDateWithZone('2026-01-15T15:00:00Z')).toBe('2026-01-15 10:00 America/New_York');
    expect(toDateTimeLocal('2026-01-15T15:00:00Z')).toBe('2026-01-15T10:00:00');
    expect(wallTimeToIso('2026-01-15T10:00')).toBe('2026-01-15T15:00:00.000Z');
    expect(wallTimeToIso('2026-07-15T11:00:30')).toBe('2026-07-15T15:00:30.000Z');
    expect(fileStamp(new Date('2026-01-15T15:00:00Z'))).toBe('2026-01-15-1000');
  });

  it('round-trips every field value, across the change to summer time too', () => {
    setDisplayTimeZone('Europe/Amsterdam');
    for (const iso of ['2026-03-29T00:59:59.000Z', '2026-03-29T01:00:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000Z']) {
      expect(wallTimeToIso(toDateTimeLocal(iso)), iso).toBe(iso);
    }
    // 02:30 does not exist on the day clocks jump from 02:00 to 03:00: it reads as 03:30 summer time.
    expect(wallTimeToIso('2026-03-29T02:30')).toBe('2026-03-29T01:30:00.000Z');
    // 02:30 happens twice on the day clocks go back: it reads as the first, in summer time.
    expect(wallTimeToIso('2026-10-25T02:30')).toBe('2026-10-25T00:30:00.000Z');
  });

  it('falls back to the browser zone for none or an unknown name', () => {
    setDisplayTimeZone('Mars/Olympus_Mons');
    expect(timeZoneName()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
    expect(wallTimeToIso('not a time')).toBeNull();
  });
});
