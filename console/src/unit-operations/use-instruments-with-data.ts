/**
 * Which instruments logged data during the unit operation, from one cheap downsampled read of the
 * operation's series (limit 1 per instrument), plus the earliest reading, the time axis' anchor when
 * the operation has no start time.
 */
import { useApi } from '../api/hooks.ts';
import { readingListSchema } from '@bioprocess/shared/timeseries';
import type { Reading } from '../charts/series-model.ts';
import { toEpochMs } from '../charts/time-axis.ts';

export interface InstrumentsWithData {
  /** null when the probe failed: the caller then offers every instrument. */
  ids: ReadonlySet<number> | null;
  earliestMs: number | null;
  loading: boolean;
}

export function summariseReadings(readings: readonly Reading[]): { ids: Set<number>; earliestMs: number | null } {
  const ids = new Set<number>();
  let earliest = Number.POSITIVE_INFINITY;
  for (const reading of readings) {
    ids.add(reading.instrumentId);
    const ms = toEpochMs(reading.ts);
    if (!Number.isNaN(ms) && ms < earliest) earliest = ms;
  }
  return { ids, earliestMs: Number.isFinite(earliest) ? earliest : null };
}

export function useInstrumentsWithData(unitOperationId: number | null): InstrumentsWithData {
  const probe = useApi<Reading[]>(unitOperationId ? `/api/v1/unit-operations/${unitOperationId}/time-series-data?limit=1` : null, readingListSchema);
  if (probe.error) return { ids: null, earliestMs: null, loading: false };
  if (!probe.data) return { ids: null, earliestMs: null, loading: probe.isLoading };
  const summary = summariseReadings(probe.data);
  return { ids: summary.ids, earliestMs: summary.earliestMs, loading: false };
}
