/**
 * The statements that write rollups, and the SQL conditions naming the minutes and hours some writes
 * touched. They recompute whole periods, so what they write depends only on what is stored, never on
 * the write that asked for them.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { ROLLUP_HOUR_TABLE, ROLLUP_MINUTE_TABLE } from '@bioprocess/shared/server/clickhouse-tables';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import {
  floorExpr, floorTo, floorToMinute, HOUR_MS, int, MINUTE_MS, minuteExpr, NEWEST_POINT_COLUMNS, newestRollupColumns, oneOf, version,
} from '@bioprocess/shared/points-sql';
import type { RangeOnInstruments } from '../points-store.ts';
import { TABLE_SOURCES, type RollupSources } from './sources.ts';

/** Conditions selecting the minutes and hours that ranges touch, in each table. */
export interface RollupScope {
  points: string;
  minutes: string;
  minutesOfHours: string;
  hours: string;
}

const within = (column: string, from: number, toExclusive: number) => `${column} >= ${int(from)} AND ${column} < ${int(toExclusive)}`;

/**
 * SQL: `column` within the ranges' `bounds` on their instruments. Ranges sharing a window (feeds
 * posting the same seconds, a batch of many instruments) become one condition with their instruments
 * listed: the statement stays short and ClickHouse narrows it by its key, however many writes a flush
 * holds (ClickHouse 18.16 takes seconds to plan a long chain of ORs).
 */
function rangesCondition(ranges: readonly RangeOnInstruments[], column: string, bounds: (range: RangeOnInstruments) => [from: number, toExclusive: number]): string {
  const windows = new Map<string, { organizationId: number; from: number; to: number; instrumentIds: Set<number> }>();
  for (const range of ranges) {
    const [from, to] = bounds(range);
    const key = `${range.organizationId}:${from}:${to}`;
    const window = windows.get(key) ?? { organizationId: range.organizationId, from, to, instrumentIds: new Set<number>() };
    for (const id of range.instrumentIds) window.instrumentIds.add(id);
    windows.set(key, window);
  }
  return [...windows.values()].map((window) =>
    `(organization_id = ${int(window.organizationId)} AND ${oneOf('instrument_id', [...window.instrumentIds])} AND ${within(column, window.from, window.to)})`,
  ).join(' OR ');
}

/** The ranges' whole minutes and hours as SQL conditions. */
export function rollupScope(ranges: readonly RangeOnInstruments[]): RollupScope {
  const minutes = (range: RangeOnInstruments): [number, number] => [floorToMinute(range.startMs), floorToMinute(range.endMs) + MINUTE_MS];
  const hours = (range: RangeOnInstruments): [number, number] => [floorTo(range.startMs, HOUR_MS), floorTo(range.endMs, HOUR_MS) + HOUR_MS];
  return {
    points: rangesCondition(ranges, 'ts', minutes),
    minutes: rangesCondition(ranges, 'minute', minutes),
    minutesOfHours: rangesCondition(ranges, 'minute', hours),
    hours: rangesCondition(ranges, 'hour', hours),
  };
}

/** A rollup version: each drawn after the rows it covers were stored, so a later draw has seen more. */
export async function nextRollupVersion(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ v: string }>("SELECT nextval('time_series_rollup_seq')::text AS v");
  return version(rows[0]!.v);
}

/**
 * A minute in which every key has one row and none is a tombstone: its deduplicated points are its
 * points, so a plain aggregation gives them without the per-key deduplication (a hash of every
 * reading's key, several times the work). Whoever wrote the rows.
 */
const KEYS_ONCE = 'count() = uniqExact(ts) AND max(is_deleted) = 0';
/** Minutes needing deduplication that one recomputation names one by one; with more, it deduplicates its whole scope. */
const MINUTES_TO_DEDUPLICATE_MAX = 200;

/**
 * The minutes of the scope where some key has several rows or a tombstone (a replacement, a deletion,
 * a job written twice), each as a one-minute range; null when there are more than
 * MINUTES_TO_DEDUPLICATE_MAX of them.
 */
async function minutesToDeduplicate(clickhouse: ClickHouseClient, scope: RollupScope, sources: RollupSources): Promise<RangeOnInstruments[] | null> {
  const result = await clickhouse.query({
    query: `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m FROM ${sources.points} WHERE ${scope.points}
             GROUP BY organization_id, instrument_id, m HAVING NOT (${KEYS_ONCE})
             LIMIT ${MINUTES_TO_DEDUPLICATE_MAX + 1}`,
    format: 'JSONCompact',
  });
  const rows = (await result.json<[string, string, string]>()).data;
  if (rows.length > MINUTES_TO_DEDUPLICATE_MAX) return null;
  return rows.map(([organizationId, instrumentId, minute]) => ({
    organizationId: Number(organizationId), instrumentIds: [Number(instrumentId)], startMs: Number(minute), endMs: Number(minute) + MINUTE_MS - 1,
  }));
}

