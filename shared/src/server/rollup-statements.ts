/**
 * The statements that write the per-minute and per-hour rollups, and the SQL conditions they share:
 * which minutes and hours some writes touch, and which of the points are those writes' own. The ways
 * of choosing between them are in rollups.ts (recomputation) and rollup-chains.ts (composition).
 */
import type { ClickHouseClient } from './clickhouse.ts';
import type { Queryable } from './postgres.ts';
import { floorExpr, floorTo, floorToMinute, HOUR_MS, int, MINUTE_MS, minuteExpr, oneOf, version } from '../points-sql.ts';
import type { RangeOnInstruments } from './points-store.ts';
import { VERSION_SEQ_FACTOR } from '../ingest/versions.ts';

/** The rows a write may have stored only itself: the points of the request accepted with `versionSeq`. */
export interface OwnRows {
  versionSeq: number;
}

/** Conditions selecting the minutes and hours that ranges touch, in each table. */
export interface RollupScope {
  points: string;
  minutes: string;
  minutesOfHours: string;
  hours: string;
}

const within = (column: string, from: number, toExclusive: number) => `${column} >= ${int(from)} AND ${column} < ${int(toExclusive)}`;
const onInstruments = (range: RangeOnInstruments) => `organization_id = ${int(range.organizationId)} AND ${oneOf('instrument_id', range.instrumentIds)}`;

/**
 * SQL: `column` within the ranges' `bounds` on their instruments. Ranges sharing a window (feeds
 * posting the same seconds, a batch of many instruments) become one condition with their instruments
 * listed: the statement stays short and ClickHouse narrows it by its key, however many writes a flush
 * holds.
 */
export function rangesCondition(ranges: readonly RangeOnInstruments[], column: string, bounds: (range: RangeOnInstruments) => [from: number, toExclusive: number]): string {
  const windows = new Map<string, { organizationId: number; from: number; to: number; instrumentIds: Set<number> }>();
  for (const range of ranges) {
    const [from, to] = bounds(range);
    const key = `${range.organizationId}:${from}:${to}`;
    const window = windows.get(key) ?? { organizationId: range.organizationId, from, to, instrumentIds: new Set<number>() };
    for (const id of range.instrumentIds) window.instrumentIds.add(id);
    windows.set(key, window);
  }
  return [...windows.values()].map((window) =>
    `(${onInstruments({ ...window, instrumentIds: [...window.instrumentIds], startMs: window.from, endMs: window.to })} AND ${within(column, window.from, window.to)})`,
  ).join(' OR ');
}

/** The ranges' minutes and hours as SQL conditions. */
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

/** Rollup versions, increasing: each drawn after the rows it covers were stored, so a later draw has seen more. */
export async function nextRollupVersions(db: Queryable, count: number): Promise<string[]> {
  const { rows } = await db.query<{ v: string }>("SELECT nextval('time_series_rollup_seq')::text AS v FROM generate_series(1, $1::integer)", [count]);
  return rows.map((row) => version(row.v)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
}

export const nextRollupVersion = async (db: Queryable) => (await nextRollupVersions(db, 1))[0]!;

/**
 * SQL: the rows that are the writes' own: the points (version suffix 1 and up) of their requests. A
 * version belongs to one request alone, so this names no instrument, and a flush of hundreds of posts
 * is one condition on their versions (ClickHouse 18.16 takes many seconds to plan a long chain of ORs).
 */
export function ownRowsOf(writes: ReadonlyArray<{ ownRows: OwnRows }>): string {
  const requests = [...new Set(writes.map(({ ownRows }) => ownRows.versionSeq))];
  return `(${oneOf(`intDiv(version, toUInt64(${VERSION_SEQ_FACTOR}))`, requests)} AND modulo(version, toUInt64(${VERSION_SEQ_FACTOR})) != 0)`;
}

/** `clean`: the scope holds each key once and no deleted row, so the points need no deduplication. */
export async function writeMinuteRollups(clickhouse: ClickHouseClient, scope: RollupScope, rollupVersion: string, clean: boolean): Promise<void> {
  const points = clean
    ? `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(value)) AS n, ifNull(value, 0) AS s, value AS lo, value AS hi
         FROM points WHERE ${scope.points}`
    // A deleted key counts nothing but still makes its minute's row: a minute with rows in the points
    // always has a rollup row once recomputed (rollup-chains.ts reads no row as none recomputed yet).
    : `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(d = 0) AS p, toUInt64(d = 0 AND isNotNull(v)) AS n,
              if(d = 0, ifNull(v, toFloat64(0)), toFloat64(0)) AS s, if(d = 0, v, CAST(NULL AS Nullable(Float64))) AS lo, lo AS hi
         FROM (SELECT organization_id, instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
                 FROM points WHERE ${scope.points}
                GROUP BY organization_id, instrument_id, ts)`;
  await clickhouse.command({
    query: `INSERT INTO points_rollup_1m (organization_id, instrument_id, minute, points, value_count, value_sum, value_min, value_max, version)
      SELECT organization_id, instrument_id, m, sum(p), sum(n), sum(s), min(lo), max(hi), toUInt64(${rollupVersion})
        FROM (
          ${points}
          UNION ALL
          SELECT organization_id, instrument_id, minute AS m, toUInt64(0) AS p, toUInt64(0) AS n, toFloat64(0) AS s,
                 CAST(NULL AS Nullable(Float64)) AS lo, CAST(NULL AS Nullable(Float64)) AS hi
            FROM points_rollup_1m WHERE ${scope.minutes}
        )
       GROUP BY organization_id, instrument_id, m`,
  });
}

/**
 * Recomputes the hourly rollups of the hours the scope touches from the deduplicated minute rollups,
 * with a version taken after the minute rows were written (the newest hourly row saw them all).
 */
export async function writeHourlyRollups(clickhouse: ClickHouseClient, scope: RollupScope, hourlyVersion: string): Promise<void> {
  await clickhouse.command({
    query: `INSERT INTO points_rollup_1h (organization_id, instrument_id, hour, points, value_count, value_sum, value_min, value_max, version)
      SELECT organization_id, instrument_id, h, sum(p), sum(n), sum(s), min(lo), max(hi), toUInt64(${hourlyVersion})
        FROM (
          SELECT organization_id, instrument_id, ${floorExpr('minute', HOUR_MS)} AS h, p, n, s, lo, hi FROM (
            SELECT organization_id, instrument_id, minute, argMax(points, version) AS p, argMax(value_count, version) AS n,
                   argMax(value_sum, version) AS s, argMax(tuple(value_min), version).1 AS lo, argMax(tuple(value_max), version).1 AS hi
              FROM points_rollup_1m WHERE ${scope.minutesOfHours}
             GROUP BY organization_id, instrument_id, minute)
          UNION ALL
          SELECT organization_id, instrument_id, hour AS h, toUInt64(0) AS p, toUInt64(0) AS n, toFloat64(0) AS s,
                 CAST(NULL AS Nullable(Float64)) AS lo, CAST(NULL AS Nullable(Float64)) AS hi
            FROM points_rollup_1h WHERE ${scope.hours}
        )
       GROUP BY organization_id, instrument_id, h`,
  });
}
