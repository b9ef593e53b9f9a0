/**
 * Timestamp columns: pure numbers are spreadsheet serial dates (Excel's 1900 system,
 * valid 1900-2100); other values go through format detection over up to 20 samples (ISO with T or a
 * space, the L-prefixed ISO form, and slash/dash/dot day-month forms with the order inferred), with a
 * confidence figure. Also: elapsed time since the start (Chi.Bio `exp_time` in seconds,
 * DASware `Duration` in days) is recognised as a suggestion, and zone-less timestamps can be read in
 * the instrument's time zone.
 */
import { CSV_LIMITS } from './messages.ts';
import { parseNumericCell } from './numeric.ts';
import { WallClockConverter, type ParsedTimeZone } from './time-zones.ts';

export type TimestampFormat =
  | 'spreadsheet-serial'
  | 'iso'
  | 'iso-space'
  | 'iso-l'
  | 'slash'
  | 'dash'
  | 'dot'
  | 'month-name'
  | 'unknown';

/** Field order of the slash/dash/dot forms: day-month-year, month-day-year or year-month-day. */
export type DateOrder = 'dmy' | 'mdy' | 'ymd';

export type ElapsedTimeUnit = 'seconds' | 'minutes' | 'hours' | 'days';
export const ELAPSED_TIME_UNITS: readonly ElapsedTimeUnit[] = ['seconds', 'minutes', 'hours', 'days'];

export interface ElapsedTimeSuggestion {
  unit: ElapsedTimeUnit;
  /** The values are clock durations (`H:MM:SS`, `D.HH:MM:SS`): read as such whatever the unit. */
  clock?: boolean;
}

export interface TimestampDetection {
  format: TimestampFormat;
  /** Share of the samples (0..1) that parse with this format, lowered when the day/month order was a guess. */
  confidence: number;
  /** For slash/dash/dot forms: whether the day comes before the month. False for every other format. */
  dayFirst: boolean;
  /** For slash/dash/dot forms: the field order (ymd when the year comes first). */
  order: DateOrder | null;
  /** For numeric columns: set when the numbers look like elapsed time rather than serial dates. */
  elapsed: ElapsedTimeSuggestion | null;
}

export interface TimestampDetectionOptions {
  /** The locale's order when every sample is ambiguous (US: month first, so false). */
  preferDayFirst?: boolean;
  /** The column name: elapsed-time units are read from hints such as 'Time [h]' or 'elapsed_min'. */
  columnName?: string;
  /** Numbers may use a decimal comma (the file's delimiter is not a comma). */
  decimalComma?: boolean;
}

export interface TimestampParseOptions {
  /** Minutes the timestamps' wall clock is ahead of UTC, for values without their own offset. Default 0. */
  timezoneOffsetMinutes?: number;
  /**
   * The zone of values without their own offset (wins over timezoneOffsetMinutes): an IANA zone is
   * read with its daylight-saving rules. A value's own offset ('Z', '+02:00') always wins.
   */
  timeZone?: ParsedTimeZone;
  /** Serial dates may use a decimal comma (the file's delimiter is not a comma). */
  decimalComma?: boolean;
}

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;
const ELAPSED_UNIT_MS: Record<ElapsedTimeUnit, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: MS_PER_DAY,
};

/**
 * Excel serial 25569 is 1970-01-01. Serials below 60 are one day off because Excel counts the
 * non-existent 1900-02-29 (serial 60); serial 1 is 1900-01-01.
 */
const SERIAL_UNIX_EPOCH = 25569;
const SERIAL_FIRST_MARCH_1900 = 61;
export const SERIAL_DATE_MIN = 1; // 1900-01-01
export const SERIAL_DATE_MAX_EXCLUSIVE = 73416; // 2101-01-01: the last valid day is 2100-12-31

/** Epoch ms of a spreadsheet serial date, or null outside 1900-2100 (and for the fictitious 1900-02-29). */
export function spreadsheetSerialToEpochMs(serial: number, options: TimestampParseOptions = {}): number | null {
  if (!Number.isFinite(serial) || serial < SERIAL_DATE_MIN || serial >= SERIAL_DATE_MAX_EXCLUSIVE) return null;
  if (serial >= 60 && serial < SERIAL_FIRST_MARCH_1900) return null;
  const daysSinceEpoch = serial >= SERIAL_FIRST_MARCH_1900 ? serial - SERIAL_UNIX_EPOCH : serial - SERIAL_UNIX_EPOCH + 1;
  return Math.round(daysSinceEpoch * MS_PER_DAY) - (options.timezoneOffsetMinutes ?? 0) * MS_PER_MINUTE;
}

