/**
 * The unit the time axis counts in. Points stay in minutes since the operation's start everywhere
 * (comments, zoom and fetches use minutes); only the labels change: minutes for operations up to
 * two days, hours beyond that and days beyond a month, so a 10-day fermentation reads '0 h ... 240 h'
 * rather than '2k ... 14k'. The tooltip always gives the exact minute as well.
 */
import { formatElapsedHourMinute, formatMinute } from './time-axis.ts';

export type TimeScaleUnit = 'minutes' | 'hours' | 'days';

/** Spans above this many minutes are labelled in hours. */
export const HOURS_ABOVE_MINUTES = 48 * 60;
/** Spans above this many minutes are labelled in days. */
export const DAYS_ABOVE_MINUTES = 30 * 24 * 60;

const MINUTES_PER: Record<TimeScaleUnit, number> = { minutes: 1, hours: 60, days: 1440 };
/** Tick steps that read naturally in each unit. */
const NICE_STEPS: Record<TimeScaleUnit, readonly number[]> = {
  minutes: [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 720],
  hours: [1, 2, 3, 6, 12, 24, 48, 72, 96, 120, 168, 240, 336, 720],
  days: [1, 2, 5, 7, 10, 14, 30, 60, 90, 180, 365],
};

export function timeScaleUnit(spanMinutes: number): TimeScaleUnit {
  if (spanMinutes > DAYS_ABOVE_MINUTES) return 'days';
  if (spanMinutes > HOURS_ABOVE_MINUTES) return 'hours';
  return 'minutes';
}

export function timeAxisTitle(unit: TimeScaleUnit, timeZero = 'unit operation start'): string {
  return `Time since ${timeZero} (${unit})`;
}

/**
 * Tick positions in minutes between min and max: multiples of a natural step of the scale's unit,
 * at most `maxTicks` of them.
 */
export function timeTicks(minMinute: number, maxMinute: number, unit: TimeScaleUnit, maxTicks: number): number[] {
  const span = maxMinute - minMinute;
  if (!(span > 0) || !Number.isFinite(span)) return [minMinute];
  const per = MINUTES_PER[unit];
  const steps = NICE_STEPS[unit];
  let step = steps[steps.length - 1]! * per;
  for (const candidate of steps) {
    if (span / (candidate * per) <= maxTicks - 1) {
      step = candidate * per;
      break;
    }
  }
  // Beyond the largest natural step, grow it in whole multiples.
  while (span / step > maxTicks - 1) step *= 2;
  const ticks: number[] = [];
  for (let tick = Math.ceil(minMinute / step) * step; tick <= maxMinute + 1e-9; tick += step) ticks.push(tick);
  return ticks;
}

/** A tick label: '90' minutes, '36 h', '12 d' (fractions only when a tick is not whole). */
export function formatTimeTick(minute: number, unit: TimeScaleUnit): string {
  if (unit === 'minutes') return formatMinute(minute);
  const value = minute / MINUTES_PER[unit];
  const rounded = Math.round(value * 10) / 10;
  const text = Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
  return `${text} ${unit === 'hours' ? 'h' : 'd'}`;
}

/** The tooltip's heading: the exact minute, and hours:minutes (days too on long scales). */
export function formatTimeHeading(minute: number, unit: TimeScaleUnit): string {
  const base = `Minute ${formatMinute(minute)}`;
  if (unit !== 'days') return `${base} (${formatElapsedHourMinute(minute)} h)`;
  const whole = Math.floor(Math.abs(minute) / 1440);
  const rest = Math.abs(minute) - whole * 1440;
  return `${base} (day ${minute < 0 ? '-' : ''}${whole}, ${formatElapsedHourMinute(rest)} h)`;
}
