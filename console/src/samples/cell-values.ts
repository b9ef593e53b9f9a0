/**
 * What a scientist types into a samples cell, read the way the api stores it: a drawn time in the
 * console's one format (or ISO 8601), and a result as a number or a flagged limit ('< 0.5', '> 50').
 * Commas are taken as decimal separators when the number has no point, as spreadsheets in many
 * locales copy them.
 */
import { format, isValid, parse, parseISO } from 'date-fns';
import { SAMPLE_FLAG_SIGNS, type SampleFlag } from '@bioprocess/shared/samples';
import { DATE_TIME_FORMATS, inDisplayZone, wallTimeToEpochMs } from '../dates/date-time-format.ts';

export const CELL_MESSAGES = {
  notANumber: 'Not a number: write 12.5, or a flagged limit such as < 0.5 or > 50.',
  flagNeedsLimit: 'A flag needs its limit: write < 0.5 or > 50.',
  badTime: `Not a time: write ${DATE_TIME_FORMATS.dateTime} (your time zone) or ISO 8601.`,
  timeRequired: 'Drawn time is required.',
  sampleIdRequired: 'Sample ID is required.',
} as const;

export type ResultCell =
  | { kind: 'empty' }
  | { kind: 'value'; value: number; flag: SampleFlag | null }
  | { kind: 'error'; message: string };

const NUMBER = /^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?$/;

export function parseNumber(text: string): number | null {
  const trimmed = text.trim().replace(/\s/g, '');
  if (!NUMBER.test(trimmed)) return null;
  const value = Number(trimmed.replace(',', '.'));
  return Number.isFinite(value) ? value : null;
}

export function parseResultCell(text: string): ResultCell {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'empty' };
  const flagged = /^([<>])\s*(.*)$/.exec(trimmed);
  if (flagged) {
    const value = parseNumber(flagged[2]!);
    if (value === null) return { kind: 'error', message: flagged[2]!.trim() ? CELL_MESSAGES.notANumber : CELL_MESSAGES.flagNeedsLimit };
    return { kind: 'value', value, flag: flagged[1] === '<' ? 'below_limit' : 'above_limit' };
  }
  const value = parseNumber(trimmed);
  return value === null ? { kind: 'error', message: CELL_MESSAGES.notANumber } : { kind: 'value', value, flag: null };
}

/** A result as the grid writes it: '12.5', '< 0.5', '> 50'. */
export function formatResultCell(value: number, flag: SampleFlag | null): string {
  return flag ? `${SAMPLE_FLAG_SIGNS[flag]} ${value}` : String(value);
}

const LOCAL_FORMATS = [DATE_TIME_FORMATS.dateTime, DATE_TIME_FORMATS.dateTimeSeconds, "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss"];

/** A drawn or measured time: the console's format in the display zone, or ISO 8601 with its own zone. */
export function parseTimeCell(text: string): Date | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  for (const pattern of LOCAL_FORMATS) {
    // Parsed as fields first, then placed in the display zone the way a typed date-time field is.
    const fields = parse(trimmed, pattern, new Date(0));
    if (isValid(fields) && format(fields, pattern) === trimmed) return new Date(wallTimeToEpochMs(format(fields, "yyyy-MM-dd'T'HH:mm:ss")));
  }
  if (/[zZ]|[+-]\d\d:?\d\d$/.test(trimmed)) {
    const date = parseISO(trimmed);
    if (isValid(date)) return date;
  }
  return null;
}

/** A time for its cell, with seconds only when it has some. */
export function formatTimeCell(value: string | Date): string {
  const parsed = typeof value === 'string' ? parseISO(value) : value;
  if (!isValid(parsed)) return '';
  const date = inDisplayZone(parsed);
  return format(date, date.getSeconds() === 0 ? DATE_TIME_FORMATS.dateTime : DATE_TIME_FORMATS.dateTimeSeconds);
}
