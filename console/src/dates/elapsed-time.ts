/**
 * Elapsed time since a unit operation's start, the second way the console writes time: the unit a
 * span is counted in (minutes for short operations, hours for a run of a day or two, days beyond),
 * and the text of one elapsed moment ('45 min', '6 h 03 min', '37 h 00 min', '2 d 04 h 10 min'), so chart axes,
 * tooltips and comment labels read the same. Points themselves stay in minutes everywhere.
 */

export type ElapsedUnit = 'minutes' | 'hours' | 'days';

/** Spans longer than this (minutes) are counted in hours: three hours is still easy to read in minutes. */
export const HOURS_ABOVE_MINUTES = 3 * 60;
/** Spans longer than this (minutes) are counted in days: five days is 120 h, more reads better as days. */
export const DAYS_ABOVE_MINUTES = 5 * 24 * 60;

export const MINUTES_PER_UNIT: Record<ElapsedUnit, number> = { minutes: 1, hours: 60, days: 1440 };

/** The unit that fits a span: a 37-hour run in hours, a 90-minute step in minutes, a 12-day culture in days. */
export function elapsedUnitFor(spanMinutes: number): ElapsedUnit {
  if (spanMinutes > DAYS_ABOVE_MINUTES) return 'days';
  if (spanMinutes > HOURS_ABOVE_MINUTES) return 'hours';
  return 'minutes';
}

/** Minutes to one decimal, whole minutes without one: '90', '363.3'. */
function minutesText(minutes: number): string {
  const rounded = Math.round(minutes * 10) / 10;
  return Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
}

const pad2 = (value: number) => String(value).padStart(2, '0');

/**
 * One elapsed moment in the largest units that fit, to the whole minute past the first hour:
 * 45.5 -> '45.5 min', 363.3 -> '6 h 03 min', 2220 -> '37 h 00 min', 3130 -> '2 d 04 h 10 min'; '-' when not a number.
 */
export function formatElapsed(minutes: number): string {
  if (!Number.isFinite(minutes)) return '-';
  const sign = minutes < 0 ? '-' : '';
  const magnitude = Math.abs(minutes);
  if (magnitude < 60) return `${sign}${minutesText(magnitude)} min`;
  const total = Math.round(magnitude);
  const rest = total % 60;
  // A day and a half reads better as 37 h: days start at two.
  if (total < 2 * 1440) return `${sign}${Math.floor(total / 60)} h ${pad2(rest)} min`;
  const days = Math.floor(total / 1440);
  const hours = Math.floor((total % 1440) / 60);
  return `${sign}${days} d ${pad2(hours)} h ${pad2(rest)} min`;
}
