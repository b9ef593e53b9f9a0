import { afterEach, describe, expect, it, vi } from 'vitest';
import { dateTimeFieldText, fileStamp, isDateText, formatDate, formatDateWithZone, parseDateTimeText, timeZoneName, toDate, toDateTimeLocal } from './date-time-format.ts';

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
    expect(formatDateWithZone(new Date(2026, 0, 2, 3, 4))).toBe('2026-01-02 03:04 Europe/Amsterdam');
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
