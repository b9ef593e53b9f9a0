/**
 * The read rule of stored points, in one place: every reader (charts, Analyze, derived parameters,
 * exports, deletion previews) composes these statements instead of restating them.
 *
 * - Deduplication: per key (organisation, instrument, time) the row of the highest version wins and a
 *   tombstone (is_deleted = 1) hides the key. Points and rollups are deduplicated with argMax per key
 *   (NEWEST_POINT_COLUMNS, newestRollupColumns in shared/src/points-sql.ts, which the writer of the
 *   rollups can share); FINAL only where a reader chose it deliberately, each said below.
 * - Levels: a range is read from whole hours of `points_rollup_1h`, whole minutes at its edges from
 *   `points_rollup_1m` and the partial minutes at both ends from `points` itself (splitRange), so its
 *   figures are exact while a read over months of 1 Hz data deduplicates only a few thousand points.
 * - Scope: every statement names its organisation, and its instruments and times as windows that the
 *   tables' key (organisation, instrument, time) serves.
 *
 * SQL is built only from validated integers (shared/src/points-sql.ts), for ClickHouse 18.16 as for
 * current versions: no DateTime64, no query parameters.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { POINTS_TABLE, ROLLUP_HOUR_TABLE, ROLLUP_MINUTE_TABLE } from '@bioprocess/shared/server/clickhouse-tables';
import {
  floorTo, HOUR_MS, int, MINUTE_MS, NEWEST_POINT_COLUMNS, NEWEST_POINT_SOURCE_COLUMNS, newestRollupColumns, oneOf, ROLLUP_FIGURES, type RollupFigureColumn,
} from '@bioprocess/shared/points-sql';

/** An inclusive span of time [from, to] in epoch milliseconds. */
export type Span = readonly [from: number, to: number];

/** Instruments over an inclusive span of time. */
export interface PointWindow {
  instrumentIds: readonly number[];
  from: number;
  to: number;
}

export type RollupLevel = 'minute' | 'hour';

export const ceilTo = (value: number, width: number) => floorTo(value + width - 1, width);

/** The same instruments over each span. */
export const windowsOn = (instrumentIds: readonly number[], spans: readonly Span[]): PointWindow[] =>
  spans.map(([from, to]) => ({ instrumentIds, from, to }));

/** Rows of a query as JSONCompact (18.16 lacks JSONCompactEachRow); 64-bit integers arrive as strings. */
export async function queryRows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  const result = await clickhouse.query({ query, format: 'JSONCompact' });
  return (await result.json<T>()).data;
}

/**
 * SQL: the organisation's rows whose instrument and `column` lie in one of the windows. Windows over
 * the same span become one term with their instruments listed together, and spans of the same
 * instruments share their instrument condition: the statement stays short however many windows a
 * reader asks for, and the primary key serves each term.
 */
export function windowsCondition(organizationId: number, column: string, windows: readonly PointWindow[]): string {
  if (windows.length === 0) throw new Error('no windows to read');
  const bySpan = new Map<string, { span: Span; ids: Set<number> }>();
  for (const { instrumentIds, from, to } of windows) {
    const key = `${int(from)}:${int(to)}`;
    const entry = bySpan.get(key) ?? { span: [from, to] as const, ids: new Set<number>() };
    for (const id of instrumentIds) entry.ids.add(id);
    bySpan.set(key, entry);
  }
  const byInstruments = new Map<string, { ids: number[]; spans: Span[] }>();
  for (const { span, ids } of bySpan.values()) {
    const sorted = [...ids].sort((a, b) => a - b);
    const key = sorted.join(',');
    const entry = byInstruments.get(key) ?? { ids: sorted, spans: [] };
    entry.spans.push(span);
    byInstruments.set(key, entry);
  }
  const terms = [...byInstruments.values()].map(({ ids, spans }) => {
    const times = spans.map(([from, to]) => `${column} >= ${int(from)} AND ${column} <= ${int(to)}`);
    return `(${oneOf('instrument_id', ids)} AND ${times.length === 1 ? times[0] : `(${times.map((time) => `(${time})`).join(' OR ')})`})`;
  });
  return `organization_id = ${int(organizationId)} AND (${terms.join(' OR ')})`;
}

