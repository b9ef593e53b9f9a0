/**
 * ClickHouse writes of the ingest-worker: point inserts as TSV streams (the fastest path with
 * Debian's 18.16), range tombstones, and per-minute rollup recomputation.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { floorExpr, floorTo, floorToMinute, HOUR_MS, idList, int, MINUTE_MS, minuteExpr, version } from './sql.ts';
import { tombstoneVersion } from './versions.ts';

/** Inserts TSV lines `organization_id\tinstrument_id\tts\tvalue\tversion\tis_deleted\n` (value `\N` for null). */
export async function insertPointsTsv(clickhouse: ClickHouseClient, tsv: string | Readable): Promise<void> {
  const values = typeof tsv === 'string' ? Readable.from([tsv], { objectMode: false }) : tsv;
  await clickhouse.insert({ table: 'points', values, format: 'TabSeparated' });
}

export interface RangeOnInstruments {
  organizationId: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/** Tombstones (with the request's tombstone version) over every existing key of the range. */
export async function writeTombstones(clickhouse: ClickHouseClient, range: RangeOnInstruments, versionSeq: number): Promise<void> {
  const tombstone = version(tombstoneVersion(versionSeq));
  await clickhouse.command({
    query: `INSERT INTO points (organization_id, instrument_id, ts, value, version, is_deleted)
      SELECT organization_id, instrument_id, ts, CAST(NULL AS Nullable(Float64)), toUInt64(${tombstone}), toUInt8(1)
        FROM points
       WHERE organization_id = ${int(range.organizationId)} AND instrument_id IN (${idList(range.instrumentIds)})
         AND ts >= ${int(range.startMs)} AND ts <= ${int(range.endMs)}
       GROUP BY organization_id, instrument_id, ts
      HAVING max(version) < toUInt64(${tombstone})`,
  });
}

export interface DeletionRecord {
  versionSeq: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/**
 * Deletions accepted after `versionSeq` that overlap the range. A write re-applies them after its own
 * insert: either the deletion's job already ran (and missed these rows) or it will run later; both
 * ways the later-accepted deletion wins.
 */
export async function laterDeletions(pool: Pool, range: RangeOnInstruments, versionSeq: number): Promise<DeletionRecord[]> {
  const { rows } = await pool.query(
    `SELECT version_seq, instrument_ids, start_ms, end_ms FROM time_series_deletions
      WHERE organization_id = $1 AND version_seq > $2 AND instrument_ids && $3::bigint[]
        AND start_ms <= $5 AND end_ms >= $4
      ORDER BY version_seq`,
    [range.organizationId, versionSeq, range.instrumentIds, range.startMs, range.endMs],
  );
  return rows.map((row) => ({
    versionSeq: Number(row.version_seq),
    instrumentIds: (row.instrument_ids as Array<string | number>).map(Number),
    startMs: Number(row.start_ms),
    endMs: Number(row.end_ms),
  }));
}

export async function applyLaterDeletions(clickhouse: ClickHouseClient, pool: Pool, range: RangeOnInstruments, versionSeq: number): Promise<number> {
  const deletions = await laterDeletions(pool, range, versionSeq);
  for (const deletion of deletions) {
    const instrumentIds = deletion.instrumentIds.filter((id) => range.instrumentIds.includes(id));
    await writeTombstones(clickhouse, {
      organizationId: range.organizationId,
      instrumentIds,
      startMs: Math.max(deletion.startMs, range.startMs),
      endMs: Math.min(deletion.endMs, range.endMs),
    }, deletion.versionSeq);
  }
  return deletions.length;
}

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
  ownRows?: OwnRows;
}

/**
 * Recomputes the rollups of several writes at once. When each stored only its own rows (`ownRows`,
 * checked in the database for all of them in one query) and no two of them can share a key, one
 * plain aggregation per table covers them all; otherwise each is recomputed on its own.
 */
export async function recomputeRollupsTogether(clickhouse: ClickHouseClient, pool: Pool, requests: readonly RollupRequest[]): Promise<void> {
  const writes = requests.filter((request) => request.range.instrumentIds.length > 0);
  if (writes.length > 1 && writes.every((request) => request.ownRows) && !keysMayOverlap(writes.map((request) => request.range))) {
    const minuteVersion = await nextRollupVersion(pool);
    const scope = rollupScope(writes.map((request) => request.range));
    if (await holdsOnlyOwnRows(clickhouse, scope, writes as Array<Required<RollupRequest>>)) {
      await writeMinuteRollups(clickhouse, scope, minuteVersion, true);
      await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(pool));
      return;
    }
  }
  for (const request of writes) await recomputeRollups(clickhouse, pool, request.range, request.ownRows);
}

/** Whether two ranges share an instrument and overlap in time (they could hold the same key). */
function keysMayOverlap(ranges: readonly RangeOnInstruments[]): boolean {
  return ranges.some((range, index) => ranges.slice(index + 1).some((other) =>
    other.organizationId === range.organizationId && other.startMs <= range.endMs && range.startMs <= other.endMs
    && other.instrumentIds.some((id) => range.instrumentIds.includes(id))));
}

/** Whether every row in the scope's minutes is one of the writes' own rows. */
async function holdsOnlyOwnRows(clickhouse: ClickHouseClient, scope: RollupScope, writes: ReadonlyArray<Required<RollupRequest>>): Promise<boolean> {
  const own = writes.map(({ range, ownRows }) =>
    `(${onInstruments(range)} AND version >= toUInt64(${version(ownRows.fromVersion)}) AND version < toUInt64(${version(ownRows.toVersion)}))`).join(' OR ');
  const check = await clickhouse.query({ query: `SELECT count() FROM points WHERE (${scope.points}) AND NOT (${own})`, format: 'JSONCompact' });
  const [row] = (await check.json<[string | number]>()).data;
  return row !== undefined && Number(row[0]) === 0;
}

/** `clean`: the scope holds each key once and no deleted row, so the points need no deduplication. */
async function writeMinuteRollups(clickhouse: ClickHouseClient, scope: RollupScope, rollupVersion: string, clean: boolean): Promise<void> {
  const points = clean
    ? `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(value)) AS n, ifNull(value, 0) AS s, value AS lo, value AS hi
         FROM points WHERE ${scope.points}`
    : `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s, v AS lo, v AS hi
         FROM (SELECT organization_id, instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
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
                   argMax(value_sum, version) AS s, argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
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
