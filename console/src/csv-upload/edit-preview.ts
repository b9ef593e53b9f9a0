/**
 * The edit preview: the data already stored for a unit operation, at most 100
 * points fetched and the first 20 time points shown, one column per instrument.
 */
import { CSV_LIMITS } from '@bioprocess/shared/csv/messages';
import type { Reading } from '../charts/series-model.ts';
import { toEpochMs } from '../charts/time-axis.ts';

export const EDIT_PREVIEW_FETCH_LIMIT = CSV_LIMITS.editPreviewFetchLimit;
export const EDIT_PREVIEW_TIME_POINTS = CSV_LIMITS.editPreviewTimePoints;

export interface EditPreviewTable {
  instrumentIds: number[];
  rows: { ts: number; values: Map<number, number | null> }[];
}

export function editPreviewTable(readings: readonly Reading[], timePoints: number = EDIT_PREVIEW_TIME_POINTS): EditPreviewTable {
  const byTime = new Map<number, Map<number, number | null>>();
  const instruments = new Set<number>();
  for (const reading of readings) {
    const ts = toEpochMs(reading.ts);
    if (Number.isNaN(ts)) continue;
    instruments.add(reading.instrumentId);
    const row = byTime.get(ts) ?? new Map<number, number | null>();
    row.set(reading.instrumentId, reading.value);
    byTime.set(ts, row);
  }
  const rows = [...byTime.entries()].sort((a, b) => a[0] - b[0]).slice(0, timePoints).map(([ts, values]) => ({ ts, values }));
  return { instrumentIds: [...instruments].sort((a, b) => a - b), rows };
}
