/**
 * The one way the console writes dates and times: ISO-like and unambiguous in any locale
 * ('2026-11-19 19:51', with seconds where they matter), in one display zone, whose name is shown
 * where a reader could take the time for another zone (charts, exports, audit entries, date fields).
 * The display zone is the organisation's (its settings) once known, so colleagues in two countries
 * read a run's times alike; until then, and for an unknown zone, the browser's. Times typed into
 * date-time fields are read in the same zone.
 */
import { format, isValid, parse, parseISO } from 'date-fns';
import { TZDate } from '@date-fns/tz';
import { parseTimeZone, WallClockConverter } from '@bioprocess/shared/csv/index';

export const DATE_TIME_FORMATS = {
  date: 'yyyy-MM-dd',
  dateTime: 'yyyy-MM-dd HH:mm',
  dateTimeSeconds: 'yyyy-MM-dd HH:mm:ss',
} as const;

export type DateTimeStyle = keyof typeof DATE_TIME_FORMATS;
export type DateTimeInput = string | number | Date | null | undefined;

/** A Date for an ISO string, epoch milliseconds or a Date; null when blank or unreadable. */
export function toDate(value: DateTimeInput): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const date = value instanceof Date ? value : typeof value === 'number' ? new Date(value) : parseISO(value);
  return isValid(date) ? date : null;
}

let displayZone: string | null = null;

function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Shows every later date and time in `zone` (an IANA name); null or an unknown name goes back to the browser's. */
export function setDisplayTimeZone(zone: string | null): void {
  displayZone = zone && isKnownTimeZone(zone) ? zone : null;
}

/** The display zone as its IANA name ('Europe/Amsterdam', 'UTC'). */
export function timeZoneName(): string {
  return displayZone ?? browserTimeZone();
}

/** The same instant, whose fields (hours, day...) read as the display zone's wall clock; also a reference date for parsing there. */
export function inDisplayZone(date: Date): Date {
  return new TZDate(date.getTime(), timeZoneName());
}

/** A timestamp in the display zone; '-' when there is none. */
export function formatDate(value: DateTimeInput, style: DateTimeStyle = 'dateTime'): string {
  const date = toDate(value);
  return date ? format(inDisplayZone(date), DATE_TIME_FORMATS[style]) : '-';
}

/** A timestamp followed by the zone it is written in: '2026-11-19 19:51 Europe/Amsterdam'. */
export function formatDateWithZone(value: DateTimeInput, style: DateTimeStyle = 'dateTime'): string {
  const text = formatDate(value, style);
  return text === '-' ? text : `${text} ${timeZoneName()}`;
}

/** The value of a `datetime-local` input for a timestamp, or '' when there is none. */
export function toDateTimeLocal(value: DateTimeInput): string {
  const date = toDate(value);
  // Seconds are kept (the inputs take them, step 1): a start such as Chi.Bio's 07:12:51 must not lose
  // them, since elapsed-time files count from it.
  return date ? format(inDisplayZone(date), "yyyy-MM-dd'T'HH:mm:ss") : '';
}

const WIRE_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * Epoch ms of a date-time field's value ('yyyy-MM-ddTHH:mm[:ss]', the display zone's wall clock);
 * NaN when blank or not that form. Read as a CSV file's times are: a wall time skipped by the change
 * to summer time reads as the same time after the jump, one that happens twice as the earlier.
 */
export function wallTimeToEpochMs(wire: string): number {
  const match = WIRE_DATE_TIME.exec(wire.trim());
  const zone = parseTimeZone(timeZoneName());
  if (!match || !zone) return Number.NaN;
  const [, y, mo, d, h, mi, s] = match;
  return new WallClockConverter(zone).toInstant(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)));
}

/** The ISO instant (UTC) of a date-time field's value; null when it is not a date-time. */
export function wallTimeToIso(wire: string): string | null {
  const ms = wallTimeToEpochMs(wire);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

const TYPED_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?$/;

/**
 * What a date-time field holds (the `datetime-local` wire form, 'yyyy-MM-ddTHH:mm[:ss]') for what a
 * user typed in ISO 24 h ('2021-05-02 07:12:51', seconds optional, a 'T' accepted too); null when the
 * text is not a real moment (month 13, 25 o'clock, half typed).
 */
export function parseDateTimeText(text: string): string | null {
  const match = TYPED_DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, day, minute, seconds] = match;
  const wire = `${day}T${minute}${seconds ?? ''}`;
  const date = parse(wire, seconds ? "yyyy-MM-dd'T'HH:mm:ss" : "yyyy-MM-dd'T'HH:mm", new Date());
  // date-fns rolls nothing over, so '2021-02-30' does not parse, but check the text round-trips anyway.
  if (!isValid(date) || format(date, seconds ? "yyyy-MM-dd'T'HH:mm:ss" : "yyyy-MM-dd'T'HH:mm") !== wire) return null;
  return wire;
}

/** True when the text is a real day written 'yyyy-MM-dd' (not '2021-02-30', not half typed). */
export function isDateText(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = parse(text, 'yyyy-MM-dd', new Date());
  return isValid(date) && format(date, 'yyyy-MM-dd') === text;
}

/** How a date-time field shows its value: the `datetime-local` wire form written as ISO 24 h ('2021-05-02 07:12:51'). */
export function dateTimeFieldText(value: string): string {
  return parseDateTimeText(value) === null ? value : value.replace('T', ' ');
}

/** A name for a downloaded file stamped with the current minute: 'audit-logs-2026-11-19-1951'. */
export function fileStamp(now: Date = new Date()): string {
  return format(inDisplayZone(now), 'yyyy-MM-dd-HHmm');
}
