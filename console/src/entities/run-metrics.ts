/**
 * The numbers of the dashboard cards and the run Key Insights, as pure functions so
 * they are tested apart from the screens that fetch their inputs.
 */
import { deriveStatus } from '@bioprocess/shared/status';
import type { RunStatus } from '@bioprocess/shared/enums';
import type { Reading, Run } from './types.ts';

const MINUTE_MS = 60_000;
const MINUTES_PER_HOUR = 60;
const MINUTES_PER_DAY = 1440;

type TimedRun = Pick<Run, 'startTime' | 'endTime'> & { status?: RunStatus | null };

/** The server derives the status; the local derivation covers objects it has not sent yet. */
export function statusOf(run: TimedRun, now: Date = new Date()): RunStatus {
  return run.status ?? deriveStatus(run.startTime, run.endTime, now);
}

/**
 * Minutes a run has taken so far: until its end, or until now while it is active. Null for a run
 * that has not started or whose times are unusable.
 */
export function runDurationMinutes(run: TimedRun, now: Date = new Date()): number | null {
  if (!run.startTime) return null;
  const start = Date.parse(run.startTime);
  if (Number.isNaN(start) || start > now.getTime()) return null;
  const end = run.endTime ? Date.parse(run.endTime) : now.getTime();
  if (Number.isNaN(end) || end < start) return null;
  return (end - start) / MINUTE_MS;
}

/** Under 60 minutes in minutes, under 1440 in hours, else in days; 'N/A' without a value. */
export function formatRunTime(minutes: number | null | undefined): string {
  if (minutes === null || minutes === undefined || !Number.isFinite(minutes)) return 'N/A';
  if (minutes < MINUTES_PER_HOUR) return `${Math.round(minutes)} min`;
  if (minutes < MINUTES_PER_DAY) return `${(minutes / MINUTES_PER_HOUR).toFixed(1)} hours`;
  return `${(minutes / MINUTES_PER_DAY).toFixed(1)} days`;
}

function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** scale_grams / scale_liters when both are positive: the titer a run reports without an instrument. */
export function scaleTiter(run: Pick<Run, 'scaleGrams' | 'scaleLiters'>): number | null {
  const grams = run.scaleGrams ?? 0;
  const liters = run.scaleLiters ?? 0;
  return grams > 0 && liters > 0 ? grams / liters : null;
}

/** The highest reading of a series; a downsampled bucket contributes its maximum. */
function highestReading(readings: readonly Reading[]): number | null {
  let highest: number | null = null;
  for (const reading of readings) {
    const candidate = reading.max ?? reading.value;
    if (candidate !== null && candidate !== undefined && Number.isFinite(candidate)) {
      highest = highest === null ? candidate : Math.max(highest, candidate);
    }
  }
  return highest;
}

/**
 * Max Titer (g/L): the highest value across the run's titer instruments; without any titer reading,
 * scale_grams / scale_liters when both are positive; else null (shown as 'N/A').
 */
export function maxTiter(titerSeries: readonly (readonly Reading[])[], run: Pick<Run, 'scaleGrams' | 'scaleLiters'>): number | null {
  const maxima = titerSeries.map(highestReading).filter((value): value is number => value !== null);
  if (maxima.length > 0) return Math.max(...maxima);
  return scaleTiter(run);
}

/** Yield: the mean of the per-instrument means of the yield instruments, or null without readings. */
export function meanOfMeans(series: readonly (readonly Reading[])[]): number | null {
  const means = series
    .map((readings) => mean(readings.map((reading) => reading.value).filter((value): value is number => value !== null && Number.isFinite(value))))
    .filter((value): value is number => value !== null);
  return mean(means);
}

export function formatTiter(value: number | null): string {
  return value === null ? 'N/A' : `${value.toFixed(1)} g/L`;
}

export function formatPercent(value: number | null): string {
  return value === null ? 'N/A' : `${value.toFixed(1)}%`;
}

export interface RunSummary {
  totalRuns: number;
  activeRuns: number;
  /** Mean duration of the runs that have both a start and an end, in minutes; null without any. */
  averageRunTimeMinutes: number | null;
}

