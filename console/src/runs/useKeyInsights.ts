/**
 * The readings behind the Key Insights card: the titer and yield instruments on the
 * equipment of the run's unit operations, read over the run's time span.
 */
import useSWR from 'swr';
import { apiRequest } from '../api/client.ts';
import { meanOfMeans, maxTiter, titerReadingsInGramsPerLitre } from '../entities/run-metrics.ts';
import { readingListSchema, type Instrument, type Reading, type Run, type UnitOperation } from '../entities/types.ts';

/** Enough points per instrument for a faithful maximum and mean; larger ranges come back bucketed. */
export const INSIGHT_READING_LIMIT = 2000;

export function readingsPath(instrumentId: number, startTime: string | null | undefined, endTime: string | null | undefined): string {
  const params = new URLSearchParams({ instrument_id: String(instrumentId), limit: String(INSIGHT_READING_LIMIT) });
  if (startTime) params.set('start_time', startTime);
  if (endTime) params.set('end_time', endTime);
  return `/api/v1/time-series-data?${params.toString()}`;
}

export function fetchReadings(instrumentIds: readonly number[], startTime?: string | null, endTime?: string | null): Promise<Reading[][]> {
  return Promise.all(instrumentIds.map((id) => apiRequest<Reading[]>('GET', readingsPath(id, startTime, endTime), undefined, { schema: readingListSchema })
    .then((readings) => readings ?? [])));
}

export interface KeyInsights {
  maxTiter: number | null;
  yieldPercent: number | null;
  isLoading: boolean;
}

export function useKeyInsights(run: Run | undefined, unitOperations: readonly UnitOperation[] | undefined, instruments: readonly Instrument[] | undefined): KeyInsights {
  const equipmentIds = new Set((unitOperations ?? []).map((operation) => operation.equipmentId).filter((id): id is number => id !== null));
  const onRunEquipment = (instruments ?? []).filter((instrument) => equipmentIds.has(instrument.equipmentId));
  const titerInstruments = onRunEquipment.filter((instrument) => instrument.type === 'titer');
  const titerIds = titerInstruments.map((instrument) => instrument.id);
  const yieldIds = onRunEquipment.filter((instrument) => instrument.type === 'yield').map((instrument) => instrument.id);
  const ready = run !== undefined && unitOperations !== undefined && instruments !== undefined;
  const key = ready ? ['key-insights', run.id, run.startTime, run.endTime, titerIds.join(','), yieldIds.join(',')] : null;

  const { data, isLoading } = useSWR(key, async () => {
    const [titer, yields] = await Promise.all([
      fetchReadings(titerIds, run?.startTime, run?.endTime),
      fetchReadings(yieldIds, run?.startTime, run?.endTime),
    ]);
    return { titer, yields };
  });

  if (!ready || isLoading) return { maxTiter: null, yieldPercent: null, isLoading: true };
  return {
    // In g/L, each instrument from its own unit; one whose unit is not a concentration does not count.
    maxTiter: maxTiter((data?.titer ?? []).flatMap((readings, index) => {
      const converted = titerReadingsInGramsPerLitre(titerInstruments[index]?.unit, readings);
      return converted === null ? [] : [converted];
    }), run),
    yieldPercent: meanOfMeans(data?.yields ?? []),
    isLoading: false,
  };
}
