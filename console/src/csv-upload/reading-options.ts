/**
 * How the wizard reads a file beyond its columns: the time zone it will use (and why), the first
 * timestamps as that zone makes them, fill forward remembered per instrument alias, the long-format
 * split by one key column or several together into one instrument per key, and the row filters
 * that leave calibrators, controls and blanks out.
 */
import {
  createTimestampParser, hasOwnUtcOffset, leavesOut, longFormatAlias, parseTimeZone, rowKey, type FileTimeBase, type RowFilter, type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import type { CsvMapping } from '@bioprocess/shared/timeseries';
import { conversionOf, matchInstrument, type ColumnConversion, type KnownInstrument } from './column-mapping.ts';

export interface ZoneChoice {
  /** The zone zone-less timestamps are read in. */
  zone: string;
  /** 'file': the file says (the user cannot change it); 'user': the wizard's choice, starting at the organisation's zone. */
  source: 'file' | 'user';
  /** Shown beside the zone. */
  description: string;
}

/** The zone the upload will use: the file's when it states one, else the user's choice (the organisation's zone by default). */
export function chooseZone(options: { timeBase: FileTimeBase | null; samples: readonly string[]; chosen: string; organizationZone: string }): ZoneChoice {
  if (options.timeBase) return { zone: options.timeBase.zone, source: 'file', description: options.timeBase.description };
  const written = options.samples.filter((value) => value.trim() !== '');
  if (written.length > 0 && written.every(hasOwnUtcOffset)) {
    return { zone: 'UTC', source: 'file', description: 'Every timestamp carries its own UTC offset' };
  }
  const isDefault = options.chosen === options.organizationZone;
  return { zone: options.chosen, source: 'user', description: isDefault ? "The organisation's time zone" : 'Chosen for this file' };
}

export interface TimestampPreview {
  raw: string;
  /** The instant in UTC, 'yyyy-MM-dd HH:mm:ss UTC', or null when the value does not read. */
  utc: string | null;
}

/** The first values of the timestamp column with the instants the upload will store for them. */
export function previewTimestamps(values: readonly string[], detection: TimestampDetection | null, zone: string, count = 3): TimestampPreview[] {
  const timeZone = parseTimeZone(zone);
  const parse = detection && timeZone ? createTimestampParser(detection, { timeZone }) : null;
  let previous = Number.NEGATIVE_INFINITY;
  return values.filter((value) => value.trim() !== '').slice(0, count).map((raw) => {
    const instant = parse ? parse(raw, previous) : null;
    if (instant === null || Number.isNaN(instant)) return { raw, utc: null };
    previous = instant;
    return { raw, utc: `${new Date(instant).toISOString().slice(0, 19).replace('T', ' ')} UTC` };
  });
}

/** Every zone the browser knows, UTC first. */
export function timeZoneOptions(current: readonly string[] = []): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  const known = intl.supportedValuesOf ? intl.supportedValuesOf('timeZone') : [];
  return [...new Set(['UTC', ...current.filter((zone) => zone !== ''), ...known])];
}

// --- Fill forward, remembered per instrument alias -----------------------------------------------

const FILL_FORWARD_PREFIX = 'bioprocess.csv.fill-forward:';

type KeyValueStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

function storage(): KeyValueStore | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/** True when fill forward was on the last time one of these aliases was uploaded. */
export function recallFillForward(aliases: readonly string[], store: KeyValueStore | null = storage()): boolean {
  return store !== null && aliases.some((alias) => store.getItem(FILL_FORWARD_PREFIX + alias) === '1');
}

export function rememberFillForward(aliases: readonly string[], on: boolean, store: KeyValueStore | null = storage()): void {
  if (!store) return;
  for (const alias of aliases) {
    if (on) store.setItem(FILL_FORWARD_PREFIX + alias, '1');
    else store.removeItem(FILL_FORWARD_PREFIX + alias);
  }
}

// --- Long format -------------------------------------------------------------------------------

export interface LongFormatSeries {
  column: string;
  key: string;
  alias: string;
  /** The instrument fed by this column and key, when one exists (matched by alias or name). */
  instrument: KnownInstrument | null;
}