/** The pieces of an inclusive range each level serves; every piece an inclusive span. */
export interface RangeSplit {
  /** Whole hours (from their start to the end of the last). */
  hours: Span[];
  /** Whole minutes not inside those hours. */
  minutes: Span[];
  /** The partial minutes at the ends, read from the points. */
  edges: Span[];
}

/**
 * [startMs, endMs] cut into whole hours (when `coarsest` is 'hour'), whole minutes and partial minutes.
 * Rollup rows are keyed by their period's start, so a span of whole periods selects exactly its rows.
 */
export function splitRange(startMs: number, endMs: number, coarsest: RollupLevel): RangeSplit {
  const split: RangeSplit = { hours: [], minutes: [], edges: [] };
  const minuteSpan = (from: number, to: number) => {
    const firstMinute = ceilTo(from, MINUTE_MS);
    const endMinutes = floorTo(to + 1, MINUTE_MS);
    if (firstMinute >= endMinutes) {
      split.edges.push([from, to]);
      return;
    }
    split.minutes.push([firstMinute, endMinutes - 1]);
    if (from < firstMinute) split.edges.push([from, firstMinute - 1]);
    if (endMinutes <= to) split.edges.push([endMinutes, to]);
  };
  const firstHour = ceilTo(startMs, HOUR_MS);
  const endHours = floorTo(endMs + 1, HOUR_MS);
  if (coarsest === 'hour' && firstHour < endHours) {
    split.hours.push([firstHour, endHours - 1]);
    if (startMs < firstHour) minuteSpan(startMs, firstHour - 1);
    if (endHours <= endMs) minuteSpan(endHours, endMs);
  } else {
    minuteSpan(startMs, endMs);
  }
  return split;
}

/**
 * SQL: the deduplicated points of the windows, columns (instrument_id, ts, v, d); `d = 1` is a deleted
 * key. `withSource` adds what the source said about each (us, q, h: NEWEST_POINT_SOURCE_COLUMNS).
 */
export function dedupedPoints(organizationId: number, windows: readonly PointWindow[], withSource = false): string {
  return `SELECT instrument_id, ts, ${NEWEST_POINT_COLUMNS}${withSource ? `, ${NEWEST_POINT_SOURCE_COLUMNS}` : ''}
      FROM ${POINTS_TABLE} WHERE ${windowsCondition(organizationId, 'ts', windows)}
     GROUP BY instrument_id, ts`;
}

const ROLLUP_TABLES: Record<RollupLevel, { table: string; column: string }> = {
  minute: { table: ROLLUP_MINUTE_TABLE, column: 'minute' },
  hour: { table: ROLLUP_HOUR_TABLE, column: 'hour' },
};

/** SQL: the deduplicated rollup rows of one level whose period starts in the windows, columns (instrument_id, t, ...figures). */
export function dedupedRollups(level: RollupLevel, organizationId: number, windows: readonly PointWindow[], figures: readonly RollupFigureColumn[] = ROLLUP_FIGURES): string {
  const { table, column } = ROLLUP_TABLES[level];
  return `SELECT instrument_id, ${column} AS t, ${newestRollupColumns(figures)}
            FROM ${table} WHERE ${windowsCondition(organizationId, column, windows)}
           GROUP BY instrument_id, ${column}`;
}

const STORED_FIGURES: Record<RollupFigureColumn, string> = { p: 'points', n: 'value_count', s: 'value_sum', lo: 'value_min', hi: 'value_max' };

/**
 * SQL: the minute rollup rows of the windows read FINAL, columns (instrument_id, t, ...figures).
 * Analyze's grids read many minutes of many unit operations (about 20,000 per parameter and unit
 * operation over 14 days): FINAL keeps the newest version of each (instrument, minute), as argMax per
 * key would, and merging the table's sorted parts costs a fraction of grouping every row by its key
 * (docs/analysis.md). Charts keep argMax: they read few rows, and FINAL's merge would cost more there.
 */
