/**
 * The unit the time axis counts in. Points stay in minutes since the operation's start everywhere
 * (comments, zoom and fetches use minutes); only the labels change, in the unit the console's dates
 * module picks for the span (`dates/elapsed-time.ts`: minutes up to three hours, hours up to five days,
 * days beyond), so a 37-hour run reads '0 h ... 36 h' rather than '0 ... 2,220'. The tooltip gives the
 * moment in the same words as comment labels, and the exact minute.
 */
import { elapsedUnitFor, formatElapsed, MINUTES_PER_UNIT, type ElapsedUnit } from '../dates/elapsed-time.ts';
import { formatMinute } from './time-axis.ts';

export type TimeScaleUnit = ElapsedUnit;

const MINUTES_PER = MINUTES_PER_UNIT;
/** Tick steps that read naturally in each unit. */
const NICE_STEPS: Record<TimeScaleUnit, readonly number[]> = {
  minutes: [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 720],
  hours: [1, 2, 3, 6, 12, 24, 48, 72, 96, 120, 168, 240, 336, 720],
  days: [1, 2, 5, 7, 10, 14, 30, 60, 90, 180, 365],
};

export function timeScaleUnit(spanMinutes: number): TimeScaleUnit {
  return elapsedUnitFor(spanMinutes);
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

/** The tooltip's heading: the moment as comment labels write it, and the exact minute: '37 h 00 min (minute 2220)'. */
export function formatTimeHeading(minute: number, unit: TimeScaleUnit): string {
  if (unit === 'minutes') return `Minute ${formatMinute(minute)}`;
  return `${formatElapsed(minute)} (minute ${formatMinute(minute)})`;
}