export function summariseRuns(runs: readonly TimedRun[], now: Date = new Date()): RunSummary {
  const durations: number[] = [];
  let activeRuns = 0;
  for (const run of runs) {
    if (statusOf(run, now) === 'Active') activeRuns += 1;
    if (run.startTime && run.endTime) {
      const duration = runDurationMinutes(run, now);
      if (duration !== null) durations.push(duration);
    }
  }
  return { totalRuns: runs.length, activeRuns, averageRunTimeMinutes: mean(durations) };
}

/**
 * Grams per litre in one unit of each mass concentration a titer can be written in. A titer
 * instrument in any other unit (an imported column typed as titer that holds counts, OD or a unit-less
 * signal) is not a concentration the console can average with the others, so it is left out and
 * named, never averaged as if it were g/L: an mg/L column averaged as g/L is how the dashboard's
 * Average Titer jumped from 3.6 to 284 g/L after an import.
 */
const GRAMS_PER_LITRE: Readonly<Record<string, number>> = {
  'g/L': 1, 'g/l': 1, 'mg/mL': 1, 'mg/ml': 1, 'kg/m3': 1, 'g/dL': 10,
  'mg/L': 1e-3, 'mg/l': 1e-3, 'ug/mL': 1e-3, 'μg/mL': 1e-3, 'µg/mL': 1e-3,
  'ug/L': 1e-6, 'μg/L': 1e-6, 'µg/L': 1e-6, 'ng/mL': 1e-6,
};

/** How many g/L one of the unit is; null when the unit is not a mass concentration (or not given). */
export function gramsPerLitreFactor(unit: string | null | undefined): number | null {
  if (!unit) return null;
  return GRAMS_PER_LITRE[unit.trim()] ?? null;
}

/** A titer instrument's readings in g/L; null when its unit cannot be read as a concentration. */
export function titerReadingsInGramsPerLitre(unit: string | null | undefined, readings: readonly Reading[]): Reading[] | null {
  const factor = gramsPerLitreFactor(unit);
  if (factor === null) return null;
  if (factor === 1) return [...readings];
  const scale = (value: number | null | undefined) => (value === null || value === undefined ? value : value * factor);
  return readings.map((reading) => ({ ...reading, value: scale(reading.value) ?? null, ...(reading.max === undefined ? {} : { max: scale(reading.max) }) }));
}

export interface TiterInstrument {
  id: number;
  name: string;
  unit: string | null;
}

/** One titer instrument's part in the Average Titer: its highest reading in g/L, or why it is left out. */
export interface TiterSource {
  instrument: TiterInstrument;
  /** The highest reading in g/L; null when it is left out. */
  highestGramsPerLitre: number | null;
  excludedBecause: 'unit' | 'no readings' | null;
}

export interface AverageTiter {
  value: number | null;
  /** Every titer instrument, counted or not, so the card can say what the average is made of. */
  sources: TiterSource[];
  /** True when no instrument counted and the value is the runs' scale_grams / scale_liters. */
  fromRunScale: boolean;
}

/**
 * The dashboard's Average Titer: the mean of the titer instruments' highest readings in g/L, each
 * instrument converted from its own unit and those whose unit is not a mass concentration left
 * out; without any, the mean of scale_grams / scale_liters over the runs that have both; else null.
 */
export function averageTiter(
  series: readonly { instrument: TiterInstrument; readings: readonly Reading[] }[],
  runs: readonly Pick<Run, 'scaleGrams' | 'scaleLiters'>[],
): AverageTiter {
  const sources: TiterSource[] = series.map(({ instrument, readings }) => {
    const converted = titerReadingsInGramsPerLitre(instrument.unit, readings);
    if (converted === null) return { instrument, highestGramsPerLitre: null, excludedBecause: 'unit' };
    const highest = highestReading(converted);
    return { instrument, highestGramsPerLitre: highest, excludedBecause: highest === null ? 'no readings' : null };
  });
  const maxima = sources.map((source) => source.highestGramsPerLitre).filter((value): value is number => value !== null);
  if (maxima.length > 0) return { value: mean(maxima), sources, fromRunScale: false };
  const fromScale = mean(runs.map(scaleTiter).filter((value): value is number => value !== null));
  return { value: fromScale, sources, fromRunScale: fromScale !== null };
}
