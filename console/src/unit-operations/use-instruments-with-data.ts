/**
 * Which instruments hold readings in the unit operation's window, with the first and last reading
 * among them (GET /api/v1/unit-operations/{id}/instruments-with-data, counted from the rollups): the
 * parameters, exports and formula references a unit operation offers, and the span its chart is drawn
 * over while its window is open (never start-to-now).
 */
import { useMemo } from 'react';
import { instrumentsWithDataSchema } from '@bioprocess/shared/unit-operation-windows';
import { useApi } from '../api/hooks.ts';
import { toEpochMs } from '../charts/time-axis.ts';

export interface InstrumentsWithData {
  /** null when the request failed: the caller then offers every instrument. */
  ids: ReadonlySet<number> | null;
  readingsById: ReadonlyMap<number, number>;
  earliestMs: number | null;
  latestMs: number | null;
  loading: boolean;
}

/** The answer as the api client hands it over: validated on the wire's snake_case, then camel-cased. */
interface InstrumentsWithDataBody {
  unitOperationId: number;
  firstReading: string | null;
  lastReading: string | null;
  instruments: Array<{ instrumentId: number; name: string; readings: number }>;
}

const msOrNull = (text: string | null) => {
  const ms = toEpochMs(text);
  return Number.isNaN(ms) ? null : ms;
};

/**
 * `followsLive`: the chart of a running operation takes its new readings from the live stream, which
 * fills what a lost connection missed; read again when the network comes back, the data's span would
 * grow and the chart read its whole window again for what the stream already brings.
 */
export function useInstrumentsWithData(unitOperationId: number | null, options: { followsLive?: boolean } = {}): InstrumentsWithData {
  const answer = useApi<InstrumentsWithDataBody>(unitOperationId ? `/api/v1/unit-operations/${unitOperationId}/instruments-with-data` : null, instrumentsWithDataSchema,
    { revalidateOnReconnect: !options.followsLive });
  return useMemo(() => {
    if (answer.error || !answer.data) {
      return { ids: null, readingsById: new Map(), earliestMs: null, latestMs: null, loading: !answer.error && answer.isLoading };
    }
    const body = answer.data;
    return {
      ids: new Set(body.instruments.map((entry) => entry.instrumentId)),
      readingsById: new Map(body.instruments.map((entry) => [entry.instrumentId, entry.readings])),
      earliestMs: msOrNull(body.firstReading),
      latestMs: msOrNull(body.lastReading),
      loading: false,
    };
  }, [answer.data, answer.error, answer.isLoading]);
}

/**
 * The span the chart is drawn over: the unit operation's window when it has an end; while it is open,
 * its data (first to last reading, never before its start), or start-to-now when it holds none yet.
 * null until the data's span is known, so no start-to-now read is made first.
 */
export function chartSpan(
  operation: { startMs: number | null; endMs: number | null },
  data: { earliestMs: number | null; latestMs: number | null; loading: boolean },
  nowMs: number,
): { startMs: number; endMs: number } | null {
  if (operation.startMs !== null && operation.endMs !== null) return { startMs: operation.startMs, endMs: operation.endMs };
  if (data.loading) return null;
  const startMs = operation.startMs === null ? data.earliestMs : Math.max(operation.startMs, data.earliestMs ?? operation.startMs);
  if (startMs === null) return null;
  const endMs = operation.endMs ?? data.latestMs ?? Math.max(nowMs, startMs);
  return { startMs, endMs: Math.max(endMs, startMs) };
}
