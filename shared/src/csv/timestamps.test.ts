import { describe, expect, it } from 'vitest';
import {
  AMBIGUOUS_ORDER_CONFIDENCE_FACTOR,
  createTimestampParser,
  detectTimestampFormat,
  elapsedToEpochMs,
  isLowConfidence,
  isSpreadsheetSerialDate,
  localePrefersDayFirst,
  parseTimestamp,
  spreadsheetSerialToEpochMs,
  suggestElapsedTime,
} from './timestamps.ts';

const utc = Date.UTC;

describe('spreadsheet serial dates', () => {
  it('follows the Excel 1900 system including its leap-year bug', () => {
    expect(spreadsheetSerialToEpochMs(1)).toBe(utc(1900, 0, 1));
    expect(spreadsheetSerialToEpochMs(59)).toBe(utc(1900, 1, 28));
    expect(spreadsheetSerialToEpochMs(60)).toBeNull(); // the non-existent 1900-02-29
    expect(spreadsheetSerialToEpochMs(61)).toBe(utc(1900, 2, 1));
    expect(spreadsheetSerialToEpochMs(25569)).toBe(0);
    expect(spreadsheetSerialToEpochMs(44197.5)).toBe(utc(2021, 0, 1, 12));
    expect(spreadsheetSerialToEpochMs(44197.5, { timezoneOffsetMinutes: 60 })).toBe(utc(2021, 0, 1, 11));
  });

  it('is valid only between 1900 and 2100', () => {
    expect(spreadsheetSerialToEpochMs(73415)).toBe(utc(2100, 11, 31));
    expect(spreadsheetSerialToEpochMs(73416)).toBeNull();
    expect(spreadsheetSerialToEpochMs(0.5)).toBeNull();
    expect(spreadsheetSerialToEpochMs(-1)).toBeNull();
    expect(isSpreadsheetSerialDate(45000)).toBe(true);
    expect(isSpreadsheetSerialDate(929259.56)).toBe(false);
  });

  it('is detected for numeric columns and parsed from text', () => {
    const detection = detectTimestampFormat(['44197.5', '44197.75', '44198']);
    expect(detection).toMatchObject({ format: 'spreadsheet-serial', confidence: 1, elapsed: null });
    expect(parseTimestamp('44197.5', detection)).toBe(utc(2021, 0, 1, 12));
    expect(parseTimestamp('abc', detection)).toBeNull();
    expect(parseTimestamp('100000', detection)).toBeNull();
  });

  it('reads serials with a decimal comma when the delimiter allows it', () => {
    const detection = detectTimestampFormat(['44197,5', '44197,75'], { decimalComma: true });
    expect(detection).toMatchObject({ format: 'spreadsheet-serial', confidence: 1 });
    expect(parseTimestamp('44197,5', detection, { decimalComma: true })).toBe(utc(2021, 0, 1, 12));
    expect(suggestElapsedTime(['0,5', '1,0', '1,5'], { decimalComma: true })).toEqual({ unit: 'minutes' });
  });
});