/**
 * Recomputes the minute rollups of the scope from the deduplicated points (per key (organisation,
 * instrument, ts) the row of the highest version, tombstones counting nothing). The one shortcut:
 * minutes whose keys each have one row and no tombstone are aggregated as they are (KEYS_ONCE,
 * checked by the statement that aggregates them); the others, usually none or a few, are deduplicated.
 * A minute whose readings were all deleted keeps a row with no points, replacing the figures it had.
 * `sources` (sources.ts) say where the rows are read; where a row may come more than once (every
 * replica of a cluster) there is no shortcut.
 */
export async function writeMinuteRollups(clickhouse: ClickHouseClient, scope: RollupScope, rollupVersion: string, sources: RollupSources = TABLE_SOURCES): Promise<void> {
  const toDeduplicate = sources.rowsRepeat ? null : await minutesToDeduplicate(clickhouse, scope, sources);
  if (toDeduplicate === null) {
    await writeDeduplicatedMinutes(clickhouse, scope, rollupVersion, sources);
    return;
  }
  const deduplicated = toDeduplicate.length > 0 ? rollupScope(toDeduplicate) : null;
  // Minutes that turned to needing deduplication since the question are left out here and were not
  // named there: the write that changed them recomputes them with a later version.
  await clickhouse.command({
    query: `INSERT INTO ${ROLLUP_MINUTE_TABLE} (organization_id, instrument_id, minute, points, value_count, value_sum, value_min, value_max, version)
      SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, count(), count(value), sum(ifNull(value, toFloat64(0))), min(value), max(value), toUInt64(${rollupVersion})
        FROM ${sources.points} WHERE (${scope.points})${deduplicated ? ` AND NOT (${deduplicated.points})` : ''}
       GROUP BY organization_id, instrument_id, m HAVING ${KEYS_ONCE}`,
  });
  if (deduplicated) await writeDeduplicatedMinutes(clickhouse, deduplicated, rollupVersion, sources);
}

/** The minute rollups of the scope from the deduplicated points, every minute of it. */
async function writeDeduplicatedMinutes(clickhouse: ClickHouseClient, scope: RollupScope, rollupVersion: string, sources: RollupSources): Promise<void> {
  await writeRollupRows(clickhouse, 'minute', rollupVersion, scope.minutes, sources, `
    SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS at, toUInt64(d = 0) AS p, toUInt64(d = 0 AND isNotNull(v)) AS n,
           if(d = 0, ifNull(v, toFloat64(0)), toFloat64(0)) AS s, if(d = 0, v, CAST(NULL AS Nullable(Float64))) AS lo, lo AS hi
      FROM (SELECT organization_id, instrument_id, ts, ${NEWEST_POINT_COLUMNS}
              FROM ${sources.points} WHERE ${scope.points}
             GROUP BY organization_id, instrument_id, ts)`);
}

/**
 * Recomputes the hourly rollups of the hours the scope touches from the deduplicated minute rollups
 * (at most 60 rows per instrument and hour, however many points the hour holds).
 */
export async function writeHourlyRollups(clickhouse: ClickHouseClient, scope: RollupScope, hourlyVersion: string, sources: RollupSources = TABLE_SOURCES): Promise<void> {
  await writeRollupRows(clickhouse, 'hour', hourlyVersion, scope.hours, sources, `
    SELECT organization_id, instrument_id, ${floorExpr('minute', HOUR_MS)} AS at, p, n, s, lo, hi FROM (
      SELECT organization_id, instrument_id, minute, ${newestRollupColumns()}
        FROM ${sources.minuteRollups} WHERE ${scope.minutesOfHours}
       GROUP BY organization_id, instrument_id, minute)`);
}

/**
 * Adds up `parts` (rows of organization_id, instrument_id, at, p, n, s, lo, hi) per period into rollup
 * rows of `rollupVersion`; a period of `periods` with rollups already but no part gets a row with no
 * points, so that it replaces the figures it had (a period read more than once adds nothing).
 */
async function writeRollupRows(
  clickhouse: ClickHouseClient, period: 'minute' | 'hour', rollupVersion: string, periods: string, sources: RollupSources, parts: string,
): Promise<void> {
  const table = period === 'minute' ? ROLLUP_MINUTE_TABLE : ROLLUP_HOUR_TABLE;
  const existing = period === 'minute' ? sources.minuteRollups : sources.hourRollups;
  await clickhouse.command({
    query: `INSERT INTO ${table} (organization_id, instrument_id, ${period}, points, value_count, value_sum, value_min, value_max, version)
      SELECT organization_id, instrument_id, at, sum(p), sum(n), sum(s), min(lo), max(hi), toUInt64(${rollupVersion})
        FROM (
          ${parts}
          UNION ALL
          SELECT organization_id, instrument_id, ${period} AS at, toUInt64(0) AS p, toUInt64(0) AS n, toFloat64(0) AS s,
                 CAST(NULL AS Nullable(Float64)) AS lo, CAST(NULL AS Nullable(Float64)) AS hi
            FROM ${existing} WHERE ${periods}
        )
       GROUP BY organization_id, instrument_id, at`,
  });
}