export function isSpreadsheetSerialDate(serial: number): boolean {
  return spreadsheetSerialToEpochMs(serial) !== null;
}

/** Elapsed time since the start (e.g. the unit operation's start) as epoch ms. */
export function elapsedToEpochMs(value: number, unit: ElapsedTimeUnit, startMs: number): number {
  return startMs + Math.round(value * ELAPSED_UNIT_MS[unit]);
}

/**
 * Plate readers (Gen5) write elapsed time as `H:MM:SS`, .NET-based software as `D.HH:MM:SS`; hours may
 * run past 24 (`66:35:00`). No nested runs: linear on any text.
 */
const ELAPSED_CLOCK = /^(?:(\d{1,5})\.)?(\d{1,6}):([0-5]\d):([0-5]\d)(?:[.,](\d{1,3})\d*)?$/;

/** Milliseconds of a clock duration (`0:04:22`, `1.02:00:00`, `66:35:00.5`), or null when the text is not one. */
export function parseElapsedClock(raw: string): number | null {
  const match = ELAPSED_CLOCK.exec(raw.trim());
  if (!match) return null;
  const days = match[1] === undefined ? 0 : Number(match[1]);
  const millis = match[5] === undefined ? 0 : Number(match[5].padEnd(3, '0'));
  return ((days * 24 + Number(match[2])) * 60 + Number(match[3])) * 60_000 + Number(match[4]) * 1000 + millis;
}

/**
 * An elapsed-time cell as epoch ms from `startMs`: a clock duration as written, else a number in
 * `unit`; null when the cell is neither (the row is skipped as a bad timestamp).
 */
export function elapsedCellToEpochMs(raw: string, unit: ElapsedTimeUnit, startMs: number, options: { decimalComma?: boolean } = {}): number | null {
  const clock = raw.includes(':') ? parseElapsedClock(raw) : null;
  if (clock !== null) return startMs + clock;
  const value = parseNumericCell(raw, options);
  return value === null || Number.isNaN(value) ? null : elapsedToEpochMs(value, unit, startMs);
}

// --- Date-time text forms --------------------------------------------------------------------------

const TIME_PART = String.raw`(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?`;
const ZONE_PART = String.raw`(Z|[+-]\d{2}(?::?\d{2})?)?`;
const ISO_T = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})(?:T${TIME_PART}\s*${ZONE_PART})?$`, 'i');
const ISO_SPACE = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})\s+${TIME_PART}\s*${ZONE_PART}$`, 'i');
const ISO_L = new RegExp(String.raw`^L\s*(\d{4})-(\d{2})-(\d{2})(?:[T\s]\s*${TIME_PART}\s*${ZONE_PART})?$`, 'i');
const DAY_MONTH = new RegExp(
  String.raw`^(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?:[T\s]+${TIME_PART}\s*(AM|PM)?)?$`,
  'i',
);
const YEAR_FIRST = new RegExp(String.raw`^(\d{4})([/.])(\d{1,2})\2(\d{1,2})(?:[T\s]+${TIME_PART}\s*(AM|PM)?)?$`, 'i');

const SEPARATOR_FORMAT: Record<string, TimestampFormat> = { '/': 'slash', '-': 'dash', '.': 'dot' };