export function finalMinuteRollups(organizationId: number, windows: readonly PointWindow[], figures: readonly RollupFigureColumn[] = ROLLUP_FIGURES): string {
  return `SELECT instrument_id, minute AS t, ${figures.map((figure) => `${STORED_FIGURES[figure]} AS ${figure}`).join(', ')}
      FROM ${ROLLUP_MINUTE_TABLE} FINAL WHERE ${windowsCondition(organizationId, 'minute', windows)}`;
}

const READING_FIGURES: Record<RollupFigureColumn, string> = { p: 'toUInt64(1)', n: 'toUInt64(isNotNull(v))', s: 'ifNull(v, 0)', lo: 'v', hi: 'v' };

/** SQL: each standing reading of the windows as a rollup row of its own, columns (instrument_id, t, ...figures). */
export function readingsAsRollupRows(organizationId: number, windows: readonly PointWindow[], figures: readonly RollupFigureColumn[] = ROLLUP_FIGURES): string {
  return `SELECT instrument_id, ts AS t, ${figures.map((figure) => `${READING_FIGURES[figure]} AS ${figure}`).join(', ')}
      FROM (${dedupedPoints(organizationId, windows)}) WHERE d = 0`;
}

export interface CoverOptions {
  /** The coarsest rollups to read: 'hour' reads hours, minutes and points; 'minute' minutes and points. */
  coarsest: RollupLevel;
  figures?: readonly RollupFigureColumn[];
  /** How the minute rollups are deduplicated: argMax per key, or FINAL (Analyze's grids, see finalMinuteRollups). */
  minutes?: 'argMax' | 'final';
}

/**
 * SQL: UNION ALL members, columns (instrument_id, t, ...figures), whose rows together hold each
 * standing reading of the windows exactly once: whole hours and minutes from the rollups, partial
 * minutes from the points. `t` is the start of the row's period (or the reading's time).
 */
export function coverParts(organizationId: number, windows: readonly PointWindow[], options: CoverOptions): string[] {
  const figures = options.figures ?? ROLLUP_FIGURES;
  const pieces: Record<keyof RangeSplit, PointWindow[]> = { hours: [], minutes: [], edges: [] };
  for (const window of windows) {
    const split = splitRange(window.from, window.to, options.coarsest);
    for (const level of ['hours', 'minutes', 'edges'] as const) pieces[level].push(...windowsOn(window.instrumentIds, split[level]));
  }
  const parts: string[] = [];
  if (pieces.hours.length > 0) parts.push(dedupedRollups('hour', organizationId, pieces.hours, figures));
  if (pieces.minutes.length > 0) {
    parts.push(options.minutes === 'final'
      ? finalMinuteRollups(organizationId, pieces.minutes, figures)
      : dedupedRollups('minute', organizationId, pieces.minutes, figures));
  }
  if (pieces.edges.length > 0) parts.push(readingsAsRollupRows(organizationId, pieces.edges, figures));
  return parts;
}

/** Exact number of standing readings per instrument over the spans (inclusive), from the rollups where whole. */
export async function countReadings(
  clickhouse: ClickHouseClient,
  scope: { organizationId: number; instrumentIds: number[] },
  spans: ReadonlyArray<{ startMs: number; endMs: number }>,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>(scope.instrumentIds.map((id) => [id, 0]));
  if (scope.instrumentIds.length === 0 || spans.length === 0) return counts;
  const parts = coverParts(scope.organizationId, windowsOn(scope.instrumentIds, spans.map(({ startMs, endMs }) => [startMs, endMs])), { coarsest: 'hour', figures: ['p'] });
  const result = await queryRows<[number | string, number | string]>(clickhouse, `
    SELECT instrument_id, sum(p) FROM (${parts.join(' UNION ALL ')}) GROUP BY instrument_id`);
  for (const [instrument, total] of result) counts.set(Number(instrument), Number(total));
  return counts;
}

/** Standing readings per hour (the start of each hour holding some), from the deduplicated hourly rollups. */
export async function readingsPerHour(clickhouse: ClickHouseClient, organizationId: number, instrumentIds: readonly number[], span: Span): Promise<Array<[hour: number, readings: number]>> {
  const hours = windowsOn(instrumentIds, [[floorTo(span[0], HOUR_MS), span[1]]]);
  const result = await queryRows<[string | number, string | number]>(clickhouse, `
    SELECT t, sum(p) FROM (${dedupedRollups('hour', organizationId, hours, ['p'])})
     GROUP BY t ORDER BY t`);
  return result.map(([hour, readings]) => [Number(hour), Number(readings)]);
}

