/**
 * Per-minute and per-hour rollups of the points. Three ways to the same figures: a write's own
 * figures stored as they are (only when nothing else is in its minutes), a plain aggregation of its
 * own rows (only when each key is there once), and the deduplicating recomputation from the points.
 * The rule every fast path keeps: it writes exactly what the recomputation would, and it checks in
 * the database, before writing, the condition that makes this so; otherwise it falls back.
 */
import { Readable } from 'node:stream';
import type { MinuteFigure } from '@bioprocess/shared/minute-figures';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { hourFiguresOf, minuteFiguresOf, ROLLUP_COLUMNS, rollupRows } from './rollup-figures.ts';
import { floorExpr, floorTo, floorToMinute, HOUR_MS, idList, int, MINUTE_MS, minuteExpr, version } from '@bioprocess/shared/points-sql';
import { insertRows, type RangeOnInstruments } from './points-store.ts';

/** Instruments per rollup statement: bounds the memory of one deduplicating aggregation. */
const ROLLUP_INSTRUMENT_BATCH = 4;

/** The rows a write may have stored only itself: versions in [fromVersion, toVersion). */
export interface OwnRows {
  fromVersion: string;
  toVersion: string;
}

/** Conditions selecting the minutes and hours that ranges touch, in each table. */
interface RollupScope {
  points: string;
  pointsOfHours: string;
  minutes: string;
  minutesOfHours: string;
  hours: string;
}

const within = (column: string, from: number, toExclusive: number) => `${column} >= ${int(from)} AND ${column} < ${int(toExclusive)}`;
const onInstruments = (range: RangeOnInstruments) => `organization_id = ${int(range.organizationId)} AND instrument_id IN (${idList(range.instrumentIds)})`;

function rollupScope(ranges: readonly RangeOnInstruments[]): RollupScope {
  const anyOf = (condition: (range: RangeOnInstruments) => string) =>
    ranges.map((range) => `(${onInstruments(range)} AND ${condition(range)})`).join(' OR ');
  const minutes = (range: RangeOnInstruments): [number, number] => [floorToMinute(range.startMs), floorToMinute(range.endMs) + MINUTE_MS];
  const hours = (range: RangeOnInstruments): [number, number] => [floorTo(range.startMs, HOUR_MS), floorTo(range.endMs, HOUR_MS) + HOUR_MS];
  return {
    points: anyOf((range) => within('ts', ...minutes(range))),
    pointsOfHours: anyOf((range) => within('ts', ...hours(range))),
    minutes: anyOf((range) => within('minute', ...minutes(range))),
    minutesOfHours: anyOf((range) => within('minute', ...hours(range))),
    hours: anyOf((range) => within('hour', ...hours(range))),
  };
}

const nextRollupVersion = async (pool: Pool) =>
  version((await pool.query<{ v: string }>("SELECT nextval('time_series_rollup_seq')::text AS v")).rows[0]!.v);

/**
 * Recomputes the per-minute rollups of the range from the deduplicated points. Its version comes
 * from a sequence read after the caller's inserts, so the newest recomputation of a minute has seen
 * every write that finished before it. Minutes that no longer hold points get an empty row.
 * `ownRows`, when given, says that only the caller's own rows can be in the range and each key has one
 * row: then a plain aggregation is exact and much cheaper; this is checked in the database first.
 */
export async function recomputeRollups(clickhouse: ClickHouseClient, pool: Pool, range: RangeOnInstruments, ownRows?: OwnRows): Promise<void> {
  if (range.instrumentIds.length === 0) return;
  const minuteVersion = await nextRollupVersion(pool);
  for (let offset = 0; offset < range.instrumentIds.length; offset += ROLLUP_INSTRUMENT_BATCH) {
    const part = { ...range, instrumentIds: range.instrumentIds.slice(offset, offset + ROLLUP_INSTRUMENT_BATCH) };
    const scope = rollupScope([part]);
    const clean = ownRows !== undefined && await holdsOnlyOwnRows(clickhouse, scope, [{ range: part, ownRows }]);
    await writeMinuteRollups(clickhouse, scope, minuteVersion, clean);
    await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(pool));
  }
}

