/**
 * Conversions between wall-clock time and the charts' x axis: minutes since the unit operation's
 * start (1 minute = 60000 ms).
 */
import { MINUTE_MS } from './chart-constants.ts';
import { toDateTimeLocal, wallTimeToEpochMs } from '../dates/date-time-format.ts';

/** Numbers above this are epoch milliseconds; smaller numbers are already minutes. */
export const EPOCH_MS_THRESHOLD = 1e12;

export type TimeInput = string | number | Date;

/** Epoch milliseconds of an ISO string, a Date or an epoch-ms number; NaN when it does not parse. */
export function toEpochMs(value: TimeInput | null | undefined): number {
  if (value === null || value === undefined || value === '') return Number.NaN;
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  const trimmed = value.trim();
  // Numeric strings are epoch milliseconds (some clients send them that way).
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  return Date.parse(trimmed);
}

/** Minutes between the start and a time, fractional. */
export function minutesSince(time: TimeInput, startMs: number): number {
  return (toEpochMs(time) - startMs) / MINUTE_MS;
}

/**
 * The minute at which a comment sits. A number above 1e12 is epoch milliseconds; with a start time it
 * is taken relative to it, otherwise it is converted to minutes as is (divided by 60000). Smaller
 * numbers are minutes already. Strings are dates (ISO), relative to the start when there is one.
 */
export function commentMinute(timestamp: TimeInput, startMs: number | null | undefined): number {
  const hasStart = typeof startMs === 'number' && Number.isFinite(startMs);
  if (typeof timestamp === 'number') {
    if (timestamp > EPOCH_MS_THRESHOLD) return hasStart ? (timestamp - startMs) / MINUTE_MS : timestamp / MINUTE_MS;
    return timestamp;
  }
  const ms = toEpochMs(timestamp);
  if (Number.isNaN(ms)) return Number.NaN;
  return hasStart ? (ms - startMs) / MINUTE_MS : ms / MINUTE_MS;
}

/** The wall-clock time of a minute on the axis. */
export function minuteToEpochMs(minute: number, startMs: number): number {
  return startMs + minute * MINUTE_MS;
}

/** Rounds a minute for display: whole minutes stay whole, otherwise one decimal. */
export function formatMinute(minute: number): string {
  if (!Number.isFinite(minute)) return '-';
  const rounded = Math.round(minute * 10) / 10;
  return Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
}

/** A date-time field's value to the minute, in the display zone. */
export function toDateTimeLocalValue(ms: number): string {
  return Number.isFinite(ms) ? toDateTimeLocal(ms).slice(0, 16) : '';
}

/** Epoch ms of a date-time field's value (the display zone's wall clock); NaN when blank or invalid. */
export function fromDateTimeLocalValue(value: string): number {
  return wallTimeToEpochMs(value);
}
