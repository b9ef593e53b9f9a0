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
import { useLiveSubscription } from '../live/use-live-subscription.ts';
import { patchSeries, removeRange } from '../live/live-series.ts';
import type { LiveState } from '../live/live-client.ts';

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
  /** Whether new points are drawn as they are stored (the live connection is up). */
  live: LiveState;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export function useSeriesWindow(
  instrumentIds: readonly number[], startMs: number | null, endMs: number | null, xRange: XRange | null, errorMessage: string,
  /** Follow the instruments' new points (an active operation): patched in, not read again. */
  follow = false,
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
  // Bumped when live events were missed: the window is read again, over the drawn one.
  const [generation, setGeneration] = useState(0);
  const readGeneration = useRef(0);
  // Live changes that came while an instrument's window was being read, applied to what the read gives.
  const changesWhileReading = useRef(new Map<number, Array<(points: ChartPoint[]) => ChartPoint[]>>());

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
    if (readGeneration.current !== generation) {
      readGeneration.current = generation;
      overviewCache.current.clear();
    }
    const missing = ids.filter((id) => !overviewCache.current.has(id));
    const publish = () => setOverview(new Map(ids.map((id) => [id, overviewCache.current.get(id) ?? []])));
    if (missing.length === 0) {
      publish();
      return;
    }
    // A resync reads the window again under the drawn one, without a spinner.
    if (generation === 0 || overview.size === 0) setLoading(overviewCache.current.size === 0 || ids.every((id) => missing.includes(id)));
    setError(null);
    mapInTurns(missing, async (id) => {
      const points = await fetchInstrumentPoints(id, startMs, startMs, endMs, POINTS_PER_SERIES, controller.signal);
      const changes = changesWhileReading.current.get(id) ?? [];
      changesWhileReading.current.delete(id);
      overviewCache.current.set(id, changes.reduce((patched, change) => change(patched), points));
    })
      .then(() => { publish(); setLoading(false); })
      .catch((cause: unknown) => {
        if (isAbort(cause)) return;
        console.error('Failed to fetch time series data', cause);
        setError(errorMessage);
        setLoading(false);
      });
    return () => controller.abort();
  }, [ids, startMs, endMs, errorMessage, generation]);

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

  /** Applies a live change to the instruments' drawn points, overview and zoomed window alike. */
  const patch = (instruments: readonly number[], update: (id: number, points: ChartPoint[]) => ChartPoint[]) => {
    const changed = new Set(instruments.filter((id) => overviewCache.current.has(id)));
    for (const id of changed) overviewCache.current.set(id, update(id, overviewCache.current.get(id)!));
    for (const id of instruments) {
      if (changed.has(id) || !ids.includes(id)) continue;
      changesWhileReading.current.set(id, [...changesWhileReading.current.get(id) ?? [], (points) => update(id, points)]);
    }
    setOverview((current) => new Map([...current].map(([id, points]) => [id, changed.has(id) ? overviewCache.current.get(id)! : points])));
    setWindowed((current) => current && { ...current, points: new Map([...current.points].map(([id, points]) => [id, changed.has(id) ? update(id, points) : points])) });
  };
  const live = useLiveSubscription(ids, follow && startMs !== null, {
    onPoints: (event) => {
      if (startMs === null) return;
      if (event.readings) {
        patch(event.instrument_ids, (id, points) => patchSeries(points, event.readings!.filter((reading) => reading.instrument_id === id), startMs));
        return;
      }
      // Too many to carry: just that range is read, at the chart's resolution, and put in place.
      const fromMinute = (event.from_ms - startMs) / MINUTE_MS;
      const toMinute = (event.to_ms - startMs) / MINUTE_MS;
      void mapInTurns(event.instrument_ids.filter((id) => ids.includes(id)), async (id) =>
        [id, await fetchInstrumentPoints(id, startMs, Math.max(startMs, event.from_ms), event.to_ms, POINTS_PER_SERIES)] as const)
        .then((entries) => {
          const fetched = new Map(entries);
          patch([...fetched.keys()], (id, points) => mergeWindow(points, fetched.get(id)!, fromMinute, toMinute));
        })
        .catch((cause: unknown) => console.error('Failed to fetch newly stored points', cause));
    },
    onDeletion: (event) => {
      if (startMs !== null) patch(event.instrument_ids, (_id, points) => removeRange(points, event.from_ms, event.to_ms, startMs));
    },
    onResync: () => setGeneration((current) => current + 1),
  });

  const pointsByInstrument = useMemo(() => {
    if (!windowed) return overview;
    const merged = new Map<number, ChartPoint[]>();
    for (const [id, points] of overview) {
      const fine = windowed.points.get(id);
      merged.set(id, fine ? mergeWindow(points, fine, windowed.range.min, windowed.range.max) : points);
    }
    return merged;
  }, [overview, windowed]);

  return { pointsByInstrument, loading, refining, error, live };
}