export interface RollupRequest {
  range: RangeOnInstruments;
  /** Points the write stored (bounds how many writes one deduplicating pass takes); the range's seconds when absent. */
  points?: number;
  ownRows?: OwnRows;
  /** The write's own per-minute figures, when it stored each key once (with ownRows). */
  minuteFigures?: readonly MinuteFigure[];
}

/** Points one deduplicating pass over several writes' minutes takes at most: bounds ClickHouse's aggregation memory. */
const UNION_MAX_POINTS = 500_000;

/**
 * Recomputes the rollups of several writes at once, the cheapest way the database allows:
 *   - each stored only its own rows and brought its minute figures: when one query shows that no other
 *     row is in their minutes, the figures are stored as they are (and summed into hours when no other
 *     row is in their hours either), with no aggregation in ClickHouse;
 *   - each stored only its own rows (`ownRows`): one plain aggregation per table covers them all;
 *   - otherwise their minutes are recomputed from the deduplicated points in one pass per table for
 *     as many writes as UNION_MAX_POINTS allows (feeds: consecutive posts of a feed share minutes, so
 *     each post's minutes already hold rows and every flush lands here), and a large write on its own.
 * Writes that may share a key never take the first two ways.
 */
export async function recomputeRollupsTogether(clickhouse: ClickHouseClient, pool: Pool, requests: readonly RollupRequest[]): Promise<void> {
  const writes = requests.filter((request) => request.range.instrumentIds.length > 0);
  const apart = !keysMayOverlap(writes.map((request) => request.range));
  if (writes.length > 0 && apart && writes.every((request) => request.ownRows && request.minuteFigures)) {
    if (await storeOwnFigures(clickhouse, pool, writes as Array<Required<RollupRequest>>)) return;
  }
  if (writes.length > 1 && apart && writes.every((request) => request.ownRows)) {
    const minuteVersion = await nextRollupVersion(pool);
    const scope = rollupScope(writes.map((request) => request.range));
    if (await holdsOnlyOwnRows(clickhouse, scope, writes as Array<Required<RollupRequest>>)) {
      await writeMinuteRollups(clickhouse, scope, minuteVersion, true);
      await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(pool));
      return;
    }
  }
  const large = writes.filter((request) => weightOf(request) > UNION_MAX_POINTS);
  for (const request of large) await recomputeRollups(clickhouse, pool, request.range, request.ownRows);
  let union: RollupRequest[] = [];
  let weight = 0;
  const recomputeUnion = async () => {
    if (union.length === 0) return;
    // Exact whatever the writes share: every key of their minutes is deduplicated (its newest row wins),
    // and the version, drawn after all of them were stored, is above that of any earlier recomputation.
    const minuteVersion = await nextRollupVersion(pool);
    const scope = rollupScope(union.map((request) => request.range));
    await writeMinuteRollups(clickhouse, scope, minuteVersion, false);
    await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(pool));
    union = [];
    weight = 0;
  };
  for (const request of writes) {
    if (weightOf(request) > UNION_MAX_POINTS) continue;
    if (weight + weightOf(request) > UNION_MAX_POINTS) await recomputeUnion();
    union.push(request);
    weight += weightOf(request);
  }
  await recomputeUnion();
}

/** The points a recomputation of the write's minutes reads, about (its own points and its minutes' neighbours). */
function weightOf(request: RollupRequest): number {
  const { range } = request;
  const minutes = (floorToMinute(range.endMs) - floorToMinute(range.startMs)) / MINUTE_MS + 1;
  return Math.max(request.points ?? 0, minutes * 60 * range.instrumentIds.length);
}

/** Whether two ranges share an instrument and overlap in time (they could hold the same key). */
function keysMayOverlap(ranges: readonly RangeOnInstruments[]): boolean {
  return ranges.some((range, index) => ranges.slice(index + 1).some((other) =>
    other.organizationId === range.organizationId && other.startMs <= range.endMs && range.startMs <= other.endMs
    && other.instrumentIds.some((id) => range.instrumentIds.includes(id))));
}

/**
 * Stores the writes' own minute figures as their rollups when no other row is in their minutes, and
 * their hourly sums when none is in their hours either (else the hours are aggregated from the minute
 * rollups); answers false, having written nothing, when another row is in their minutes.
 */