/**
 * The hours the instruments hold rows in, whole (from the hourly rollups; an hour any version of
 * which counted readings, so an hour emptied since may widen it).
 */
export async function storedHours(clickhouse: ClickHouseClient, organizationId: number, instrumentIds: readonly number[]): Promise<{ first: number; last: number } | null> {
  const [row] = await queryRows<[string | number, string | number, string | number]>(clickhouse, `
    SELECT min(hour), max(hour), count() FROM ${ROLLUP_HOUR_TABLE}
     WHERE organization_id = ${int(organizationId)} AND ${oneOf('instrument_id', instrumentIds)} AND points > 0`);
  if (!row || Number(row[2]) === 0) return null;
  return { first: Number(row[0]), last: Number(row[1]) + HOUR_MS - 1 };
}

/** The first and last time of any row of the instrument (tombstones included: what a deletion of all of it must span). */
export async function storedSpan(clickhouse: ClickHouseClient, organizationId: number, instrumentId: number): Promise<Span | null> {
  const [row] = await queryRows<[string | number, string | number, string | number]>(clickhouse, `
    SELECT count(), min(ts), max(ts) FROM ${POINTS_TABLE} WHERE organization_id = ${int(organizationId)} AND instrument_id = ${int(instrumentId)}`);
  if (!row || Number(row[0]) === 0) return null;
  return [Number(row[1]), Number(row[2])];
}

/**
 * The newest version among the hourly rollups of the instruments and their number ("0" when they hold
 * none): it changes whenever any of their readings does, since every write or deletion rewrites the
 * hours it touches under a version drawn after the data.
 */
export async function hourlyRollupsVersion(clickhouse: ClickHouseClient, organizationId: number, instrumentIds: readonly number[]): Promise<string> {
  if (instrumentIds.length === 0) return '0';
  const [row] = await queryRows<[string, string]>(clickhouse,
    `SELECT toString(max(version)), toString(count()) FROM ${ROLLUP_HOUR_TABLE}
      WHERE organization_id = ${int(organizationId)} AND ${oneOf('instrument_id', instrumentIds)}`);
  return row ? `${row[0]}/${row[1]}` : '0';
}

/**
 * SQL: every stored row (all versions, tombstones too) of the instruments over the span, columns
 * (ts, instrument_id, value, is_deleted, ts_micros, quality, historical), ordered by time, instrument and version: the newest version
 * of a key is the last of its adjacent rows. The reader deduplicates as it streams: keep each key's
 * last row, drop it when it is a tombstone (exports/point-source.ts). ClickHouse only sorts; a GROUP BY
 * with argMax over millions of keys costs it several times more, and would hold the whole window.
 */
export function pointVersionsInKeyOrder(organizationId: number, instrumentIds: readonly number[], span: Span): string {
  return `SELECT ts, instrument_id, value, is_deleted, ts_micros, quality, historical FROM ${POINTS_TABLE}
     WHERE ${windowsCondition(organizationId, 'ts', windowsOn(instrumentIds, [span]))}
     ORDER BY ts, instrument_id, version`;
}

/**
 * SQL: the standing readings of the instruments over the span, columns (ts, instrument_id, value,
 * ts_micros, quality, historical: the newest version's, as the value), read FINAL, in no promised order (each part's key order: per instrument rising in time). FINAL merges the
 * table's parts in their key order and keeps each key's newest version, NULL values included, without
 * sorting: the raw CSV export reads millions of rows this way, and sorts runs itself. Tombstones are
 * dropped after that merge, never before it (a filter inside would let an older version stand).
 */
export function standingReadingsFinal(organizationId: number, instrumentIds: readonly number[], span: Span): string {
  return `SELECT ts, instrument_id, value, ts_micros, quality, historical
      FROM (SELECT ts, instrument_id, value, is_deleted, ts_micros, quality, historical FROM ${POINTS_TABLE} FINAL
             WHERE ${windowsCondition(organizationId, 'ts', windowsOn(instrumentIds, [span]))})
     WHERE is_deleted = 0`;
}
