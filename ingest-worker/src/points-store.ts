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

/**
 * Recomputes the per-minute rollups of the range from the deduplicated points. Its version comes
 * from a sequence read after the caller's inserts, so the newest recomputation of a minute has seen
 * every write that finished before it. Minutes that no longer hold points get an empty row.
 * `ownRows`, when given, says that only the caller's own rows (versions in [from, to)) can be in the
 * range and each key has one row: then a plain aggregation is exact and much cheaper; this is checked
 * in the database first.
 */
export async function recomputeRollups(
  clickhouse: ClickHouseClient,
  pool: Pool,
  range: RangeOnInstruments,
  ownRows?: { fromVersion: string; toVersion: string },
): Promise<void> {
  if (range.instrumentIds.length === 0) return;
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_rollup_seq')::text AS v");
  const rollupVersion = version(rows[0]!.v);
  const fromMinute = floorToMinute(range.startMs);
  const toMinute = floorToMinute(range.endMs) + MINUTE_MS; // exclusive
  for (let offset = 0; offset < range.instrumentIds.length; offset += ROLLUP_INSTRUMENT_BATCH) {
    const ids = idList(range.instrumentIds.slice(offset, offset + ROLLUP_INSTRUMENT_BATCH));
    const where = `organization_id = ${int(range.organizationId)} AND instrument_id IN (${ids})`;
    let clean = false;
    if (ownRows) {
      const check = await clickhouse.query({
        query: `SELECT count() FROM points WHERE ${where} AND ts >= ${int(fromMinute)} AND ts < ${int(toMinute)}
                AND (version < toUInt64(${version(ownRows.fromVersion)}) OR version >= toUInt64(${version(ownRows.toVersion)}))`,
        format: 'JSONCompact',
      });
      const [row] = (await check.json<[string | number]>()).data;
      clean = row !== undefined && Number(row[0]) === 0;
    }
    const points = clean
      ? `SELECT instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(value)) AS n, ifNull(value, 0) AS s, value AS lo, value AS hi
           FROM points WHERE ${where} AND ts >= ${int(fromMinute)} AND ts < ${int(toMinute)}`
      : `SELECT instrument_id, ${minuteExpr('ts')} AS m, toUInt64(1) AS p, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s, v AS lo, v AS hi
           FROM (SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
                   FROM points WHERE ${where} AND ts >= ${int(fromMinute)} AND ts < ${int(toMinute)}
                  GROUP BY instrument_id, ts)
          WHERE d = 0`;
    await clickhouse.command({
      query: `INSERT INTO points_rollup_1m (organization_id, instrument_id, minute, points, value_count, value_sum, value_min, value_max, version)
        SELECT toUInt64(${int(range.organizationId)}), instrument_id, m, sum(p), sum(n), sum(s), min(lo), max(hi), toUInt64(${rollupVersion})
          FROM (
            ${points}
            UNION ALL
            SELECT instrument_id, minute AS m, toUInt64(0) AS p, toUInt64(0) AS n, toFloat64(0) AS s,
                   CAST(NULL AS Nullable(Float64)) AS lo, CAST(NULL AS Nullable(Float64)) AS hi
              FROM points_rollup_1m WHERE ${where} AND minute >= ${int(fromMinute)} AND minute < ${int(toMinute)}
          )
         GROUP BY instrument_id, m`,
    });
    await recomputeHourlyRollups(clickhouse, pool, where, range);
  }
}

/**
 * Recomputes the hourly rollups of the hours the range touches from the deduplicated minute rollups,
 * with a version taken after the minute rows were written (the newest hourly row saw them all).
 */
async function recomputeHourlyRollups(clickhouse: ClickHouseClient, pool: Pool, where: string, range: RangeOnInstruments): Promise<void> {
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_rollup_seq')::text AS v");
  const hourlyVersion = version(rows[0]!.v);
  const fromHour = floorTo(range.startMs, HOUR_MS);
  const toHour = floorTo(range.endMs, HOUR_MS) + HOUR_MS; // exclusive
  await clickhouse.command({
    query: `INSERT INTO points_rollup_1h (organization_id, instrument_id, hour, points, value_count, value_sum, value_min, value_max, version)
      SELECT toUInt64(${int(range.organizationId)}), instrument_id, h, sum(p), sum(n), sum(s), min(lo), max(hi), toUInt64(${hourlyVersion})
        FROM (
          SELECT instrument_id, ${floorExpr('minute', HOUR_MS)} AS h, p, n, s, lo, hi FROM (
            SELECT instrument_id, minute, argMax(points, version) AS p, argMax(value_count, version) AS n, argMax(value_sum, version) AS s,
                   argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
              FROM points_rollup_1m WHERE ${where} AND minute >= ${int(fromHour)} AND minute < ${int(toHour)}
             GROUP BY instrument_id, minute)
          UNION ALL
          SELECT instrument_id, hour AS h, toUInt64(0) AS p, toUInt64(0) AS n, toFloat64(0) AS s,
                 CAST(NULL AS Nullable(Float64)) AS lo, CAST(NULL AS Nullable(Float64)) AS hi
            FROM points_rollup_1h WHERE ${where} AND hour >= ${int(fromHour)} AND hour < ${int(toHour)}
        )
       GROUP BY instrument_id, h`,
  });
}