describe('ISO timestamps', () => {
  it('detects and parses ISO with T, Z, offsets and fractions up to microseconds', () => {
    const detection = detectTimestampFormat(['2025-02-26T10:27:40.854742Z', '2025-02-26T10:27:45.841730Z']);
    expect(detection).toMatchObject({ format: 'iso', confidence: 1, dayFirst: false });
    const parse = createTimestampParser(detection);
    expect(parse('2025-02-26T10:27:40.854742Z')).toBe(utc(2025, 1, 26, 10, 27, 40, 854));
    expect(parse('2021-09-30T15:24:29.000Z')).toBe(utc(2021, 8, 30, 15, 24, 29));
    expect(parse('2024-01-01T10:00:00+02:00')).toBe(utc(2024, 0, 1, 8));
    expect(parse('2024-01-01T10:00:00-0530')).toBe(utc(2024, 0, 1, 15, 30));
    expect(parse('2024-01-01T10:00')).toBe(utc(2024, 0, 1, 10));
    expect(parse('2024-01-01')).toBe(utc(2024, 0, 1));
    expect(parse('2024-02-30T10:00:00Z')).toBeNull();
    expect(parse('2024-01-01T25:00:00Z')).toBeNull();
    expect(parse('not a date')).toBeNull();
  });

  it('agrees with Date.parse on generated ISO values with zones, fractions and spaces', () => {
    const parse = createTimestampParser({ format: 'iso', order: null, dayFirst: false });
    let state = 7;
    const next = () => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return state / 0x7fffffff;
    };
    for (let index = 0; index < 2000; index += 1) {
      const iso = new Date(Math.floor(next() * 4e12) - 1e12).toISOString(); // 1938..2096
      expect(parse(iso)).toBe(Date.parse(iso));
      const withOffset = `${iso.slice(0, 19)}+05:30`;
      expect(parse(withOffset)).toBe(Date.parse(withOffset));
      const compactOffset = `${iso.slice(0, 19)}-0800`;
      expect(parse(compactOffset)).toBe(Date.parse(`${iso.slice(0, 19)}-08:00`));
      expect(parse(`${iso.slice(0, 10)} ${iso.slice(11, 23)}`)).toBe(Date.parse(iso));
      expect(parse(` ${iso} `)).toBe(Date.parse(iso));
    }
    expect(parse('2024-01-01T10:00:00+02')).toBe(utc(2024, 0, 1, 8));
    expect(parse('2024-01-01T10:00:00.')).toBeNull();
    expect(parse('2024-13-01T10:00:00Z')).toBeNull();
    expect(parse('2024-01-01T10:00:60Z')).toBeNull();
    expect(parse('2024-01-01T10:00:00Q')).toBeNull();
  });

  it('detects ISO with a space and the L-prefixed form', () => {
    expect(detectTimestampFormat(['2020-07-14 09:55:33', '2020-07-14 09:56:03']).format).toBe('iso-space');
    const prefixed = detectTimestampFormat(['L2024-03-01T08:00:00', 'L2024-03-01 08:00:30']);
    expect(prefixed.format).toBe('iso-l');
    expect(parseTimestamp('L2024-03-01 08:00:30', prefixed)).toBe(utc(2024, 2, 1, 8, 0, 30));
  });

  it('counts mixed ISO forms together and reports the most frequent', () => {
    const detection = detectTimestampFormat(['2024-01-01 10:00:00', '2024-01-01T10:00:30Z', '2024-01-01 10:01:00']);
    expect(detection).toMatchObject({ format: 'iso-space', confidence: 1 });
    expect(parseTimestamp('2024-01-01T10:00:30Z', detection)).toBe(utc(2024, 0, 1, 10, 0, 30));
  });

  it('reads zone-less values as UTC unless an offset is given', () => {
    const detection = detectTimestampFormat(['2020-07-14 09:55:33']);
    expect(parseTimestamp('2020-07-14 09:55:33', detection)).toBe(utc(2020, 6, 14, 9, 55, 33));
    expect(parseTimestamp('2020-07-14 09:55:33', detection, { timezoneOffsetMinutes: 120 })).toBe(
      utc(2020, 6, 14, 7, 55, 33),
    );
    // An explicit zone wins over the option.
    expect(parseTimestamp('2020-07-14T09:55:33Z', detection, { timezoneOffsetMinutes: 120 })).toBe(
      utc(2020, 6, 14, 9, 55, 33),
    );
  });
});