/** English month names or their three-letter forms, as instrument reports write them. */
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;
const MONTH_WORD = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`;
/** `29 Sep 2023  5:21:32 AM` (Vi-CELL XR), `29-Sep-2023 05:21`. The month's name leaves no day/month doubt. */
const DAY_MONTH_NAME = new RegExp(String.raw`^(\d{1,2})[\s-]+${MONTH_WORD}[\s-]+(\d{4})(?:[T\s]+${TIME_PART}\s*(AM|PM)?)?$`, 'i');
/** `Sep 29, 2023 5:21:32 AM`. */
const MONTH_NAME_DAY = new RegExp(String.raw`^${MONTH_WORD}\s+(\d{1,2}),?\s+(\d{4})(?:[T\s]+${TIME_PART}\s*(AM|PM)?)?$`, 'i');

function parseMonthName(value: string, offset: number): number | null {
  const dayFirst = DAY_MONTH_NAME.exec(value);
  const match = dayFirst ?? MONTH_NAME_DAY.exec(value);
  if (!match) return null;
  const [day, month] = dayFirst ? [match[1]!, match[2]!] : [match[2]!, match[1]!];
  const monthNumber = MONTHS.indexOf(month.slice(0, 3).toLowerCase() as (typeof MONTHS)[number]) + 1;
  return composeEpochMs(Number(match[3]), monthNumber, Number(day), match[4], match[5], match[6], match[7], match[8], offset);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function expandYear(text: string): number {
  const year = Number(text);
  if (text.length !== 2) return year;
  return year < 70 ? 2000 + year : 1900 + year;
}

function zoneOffsetMinutes(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone.charCodeAt(0) === 45 /* - */ ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}

/** Builds epoch ms from fields, or null when a field is out of range. Fractions are truncated to ms. */
function composeEpochMs(
  year: number,
  month: number,
  day: number,
  hourText: string | undefined,
  minuteText: string | undefined,
  secondText: string | undefined,
  fractionText: string | undefined,
  meridiem: string | undefined,
  offsetMinutes: number,
): number | null {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  let hour = hourText === undefined ? 0 : Number(hourText);
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  if (meridiem) {
    if (hour < 1 || hour > 12) return null;
    const pm = meridiem.toUpperCase() === 'PM';
    hour = (hour % 12) + (pm ? 12 : 0);
  }
  if (hour > 23 || minute > 59 || second > 59) return null;
  const millis = fractionText === undefined ? 0 : Number(fractionText.slice(0, 3).padEnd(3, '0'));
  return Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * MS_PER_MINUTE;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil): no Date object needed. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

function twoDigits(text: string, index: number): number {
  const high = text.charCodeAt(index) - 48;
  const low = text.charCodeAt(index + 1) - 48;
  return high >= 0 && high <= 9 && low >= 0 && low <= 9 ? high * 10 + low : -1;
}

/**
 * Fast path for the common full ISO forms ('2025-02-26T10:27:40.854742Z', '2020-07-14 09:55:33',
 * '...+02:00'), read with char codes: the worker parses one per row. Returns undefined for any other
 * shape, which then goes through the regular expressions.
 */
function parseIsoFast(text: string, defaultOffset: number): number | null | undefined {
  const length = text.length;
  if (length < 19) return undefined;
  const separator = text.charCodeAt(10);
  if (
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    (separator !== 84 /* T */ && separator !== 32) ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  ) {
    return undefined;
  }
  const century = twoDigits(text, 0);
  const yearInCentury = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (century < 0 || yearInCentury < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let index = 19;
  let millis = 0;
  const fractionMark = text.charCodeAt(index);
  if (fractionMark === 46 /* . */ || fractionMark === 44 /* , */) {
    index += 1;
    let scale = 100;
    const fractionStart = index;
    for (; index < length; index += 1) {
      const digit = text.charCodeAt(index) - 48;
      if (digit < 0 || digit > 9) break;
      millis += digit * scale; // digits past milliseconds add 0: truncated
      scale = scale >= 10 ? scale / 10 : 0;
    }
    if (index === fractionStart || index - fractionStart > 9) return undefined;
  }
  let offset = defaultOffset;
  if (index < length) {
    const zone = text.charCodeAt(index);
    if ((zone === 90 || zone === 122) /* Z */ && index + 1 === length) offset = 0;
    else if (zone === 43 || zone === 45) {
      const rest = length - index - 1;
      const zoneHours = twoDigits(text, index + 1);
      let zoneMinutes = 0;
      if (rest === 5 && text.charCodeAt(index + 3) === 58) zoneMinutes = twoDigits(text, index + 4);
      else if (rest === 4) zoneMinutes = twoDigits(text, index + 3);
      else if (rest !== 2) return undefined;
      if (zoneHours < 0 || zoneMinutes < 0) return undefined;
      offset = (zone === 45 ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
    } else return undefined;
  }
  const year = century * 100 + yearInCentury;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  return (
    daysFromCivil(year, month, day) * MS_PER_DAY +
    ((hour * 60 + minute - offset) * 60 + second) * 1000 +
    millis
  );
}

function parseIsoMatch(match: RegExpExecArray, defaultOffset: number): number | null {
  const zone = match[8];
  return composeEpochMs(
    Number(match[1]),
    Number(match[2]),
    Number(match[3]),
    match[4],
    match[5],
    match[6],
    match[7],
    undefined,
    zone ? zoneOffsetMinutes(zone) : defaultOffset,
  );
}

function parseDayMonth(value: string, order: DateOrder, separator: string | null, offset: number): number | null {
  if (order === 'ymd') {
    const match = YEAR_FIRST.exec(value);
    if (!match || (separator !== null && match[2] !== separator)) return null;
    return composeEpochMs(Number(match[1]), Number(match[3]), Number(match[4]), match[5], match[6], match[7], match[8], match[9], offset);
  }
  const match = DAY_MONTH.exec(value);
  if (!match || (separator !== null && match[2] !== separator)) return null;
  const first = Number(match[1]);
  const second = Number(match[3]);
  const [day, month] = order === 'dmy' ? [first, second] : [second, first];
  return composeEpochMs(expandYear(match[4]!), month, day, match[5], match[6], match[7], match[8], match[9], offset);
}

/**
 * Reads a value as epoch ms with `offset` for values without their own zone (NaN gives NaN for
 * those, which is how the zoned parser tells them apart); null when the value does not fit the format.
 */
function fixedOffsetParser(
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst'>,
  options: TimestampParseOptions,
): (value: string, offset: number) => number | null {
  switch (detection.format) {
    case 'spreadsheet-serial':
      return (value, offset) => {
        const serial = parseNumericCell(value, options);
        if (serial === null || Number.isNaN(serial)) return null;
        const utc = spreadsheetSerialToEpochMs(serial, options);
        return utc === null ? null : utc - offset * MS_PER_MINUTE;
      };
    case 'iso':
    case 'iso-space':
    case 'iso-l': {
      // The three ISO forms are accepted whichever was detected: exports mix 'T' and ' ' freely.
      return (raw, offset) => {
        const fast = parseIsoFast(raw, offset);
        if (fast !== undefined) return fast;
        const value = raw.trim();
        const match = ISO_T.exec(value) ?? ISO_SPACE.exec(value) ?? ISO_L.exec(value);
        return match ? parseIsoMatch(match, offset) : null;
      };
    }
    case 'slash':
    case 'dash':
    case 'dot': {
      const separator = detection.format === 'slash' ? '/' : detection.format === 'dash' ? '-' : '.';
      const order: DateOrder = detection.order ?? (detection.dayFirst ? 'dmy' : 'mdy');
      return (raw, offset) => parseDayMonth(raw.trim(), order, separator, offset);
    }
    case 'month-name':
      return (raw, offset) => parseMonthName(raw.trim(), offset);
    default:
      return () => null;
  }
}

/**
 * Parses one value with a detected format; null when the value does not fit it (the row is skipped).
 * `previous` is the instant of the file's preceding row: it settles wall-clock times that happen twice
 * when clocks go back (see WallClockConverter).
 */
export function createTimestampParser(
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst'>,
  options: TimestampParseOptions = {},
): (value: string, previous?: number) => number | null {
  const parse = fixedOffsetParser(detection, { decimalComma: options.decimalComma });
  const zone = options.timeZone;
  if (!zone || zone.kind === 'fixed') {
    const offset = zone ? zone.offsetMinutes : (options.timezoneOffsetMinutes ?? 0);
    return (value) => parse(value, offset);
  }
  const converter = new WallClockConverter(zone);
  return (value, previous) => {
    const own = parse(value, Number.NaN);
    if (own === null || !Number.isNaN(own)) return own;
    const wall = parse(value, 0);
    return wall === null ? null : converter.toInstant(wall, previous);
  };
}

/** True when a value carries its own offset ('Z', '+02:00'): no zone is needed to read it. */
export function hasOwnUtcOffset(value: string): boolean {
  const text = value.trim();
  const match = ISO_T.exec(text) ?? ISO_SPACE.exec(text) ?? ISO_L.exec(text);
  return match !== null && match[8] !== undefined;
}

/** Convenience for single values (prefer createTimestampParser in loops). */
export function parseTimestamp(
  value: string,
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst'>,
  options: TimestampParseOptions = {},
): number | null {
  return createTimestampParser(detection, options)(value);
}

// --- Detection -------------------------------------------------------------------------------------

/**
 * Confidence is multiplied by this when the day/month order could not be inferred from the samples
 * and the locale decided: the result is then a guess, which should bring up the low-confidence notice.
 */
export const AMBIGUOUS_ORDER_CONFIDENCE_FACTOR = 0.6;

function nonEmptySamples(values: Iterable<string>, limit: number): string[] {
  const samples: string[] = [];
  for (const raw of values) {
    const value = raw.trim();
    if (value !== '') samples.push(value);
    if (samples.length >= limit) break;
  }
  return samples;
}

function detectDayMonth(samples: string[], preferDayFirst: boolean): TimestampDetection | null {
  const formatCounts = new Map<TimestampFormat, number>();
  let yearFirst = 0;
  let firstOver12 = 0;
  let secondOver12 = 0;
  for (const value of samples) {
    const yearFirstMatch = YEAR_FIRST.exec(value);
    if (yearFirstMatch) {
      yearFirst += 1;
      const format = SEPARATOR_FORMAT[yearFirstMatch[2]!]!;
      formatCounts.set(format, (formatCounts.get(format) ?? 0) + 1);
      continue;
    }
    const match = DAY_MONTH.exec(value);
    if (!match) continue;
    const format = SEPARATOR_FORMAT[match[2]!]!;
    formatCounts.set(format, (formatCounts.get(format) ?? 0) + 1);
    if (Number(match[1]) > 12) firstOver12 += 1;
    if (Number(match[3]) > 12) secondOver12 += 1;
  }
  if (formatCounts.size === 0) return null;
  const [format] = [...formatCounts].sort((a, b) => b[1] - a[1])[0]!;
  let order: DateOrder;
  let ambiguous = false;
  if (yearFirst * 2 > samples.length) order = 'ymd';
  else if (firstOver12 > secondOver12) order = 'dmy';
  else if (secondOver12 > firstOver12) order = 'mdy';
  else {
    order = preferDayFirst ? 'dmy' : 'mdy';
    ambiguous = true;
  }
  const separator = format === 'slash' ? '/' : format === 'dash' ? '-' : '.';
  const valid = samples.filter((value) => parseDayMonth(value, order, separator, 0) !== null).length;
  const confidence = (valid / samples.length) * (ambiguous ? AMBIGUOUS_ORDER_CONFIDENCE_FACTOR : 1);
  return { format, confidence, dayFirst: order === 'dmy', order, elapsed: null };
}

/**
 * Detects the format of a timestamp column from its first values (up to 20 non-empty samples are
 * used). A column of plain numbers is 'spreadsheet-serial'; `elapsed` then says whether the numbers
 * look like elapsed time instead (the mapping decides which reading to use).
 */
export function detectTimestampFormat(
  values: Iterable<string>,
  options: TimestampDetectionOptions = {},
): TimestampDetection {
  const samples = nonEmptySamples(values, CSV_LIMITS.dateDetectionSampleSize);
  const unknown: TimestampDetection = { format: 'unknown', confidence: 0, dayFirst: false, order: null, elapsed: null };
  if (samples.length === 0) return unknown;

  if (samples.every((value) => parseElapsedClock(value) !== null)) {
    return { format: 'unknown', confidence: 0, dayFirst: false, order: null, elapsed: { unit: 'seconds', clock: true } };
  }
  const numbers = samples.map((value) => parseNumericCell(value, options));
  if (numbers.every((value) => value !== null && !Number.isNaN(value))) {
    const serials = numbers.filter((value) => isSpreadsheetSerialDate(value as number)).length;
    return {
      format: 'spreadsheet-serial',
      confidence: serials / samples.length,
      dayFirst: false,
      order: null,
      elapsed: suggestElapsedTime(samples, options),
    };
  }

  // The ISO forms are one family (exports mix 'T' and ' '): the confidence counts any of them, the
  // reported format is the most frequent one.
  const isoForms: [TimestampFormat, RegExp][] = [
    ['iso', ISO_T],
    ['iso-space', ISO_SPACE],
    ['iso-l', ISO_L],
  ];
  const isoCounts = new Map<TimestampFormat, number>();
  for (const value of samples) {
    for (const [format, pattern] of isoForms) {
      const match = pattern.exec(value);
      if (match !== null && parseIsoMatch(match, 0) !== null) {
        isoCounts.set(format, (isoCounts.get(format) ?? 0) + 1);
        break;
      }
    }
  }
  let best: TimestampDetection = unknown;
  if (isoCounts.size > 0) {
    const [format] = [...isoCounts].sort((a, b) => b[1] - a[1])[0]!;
    const valid = [...isoCounts.values()].reduce((sum, count) => sum + count, 0);
    best = { format, confidence: valid / samples.length, dayFirst: false, order: null, elapsed: null };
  }
  const dayMonth = detectDayMonth(samples, options.preferDayFirst ?? false);
  if (dayMonth && dayMonth.confidence > best.confidence) best = dayMonth;
  const monthNames = samples.filter((value) => parseMonthName(value, 0) !== null).length;
  if (monthNames / samples.length > best.confidence) {
    best = { format: 'month-name', confidence: monthNames / samples.length, dayFirst: false, order: null, elapsed: null };
  }
  return best;
}

/** True when the detection's confidence calls for the low-confidence notice. */
export function isLowConfidence(detection: Pick<TimestampDetection, 'confidence'>): boolean {
  return detection.confidence < CSV_LIMITS.dateConfidenceThreshold;
}

/**
 * The locale's day/month preference for detectTimestampFormat's `preferDayFirst`: false for US
 * English (month first), otherwise read from how the locale formats a date with day 31 and month 12.
 */
export function localePrefersDayFirst(locale: string): boolean {
  const parts = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'numeric', year: 'numeric', timeZone: 'UTC' })
    .formatToParts(Date.UTC(2020, 11, 31))
    .filter((part) => part.type === 'day' || part.type === 'month');
  return parts[0]?.type === 'day';
}

// --- Elapsed time -----------------------------------------------------------------------------------

/** Serial dates of real bioprocess data lie after 1970; numbers below this look like elapsed time. */
const PLAUSIBLE_SERIAL_MIN = SERIAL_UNIX_EPOCH;

const UNIT_HINTS: [ElapsedTimeUnit, RegExp][] = [
  ['seconds', /(^|[^a-z])(s|sec|secs|seconds?)([^a-z]|$)/i],
  ['minutes', /(^|[^a-z])(m|min|mins|minutes?)([^a-z]|$)/i],
  ['hours', /(^|[^a-z])(h|hr|hrs|hours?)([^a-z]|$)/i],
  ['days', /(^|[^a-z])(d|days?)([^a-z]|$)/i],
];

/** Logging intervals instruments use, in seconds: a step in the right unit lands near one of them. */
const ROUND_INTERVALS_S = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600];

function unitFromStep(medianStep: number): ElapsedTimeUnit {
  for (const unit of ELAPSED_TIME_UNITS) {
    const stepSeconds = (medianStep * ELAPSED_UNIT_MS[unit]) / 1000;
    if (stepSeconds < 0.5 || stepSeconds > 3600 * 1.05) continue;
    if (ROUND_INTERVALS_S.some((interval) => Math.abs(stepSeconds - interval) / interval < 0.05)) return unit;
  }
  // No unit gives a familiar interval: take the one whose interval is nearest a minute.
  let bestUnit: ElapsedTimeUnit = 'seconds';
  let bestDistance = Infinity;
  for (const unit of ELAPSED_TIME_UNITS) {
    const distance = Math.abs(Math.log10((medianStep * ELAPSED_UNIT_MS[unit]) / 60_000));
    if (distance < bestDistance) {
      bestDistance = distance;
      bestUnit = unit;
    }
  }
  return bestUnit;
}

/**
 * Suggests reading a numeric timestamp column as elapsed time: the values are non-negative, never
 * decrease, grow overall, and some are too small to be a serial date after 1970. The unit comes
 * from the column name when it says (e.g. 'Time [h]'), else from the typical step between samples.
 */
export function suggestElapsedTime(
  values: Iterable<string>,
  options: { columnName?: string; decimalComma?: boolean } = {},
): ElapsedTimeSuggestion | null {
  const samples = nonEmptySamples(values, CSV_LIMITS.dateDetectionSampleSize);
  if (samples.length < 2) return null;
  const numbers: number[] = [];
  for (const sample of samples) {
    const value = parseNumericCell(sample, options);
    if (value === null || Number.isNaN(value) || value < 0) return null;
    if (numbers.length > 0 && value < numbers[numbers.length - 1]!) return null;
    numbers.push(value);
  }
  if (numbers[numbers.length - 1]! <= numbers[0]!) return null;
  if (numbers.every((value) => value >= PLAUSIBLE_SERIAL_MIN && value < SERIAL_DATE_MAX_EXCLUSIVE)) return null;

  const name = options.columnName ?? '';
  for (const [unit, hint] of UNIT_HINTS) if (hint.test(name)) return { unit };

  const steps = numbers
    .slice(1)
    .map((value, index) => value - numbers[index]!)
    .filter((step) => step > 0)
    .sort((a, b) => a - b);
  const medianStep = steps[Math.floor(steps.length / 2)]!;
  return { unit: unitFromStep(medianStep) };
}