/** The series a long-format upload makes: each value column for each picked key (a composite key joined, `A1 · OD600`). */
export function longFormatSeries(valueColumns: readonly string[], keyColumns: readonly string[], keys: readonly string[], instruments: readonly KnownInstrument[]): LongFormatSeries[] {
  return valueColumns.flatMap((column) => keys.map((key) => {
    const alias = longFormatAlias(column, keyColumns, key);
    return { column, key, alias, instrument: matchInstrument(alias, instruments) };
  }));
}

/** The mapping of a long-format upload, or null while a series still lacks its instrument. */
export function buildLongFormatMapping(options: {
  timestampColumn: string; keyColumns: readonly string[]; series: readonly LongFormatSeries[]; fillForward: ReadonlySet<string>;
  timestampMode: CsvMapping['timestamp_mode']; elapsedUnit: CsvMapping['elapsed_unit']; replaceExisting: boolean; timeZone: string;
  conversions?: ReadonlyMap<string, ColumnConversion>;
}): CsvMapping | null {
  if (options.keyColumns.length === 0 || options.series.length === 0 || options.series.some((entry) => entry.instrument === null)) return null;
  return {
    timestamp_column: options.timestampColumn,
    timestamp_mode: options.timestampMode,
    ...(options.timestampMode === 'elapsed' ? { elapsed_unit: options.elapsedUnit } : {}),
    time_zone: options.timeZone,
    ...(options.keyColumns.length === 1 ? { key_column: options.keyColumns[0] } : { key_columns: [...options.keyColumns] }),
    columns: options.series.map((entry) => ({
      column: entry.column, key: entry.key, instrument_id: entry.instrument!.id, fill_forward: options.fillForward.has(entry.column),
      ...conversionOf(options.conversions, entry.column),
    })),
    replace_existing: options.replaceExisting,
  };
}

// --- Row filters -------------------------------------------------------------------------------

/** A filter as the editor holds it: the values as typed (`Calibrator, Control`). */
export interface RowFilterDraft {
  column: string;
  operator: RowFilter['operator'];
  values: string;
}

export function draftOf(filter: RowFilter): RowFilterDraft {
  return { column: filter.column, operator: filter.operator, values: filter.values.join(', ') };
}

/** The upload's row filters: the drafts with a column and at least one value. */
export function rowFiltersOf(drafts: readonly RowFilterDraft[]): RowFilter[] {
  return drafts.flatMap((draft) => {
    const values = [...new Set(draft.values.split(',').map((value) => value.trim()).filter((value) => value !== ''))];
    return draft.column && values.length > 0 ? [{ column: draft.column, operator: draft.operator, values }] : [];
  });
}

/** How many of the preview's rows the filters leave out (the server counts the whole file). */
export function previewLeftOut(headers: readonly string[], rows: readonly (readonly string[])[], filters: readonly RowFilter[]): number {
  const indexed = filters.map((filter) => ({ filter, index: headers.indexOf(filter.column) })).filter((entry) => entry.index !== -1);
  if (indexed.length === 0) return 0;
  return rows.filter((row) => indexed.some(({ filter, index }) => leavesOut(filter, row[index] ?? ''))).length;
}

/** Times the preview rows already repeat for one series (a wide row's time, or a long row's key and time). */
export interface PreviewDuplicates {
  /** Times written more than once (per key in long format). */
  count: number;
  /** The first such time, as written. */
  firstTime: string | null;
}

/**
 * The duplicates the preview shows: the wizard then offers the choice the server applies to the whole
 * file (which also finds times that only repeat after reading, such as two rows in one minute).
 */
export function previewDuplicates(rows: readonly (readonly string[])[], timestampIndex: number, keyIndexes: readonly number[]): PreviewDuplicates {
  if (timestampIndex < 0) return { count: 0, firstTime: null };
  const seen = new Map<string, number>();
  let firstTime: string | null = null;
  let count = 0;
  for (const row of rows) {
    const time = (row[timestampIndex] ?? '').trim();
    if (time === '') continue;
    const key = keyIndexes.length > 0 ? `${rowKey(row, keyIndexes)}\u0000${time}` : time;
    const times = (seen.get(key) ?? 0) + 1;
    seen.set(key, times);
    if (times === 2) {
      count += 1;
      firstTime ??= time;
    }
  }
  return { count, firstTime };
}

/** The wizard's missing-values field (`-9999, OVER`) as the upload's list. */
export function parseMissingValues(text: string): string[] {
  return [...new Set(text.split(/[,;\s]+/).map((value) => value.trim()).filter((value) => value !== ''))];
}