async function storeOwnFigures(clickhouse: ClickHouseClient, pool: Pool, writes: ReadonlyArray<Required<RollupRequest>>): Promise<boolean> {
  // Drawn before the check: a write that lands in these minutes after it sees these rows in its own
  // check, recomputes from the points, and draws a later version, which wins.
  const minuteVersion = await nextRollupVersion(pool);
  const scope = rollupScope(writes.map((write) => write.range));
  const foreign = await foreignRows(clickhouse, scope, writes);
  if (foreign.inMinutes > 0) return false;
  const minutes = minuteFiguresOf(writes.map((write) => ({ organizationId: write.range.organizationId, minutes: write.minuteFigures })));
  await insertRows(clickhouse, 'points_rollup_1m', ROLLUP_COLUMNS('minute'), 'RowBinary', Readable.from([rollupRows(minutes, minuteVersion)]));
  // Drawn after the minute rows are stored, as for any hourly recomputation; the hours are then
  // checked again: a write that landed in them since the first check may already have aggregated
  // them without these minutes, under an earlier version. Only a write landing after this second
  // check can come later, and it sees these rows, aggregates the hours, and draws a later version.
  const hourVersion = await nextRollupVersion(pool);
  if (foreign.inHours === 0 && (await foreignRows(clickhouse, scope, writes)).inHours === 0) {
    await insertRows(clickhouse, 'points_rollup_1h', ROLLUP_COLUMNS('hour'), 'RowBinary', Readable.from([rollupRows(hourFiguresOf(minutes), hourVersion)]));
  } else {
    await writeHourlyRollups(clickhouse, scope, hourVersion);
  }
  return true;
}

/** SQL: the rows that are the writes' own. */
const ownRowsOf = (writes: ReadonlyArray<Required<Pick<RollupRequest, 'range' | 'ownRows'>>>) => writes.map(({ range, ownRows }) =>
  `(${onInstruments(range)} AND version >= toUInt64(${version(ownRows.fromVersion)}) AND version < toUInt64(${version(ownRows.toVersion)}))`).join(' OR ');

/** Rows other than the writes' own in the scope's minutes and in its whole hours. */
async function foreignRows(clickhouse: ClickHouseClient, scope: RollupScope, writes: ReadonlyArray<Required<RollupRequest>>): Promise<{ inMinutes: number; inHours: number }> {
  const check = await clickhouse.query({
    query: `SELECT countIf(${scope.points}), count() FROM points WHERE (${scope.pointsOfHours}) AND NOT (${ownRowsOf(writes)})`,
    format: 'JSONCompact',
  });
  const [row] = (await check.json<[string | number, string | number]>()).data;
  if (!row) throw new Error('the rollup check answered no row');
  return { inMinutes: Number(row[0]), inHours: Number(row[1]) };
}

/** Whether every row in the scope's minutes is one of the writes' own rows. */
async function holdsOnlyOwnRows(clickhouse: ClickHouseClient, scope: RollupScope, writes: ReadonlyArray<Required<Pick<RollupRequest, 'range' | 'ownRows'>>>): Promise<boolean> {
  const check = await clickhouse.query({ query: `SELECT count() FROM points WHERE (${scope.points}) AND NOT (${ownRowsOf(writes)})`, format: 'JSONCompact' });
  const [row] = (await check.json<[string | number]>()).data;
  return row !== undefined && Number(row[0]) === 0;
}

/** `clean`: the scope holds each key once and no deleted row, so the points need no deduplication. */
async function writeMinuteRollups(clickhouse: ClickHouseClient, scope: RollupScope, rollupVersion: string, clean: boolean): Promise<void> {
  const points = clean
    ? `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(value)) AS n, ifNull(value, 0) AS s, value AS lo, value AS hi
         FROM points WHERE ${scope.points}`
    : `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s, v AS lo, v AS hi
         FROM (SELECT organization_id, instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
                 FROM points WHERE ${scope.points}
                GROUP BY organization_id, instrument_id, ts)
        WHERE d = 0`;
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
async function writeHourlyRollups(clickhouse: ClickHouseClient, scope: RollupScope, hourlyVersion: string): Promise<void> {
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