describe('day-month forms', () => {
  it('infers day first from a first part above 12', () => {
    const detection = detectTimestampFormat(['13/01/2024 10:00', '14/01/2024 10:00:30']);
    expect(detection).toMatchObject({ format: 'slash', dayFirst: true, order: 'dmy', confidence: 1 });
    expect(parseTimestamp('14/01/2024 10:00:30', detection)).toBe(utc(2024, 0, 14, 10, 0, 30));
  });

  it('infers month first from a second part above 12', () => {
    const detection = detectTimestampFormat(['01/13/2024 01:30 PM', '01/14/2024 12:00 AM']);
    expect(detection).toMatchObject({ format: 'slash', dayFirst: false, order: 'mdy', confidence: 1 });
    expect(parseTimestamp('01/13/2024 01:30 PM', detection)).toBe(utc(2024, 0, 13, 13, 30));
    expect(parseTimestamp('01/14/2024 12:00 AM', detection)).toBe(utc(2024, 0, 14, 0));
  });

  it('lets the locale decide an ambiguous order, with reduced confidence', () => {
    const samples = ['01.02.2024 10:00', '03.04.2024 11:00'];
    const european = detectTimestampFormat(samples, { preferDayFirst: true });
    expect(european).toMatchObject({ format: 'dot', dayFirst: true, confidence: AMBIGUOUS_ORDER_CONFIDENCE_FACTOR });
    expect(isLowConfidence(european)).toBe(true);
    expect(parseTimestamp('01.02.2024 10:00', european)).toBe(utc(2024, 1, 1, 10));
    const american = detectTimestampFormat(samples);
    expect(american).toMatchObject({ format: 'dot', dayFirst: false, order: 'mdy' });
    expect(parseTimestamp('01.02.2024 10:00', american)).toBe(utc(2024, 0, 2, 10));
  });

  it('handles dash forms, two-digit years, year-first slashes and invalid days', () => {
    const dash = detectTimestampFormat(['31-12-2023 23:59:59.5', '30-12-23']);
    expect(dash).toMatchObject({ format: 'dash', dayFirst: true });
    expect(parseTimestamp('31-12-2023 23:59:59.5', dash)).toBe(utc(2023, 11, 31, 23, 59, 59, 500));
    expect(parseTimestamp('30-12-23', dash)).toBe(utc(2023, 11, 30));
    expect(parseTimestamp('31-02-2024', dash)).toBeNull();
    const yearFirst = detectTimestampFormat(['2024/01/31 10:00', '2024/02/01 10:00']);
    expect(yearFirst).toMatchObject({ format: 'slash', order: 'ymd', confidence: 1 });
    expect(parseTimestamp('2024/02/01 10:00', yearFirst)).toBe(utc(2024, 1, 1, 10));
  });
});

describe('month names', () => {
  it('reads a month written as a word, day first or month first, with a 12-hour or 24-hour time', () => {
    // Beckman Vi-CELL XR writes `RunDate : 29 Sep 2023  5:21:32 AM`.
    const detection = detectTimestampFormat(['29 Sep 2023  5:21:32 AM', '29 Sep 2023  5:23:31 AM', '1 Oct 2023 12:00:00 PM']);
    expect(detection).toMatchObject({ format: 'month-name', confidence: 1 });
    const parse = createTimestampParser(detection);
    expect(parse('29 Sep 2023  5:21:32 AM')).toBe(Date.parse('2023-09-29T05:21:32Z'));
    expect(parse('Sep 29, 2023 5:21:32 PM')).toBe(Date.parse('2023-09-29T17:21:32Z'));
    expect(parse('29-September-2023 17:21')).toBe(Date.parse('2023-09-29T17:21:00Z'));
    expect(parse('1 May 2024')).toBe(Date.parse('2024-05-01T00:00:00Z'));
    expect(parse('31 Feb 2024')).toBeNull();
    expect(parse('29 Sep 2023 13:00 PM')).toBeNull();
    expect(detectTimestampFormat(['Maybe 3 2024']).format).toBe('unknown');
  });
});

