/** Display formats of spec/02 §9 and the type labels of the run screens. */
import { format, isValid, parseISO } from 'date-fns';

export const DATE_FORMATS = {
  date: 'yyyy-MM-dd',
  dateTime: 'yyyy-MM-dd HH:mm',
  long: 'dd-MMM-yyyy HH:mm',
} as const;

export type DateFormatName = keyof typeof DATE_FORMATS;

function toDate(value: string | Date | null | undefined): Date | null {
  if (!value) return null;
  const date = value instanceof Date ? value : parseISO(value);
  return isValid(date) ? date : null;
}

/** Formats a server timestamp in local time; '-' when there is none (spec/02 §2). */
export function formatDate(value: string | Date | null | undefined, style: DateFormatName = 'dateTime'): string {
  const date = toDate(value);
  return date ? format(date, DATE_FORMATS[style]) : '-';
}

/**
 * The value of a `datetime-local` input for a server timestamp, or '' when there is none. Seconds are
 * kept (the inputs take them, `step` 1): an instrument's start such as Chi.Bio's 07:12:51 must not
 * lose them, since elapsed-time files count from it.
 */
export function toDateTimeLocal(value: string | null | undefined): string {
  const date = toDate(value);
  return date ? format(date, "yyyy-MM-dd'T'HH:mm:ss") : '';
}

/** 'spray_drying' -> 'Spray Drying': underscores become spaces, each word capitalised. */
export function titleCaseType(type: string): string {
  return type
    .split('_')
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
