/**
 * Loads instrument series for a chart from the server, which downsamples them: first the whole
 * operation at POINTS_PER_SERIES per instrument, then, whenever the user zooms, the visible range
 * again at the same resolution, merged into the overview. A 10-million-point series therefore never
 * reaches the browser as more than a few thousand points, and zooming in reveals the detail.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { readingListSchema } from '@bioprocess/shared/timeseries';
import { POINTS_PER_SERIES, MINUTE_MS } from './chart-constants.ts';
import { mergeWindow, readingsToPoints, type ChartPoint, type Reading } from './series-model.ts';
import type { XRange } from './TimeSeriesChart.tsx';

export function timeSeriesPath(instrumentId: number, fromMs: number, toMs: number, limit: number): string {
  const query = new URLSearchParams({
    instrument_id: String(instrumentId),
    start_time: new Date(fromMs).toISOString(),
    end_time: new Date(toMs).toISOString(),
    limit: String(limit),
  });
  return `/api/v1/time-series-data?${query.toString()}`;
}

/**
 * Reads at a time for one chart: the api holds each organisation to a few streamed answers at once
 * (its stream budget), so forty instruments fetched together would be refused past the first few.
 */
export const SERIES_READS_AT_ONCE = 2;

/** `work` over the items, at most `atOnce` running, results in the items' order. */
export async function mapInTurns<T, R>(items: readonly T[], work: (item: T) => Promise<R>, atOnce: number = SERIES_READS_AT_ONCE): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  return results;
}

export async function fetchInstrumentPoints(
  instrumentId: number, startMs: number, fromMs: number, toMs: number, limit: number, signal?: AbortSignal,
  options: { roundMinutes?: boolean } = {},
): Promise<ChartPoint[]> {
  const readings = await apiRequest<Reading[]>('GET', timeSeriesPath(instrumentId, fromMs, toMs, limit), undefined, { schema: readingListSchema, signal });
  return readingsToPoints(readings, startMs, toMs, options).filter(([x]) => x >= (fromMs - startMs) / MINUTE_MS);
}

export interface SeriesWindowState {
  pointsByInstrument: Map<number, ChartPoint[]>;
  loading: boolean;
  refining: boolean;
  error: string | null;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export function useSeriesWindow(
  instrumentIds: readonly number[], startMs: number | null, endMs: number | null, xRange: XRange | null, errorMessage: string,
): SeriesWindowState {
  const key = instrumentIds.join(',');
  const ids = useMemo(() => (key ? key.split(',').map(Number) : []), [key]);
  const [overview, setOverview] = useState<Map<number, ChartPoint[]>>(new Map());
  const [windowed, setWindowed] = useState<{ range: XRange; points: Map<number, ChartPoint[]> } | null>(null);
  const [loading, setLoading] = useState(false);
  const [refining, setRefining] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const overviewCache = useRef(new Map<number, ChartPoint[]>());
  const cachedRange = useRef('');

  // The whole operation, per instrument; instruments already loaded are kept when the selection grows.
  useEffect(() => {
    if (startMs === null || endMs === null || ids.length === 0) {
      setOverview(new Map());
      setLoading(false);
      setError(null);
      return;
    }
    // Another time range (the operation was edited) invalidates what was loaded for the old one.
    if (cachedRange.current !== `${startMs}-${endMs}`) {
      overviewCache.current.clear();
      cachedRange.current = `${startMs}-${endMs}`;
    }
    const controller = new AbortController();
    const missing = ids.filter((id) => !overviewCache.current.has(id));
    const publish = () => setOverview(new Map(ids.map((id) => [id, overviewCache.current.get(id) ?? []])));
    if (missing.length === 0) {
      publish();
      return;
    }
    setLoading(overviewCache.current.size === 0 || ids.every((id) => missing.includes(id)));
    setError(null);
    mapInTurns(missing, async (id) => {
      const points = await fetchInstrumentPoints(id, startMs, startMs, endMs, POINTS_PER_SERIES, controller.signal);
      overviewCache.current.set(id, points);
    })
      .then(() => { publish(); setLoading(false); })
      .catch((cause: unknown) => {
        if (isAbort(cause)) return;
        console.error('Failed to fetch time series data', cause);
        setError(errorMessage);
        setLoading(false);
      });
    return () => controller.abort();
  }, [ids, startMs, endMs, errorMessage]);

  // The zoomed range at full resolution.
  useEffect(() => {
    if (!xRange || startMs === null || ids.length === 0) {
      setWindowed(null);
      setRefining(false);
      return;
    }
    const controller = new AbortController();
    const fromMs = startMs + xRange.min * MINUTE_MS;
    const toMs = Math.min(startMs + xRange.max * MINUTE_MS, endMs ?? Date.now());
    setRefining(true);
    mapInTurns(ids, async (id) => [id, await fetchInstrumentPoints(id, startMs, fromMs, toMs, POINTS_PER_SERIES, controller.signal)] as const)
      .then((entries) => { setWindowed({ range: xRange, points: new Map(entries) }); setRefining(false); })
      .catch((cause: unknown) => {
        if (isAbort(cause)) return;
        console.error('Failed to fetch time series data for the zoomed range', cause);
        setRefining(false);
      });
    return () => controller.abort();
  }, [ids, startMs, endMs, xRange]);

  const pointsByInstrument = useMemo(() => {
    if (!windowed) return overview;
    const merged = new Map<number, ChartPoint[]>();
    for (const [id, points] of overview) {
      const fine = windowed.points.get(id);
      merged.set(id, fine ? mergeWindow(points, fine, windowed.range.min, windowed.range.max) : points);
    }
    return merged;
  }, [overview, windowed]);

  return { pointsByInstrument, loading, refining, error };
}