describe('detection confidence', () => {
  it('is the share of samples that parse, over at most 20 non-empty samples', () => {
    const values = [...Array.from({ length: 15 }, (_, i) => `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`)];
    values.push('garbage', 'x', 'y', 'z', 'w', '', '2024-01-01T00:01:00Z');
    const detection = detectTimestampFormat(values);
    expect(detection.format).toBe('iso');
    expect(detection.confidence).toBe(0.75);
    expect(isLowConfidence(detection)).toBe(false);
    expect(isLowConfidence({ confidence: 0.69 })).toBe(true);
  });

  it('reports unknown for text that is no date', () => {
    expect(detectTimestampFormat(['hello', 'world'])).toMatchObject({ format: 'unknown', confidence: 0 });
    expect(detectTimestampFormat(['', ' '])).toMatchObject({ format: 'unknown', confidence: 0 });
    expect(parseTimestamp('hello', { format: 'unknown', order: null, dayFirst: false })).toBeNull();
  });

  it('reads the locale preference', () => {
    expect(localePrefersDayFirst('en-US')).toBe(false);
    expect(localePrefersDayFirst('en-GB')).toBe(true);
    expect(localePrefersDayFirst('de-DE')).toBe(true);
  });
});

describe('elapsed time', () => {
  it('converts elapsed values to epoch ms from a start', () => {
    const start = utc(2021, 4, 2, 7, 12, 51);
    expect(elapsedToEpochMs(0.14, 'seconds', start)).toBe(start + 140);
    expect(elapsedToEpochMs(1.5, 'minutes', start)).toBe(start + 90_000);
    expect(elapsedToEpochMs(2, 'hours', start)).toBe(start + 7_200_000);
    expect(elapsedToEpochMs(0.5, 'days', start)).toBe(start + 43_200_000);
  });

  it('suggests seconds for a Chi.Bio exp_time column', () => {
    const values = ['0.14', '60.21', '120.25', '180.3', '240.36', '300.41'];
    expect(suggestElapsedTime(values, { columnName: 'exp_time' })).toEqual({ unit: 'seconds' });
    expect(detectTimestampFormat(values, { columnName: 'exp_time' }).elapsed).toEqual({ unit: 'seconds' });
  });

  it('suggests days for a DASware Duration column logged every 30 s', () => {
    const values = Array.from({ length: 20 }, (_, i) => String(i * (30 / 86400)));
    expect(suggestElapsedTime(values, { columnName: 'Duration' })).toEqual({ unit: 'days' });
  });

  it('suggests hours for a column logged every 30 s in hours and minutes for one every 30 s in minutes', () => {
    expect(suggestElapsedTime(['0', '0.008333', '0.016667', '0.025'])).toEqual({ unit: 'hours' });
    expect(suggestElapsedTime(['0', '0.5', '1', '1.5'])).toEqual({ unit: 'minutes' });
  });

  it('takes the unit from the column name when it says', () => {
    expect(suggestElapsedTime(['0', '1', '2'], { columnName: 'Time [h]' })).toEqual({ unit: 'hours' });
    expect(suggestElapsedTime(['0', '1', '2'], { columnName: 'elapsed_min' })).toEqual({ unit: 'minutes' });
    expect(suggestElapsedTime(['0', '1', '2'], { columnName: 'Time (s)' })).toEqual({ unit: 'seconds' });
    expect(suggestElapsedTime(['0', '1', '2'], { columnName: 'age days' })).toEqual({ unit: 'days' });
  });

  it('does not suggest elapsed time for serial dates, decreasing, constant or non-numeric values', () => {
    expect(suggestElapsedTime(['44197.5', '44197.6'])).toBeNull();
    expect(suggestElapsedTime(['10', '5'])).toBeNull();
    expect(suggestElapsedTime(['3', '3'])).toBeNull();
    expect(suggestElapsedTime(['-1', '0'])).toBeNull();
    expect(suggestElapsedTime(['1', 'x'])).toBeNull();
    expect(suggestElapsedTime(['1'])).toBeNull();
  });
});
