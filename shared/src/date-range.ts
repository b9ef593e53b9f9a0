/** The shared date-range check: used by forms in the console and by the api. */
export const DATE_RANGE_MESSAGES = {
  invalidFormat: 'Invalid date format.',
  endBeforeStart: 'End time must be after start time.',
} as const;

type DateInput = string | number | Date | null | undefined;

function toTime(value: DateInput): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  return Date.parse(String(value));
}

function isBlank(value: DateInput): boolean {
  return value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
}

/** Returns the error message, or null when the range is acceptable (or incomplete). */
export function validateDateRange(start: DateInput, end: DateInput): string | null {
  if (isBlank(start) || isBlank(end)) return null;
  const startTime = toTime(start);
  const endTime = toTime(end);
  if (Number.isNaN(startTime) || Number.isNaN(endTime)) return DATE_RANGE_MESSAGES.invalidFormat;
  if (endTime <= startTime) return DATE_RANGE_MESSAGES.endBeforeStart;
  return null;
}
