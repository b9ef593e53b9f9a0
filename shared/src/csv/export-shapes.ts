/**
 * Shapes of real instrument exports that need more than "one row, one value per column":
 * long-format files (one row per series and time, a key column saying which series) and the time
 * base of DASware exports.
 */
import { formatUtcOffset } from './time-zones.ts';

/**
 * The alias of an instrument fed by one key of a long-format file, e.g.
 * 'Presens_data.O2_value (position 7)': the column alone would not tell the 48 reactors apart. With
 * several key columns the key names the series by itself: 'Value (A1 · OD600)'.
 */
export function longFormatAlias(column: string, keyColumns: string | readonly string[], key: string): string {
  const columns = typeof keyColumns === 'string' ? [keyColumns] : keyColumns;
  return columns.length === 1 ? `${column} (${columns[0]} ${key})` : `${column} (${key})`;
}

/** The distinct keys of a long-format key column, in the order the file first shows them, then sorted naturally. */
export function distinctKeys(values: Iterable<string>): string[] {
  const keys = new Set<string>();
  for (const value of values) {
    const key = value.trim();
    if (key !== '') keys.add(key);
  }
  return [...keys].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/**
 * DASware control writes its TrackData and event timestamps in UTC and states the station's offset
 * from UTC as `TimezoneBias` in [CoreInfo], in minutes ahead of UTC (120 for Central European summer
 * time, 60 in winter: the opposite sign of Windows' own Bias). The exports show it: the event
 * "Inoculation started: 7/14/2020 11:46:05 AM (UTC)" carries the timestamp 2020-07-14 11:46:05, and
 * the inoculation clock of the TrackData starts at that row. So a DASware file's timestamps are read
 * as UTC whatever zone the upload names; the bias is reported as the station's offset.
 */
export interface FileTimeBase {
  /** Where the file says its zone-less timestamps are: UTC for DASware exports. */
  zone: 'UTC';
  /** Why: shown to the user next to the timestamps. */
  description: string;
  /** The station's clock offset the file states, in minutes ahead of UTC. */
  stationOffsetMinutes: number;
}

export function dasWareTimeBase(timezoneBiasMinutes: number | null): FileTimeBase | null {
  if (timezoneBiasMinutes === null) return null;
  const offset = timezoneBiasMinutes === 0 ? 'UTC' : `UTC${formatUtcOffset(timezoneBiasMinutes)}`;
  return {
    zone: 'UTC',
    description: `DASware export: timestamps are written in UTC (the station's clock ran at ${offset}, TimezoneBias ${timezoneBiasMinutes})`,
    stationOffsetMinutes: timezoneBiasMinutes,
  };
}
