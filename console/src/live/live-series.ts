/**
 * Drawn series patched by live events, without reading their windows again: stored points go in at
 * their time (appended after the last, or replacing the drawn point at the same time: a late or
 * corrected reading), a point stored empty or a deleted range leaves the series. A downsampled history
 * stays as it was drawn; the raw readings after it are appended as they come.
 */
import type { LiveReading } from '@bioprocess/shared/live';
import { MINUTE_MS } from '../charts/chart-constants.ts';
import type { ChartPoint, Reading } from '../charts/series-model.ts';
import { toEpochMs } from '../charts/time-axis.ts';

/** Minutes are compared after rounding to a millisecond, as the chart's x values are. */
const sameMinute = (a: number, b: number) => Math.abs(a - b) * MINUTE_MS < 0.5;

/** Index of the first point at or after `minute` (points sorted by x). */
function firstAtOrAfter(points: readonly ChartPoint[], minute: number): number {
  let low = 0;
  let high = points.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (points[middle]![0] < minute && !sameMinute(points[middle]![0], minute)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The series with `readings` (one instrument's, epoch ms) put in at their minutes since `startMs`;
 * readings before the start are left out. The array is copied only when something changes.
 */
export function patchSeries(points: readonly ChartPoint[], readings: readonly Pick<LiveReading, 'ts' | 'value'>[], startMs: number): ChartPoint[] {
  let patched: ChartPoint[] | null = null;
  const sorted = [...readings].sort((a, b) => a.ts - b.ts);
  for (const reading of sorted) {
    if (reading.ts < startMs) continue;
    const minute = (reading.ts - startMs) / MINUTE_MS;
    const target: ChartPoint[] = patched ?? points as ChartPoint[];
    const last = target[target.length - 1];
    const drawable = reading.value !== null && Number.isFinite(reading.value);
    // The common case, a reading after the last drawn: appended.
    if (drawable && (!last || (minute > last[0] && !sameMinute(minute, last[0])))) {
      patched ??= [...points];
      patched.push([minute, reading.value!]);
      continue;
    }
    const at = firstAtOrAfter(target, minute);
    const existing = target[at];
    const replaces = existing !== undefined && sameMinute(existing[0], minute);
    if (!drawable && !replaces) continue;
    if (drawable && replaces && existing[1] === reading.value) continue;
    patched ??= [...points];
    if (!drawable) patched.splice(at, 1);
    else if (replaces) patched[at] = [existing[0], reading.value!];
    else patched.splice(at, 0, [minute, reading.value!]);
  }
  return patched ?? points as ChartPoint[];
}

/** The series without its points in [fromMs, toMs]. */
export function removeRange(points: readonly ChartPoint[], fromMs: number, toMs: number, startMs: number): ChartPoint[] {
  const from = (fromMs - startMs) / MINUTE_MS;
  const to = (toMs - startMs) / MINUTE_MS;
  const kept = points.filter(([minute]) => (minute < from && !sameMinute(minute, from)) || (minute > to && !sameMinute(minute, to)));
  return kept.length === points.length ? points as ChartPoint[] : kept;
}

/** Live readings as the api's readings (camelCased, ISO times), for lists kept in that shape (Compare). */
export function liveReadingsAsReadings(readings: readonly LiveReading[]): Reading[] {
  return readings.map((reading) => ({ ts: new Date(reading.ts).toISOString(), instrumentId: reading.instrument_id, value: reading.value }));
}

/** Readings (api shape) with live ones merged in by (instrument, time): replaced, added, or removed when stored empty. */
export function patchReadings(readings: readonly Reading[], live: readonly LiveReading[]): Reading[] {
  const key = (instrumentId: number, ms: number) => `${instrumentId}@${ms}`;
  const byKey = new Map<string, Reading>();
  for (const reading of readings) byKey.set(key(reading.instrumentId, toEpochMs(reading.ts)), reading);
  for (const reading of live) {
    const at = key(reading.instrument_id, reading.ts);
    if (reading.value === null) byKey.delete(at);
    else byKey.set(at, { ts: new Date(reading.ts).toISOString(), instrumentId: reading.instrument_id, value: reading.value });
  }
  return [...byKey.values()].sort((a, b) => toEpochMs(a.ts) - toEpochMs(b.ts));
}

/** Readings (api shape) without those of the instruments in [fromMs, toMs]. */
export function removeReadings(readings: readonly Reading[], instrumentIds: readonly number[], fromMs: number, toMs: number): Reading[] {
  const ids = new Set(instrumentIds);
  return readings.filter((reading) => {
    if (!ids.has(reading.instrumentId)) return true;
    const ms = toEpochMs(reading.ts);
    return ms < fromMs || ms > toMs;
  });
}
