/**
 * Downsampled reads. Every query deduplicates versions per key with argMax (not FINAL) and drops
 * tombstones. A range is read at three levels: whole hours from `points_rollup_1h`, whole minutes at
 * the edges from `points_rollup_1m`, and the partial minutes at both ends from `points` itself, so
 * figures are exact for any range while a read over months of 1 Hz data deduplicates only a few
 * thousand rows. Buckets narrower than a minute (or not a whole number of minutes) read `points`.
 * SQL is built only from validated integers.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Reading } from '@bioprocess/shared/timeseries';
import { floorExpr, floorTo, HOUR_MS, int, MINUTE_MS, oneOf } from '@bioprocess/shared/points-sql';


export interface SeriesRequest {
  organizationId: number;
  instrumentIds: number[];
  startMs: number | null;
  endMs: number | null;
  /** A requested bucket width in ms (widened when it would give more than `limit` buckets). */
  bucketMs: number | null;
  limit: number;
}

const ceilTo = (value: number, width: number) => floorTo(value + width - 1, width);

export async function rows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  // JSONCompact (not JSONCompactEachRow, which 18.16 lacks); 64-bit integers arrive as strings.
  const result = await clickhouse.query({ query, format: 'JSONCompact' });
  return (await result.json<T>()).data;
}

function scope(request: SeriesRequest): string {
  return `organization_id = ${int(request.organizationId)} AND ${oneOf('instrument_id', request.instrumentIds)}`;
}

export function dedupedPoints(request: SeriesRequest, ranges: Array<[number, number]>): string {
  const rangeFilter = ranges.map(([from, to]) => `(ts >= ${int(from)} AND ts <= ${int(to)})`).join(' OR ');
  return `SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
      FROM points WHERE ${scope(request)} AND (${rangeFilter})
     GROUP BY instrument_id, ts`;
}

/** Rows (instrument_id, t, p, n, s, lo, hi) of one rollup level over [from, to) (exclusive end). */
function rollupPart(request: SeriesRequest, table: 'points_rollup_1m' | 'points_rollup_1h', column: 'minute' | 'hour', from: number, to: number): string {
  return `SELECT instrument_id, ${column} AS t, argMax(points, version) AS p, argMax(value_count, version) AS n,
                 argMax(value_sum, version) AS s, argMax(tuple(value_min), version).1 AS lo, argMax(tuple(value_max), version).1 AS hi
            FROM ${table} WHERE ${scope(request)} AND ${column} >= ${int(from)} AND ${column} < ${int(to)}
           GROUP BY instrument_id, ${column}`;
}

/**
 * The parts (UNION ALL members) covering [startMs, endMs] with the coarsest level `level` allows:
 * 'hour' uses hours, minutes and points; 'minute' minutes and points.
 */
function rangeParts(request: SeriesRequest, startMs: number, endMs: number, level: 'hour' | 'minute'): string[] {
  const parts: string[] = [];
  const rawEdges: Array<[number, number]> = [];
  const minuteSpan = (from: number, to: number) => { // inclusive bounds
    const firstMinute = ceilTo(from, MINUTE_MS);
    const endMinutes = floorTo(to + 1, MINUTE_MS);
    if (firstMinute >= endMinutes) {
      rawEdges.push([from, to]);
      return;
    }
    parts.push(rollupPart(request, 'points_rollup_1m', 'minute', firstMinute, endMinutes));
    if (from < firstMinute) rawEdges.push([from, firstMinute - 1]);
    if (endMinutes <= to) rawEdges.push([endMinutes, to]);
  };
  const firstHour = ceilTo(startMs, HOUR_MS);
  const endHours = floorTo(endMs + 1, HOUR_MS);
  if (level === 'hour' && firstHour < endHours) {
    parts.push(rollupPart(request, 'points_rollup_1h', 'hour', firstHour, endHours));
    if (startMs < firstHour) minuteSpan(startMs, firstHour - 1);
    if (endHours <= endMs) minuteSpan(endHours, endMs);
  } else {
    minuteSpan(startMs, endMs);
  }
  if (rawEdges.length > 0) {
    parts.push(`SELECT instrument_id, ts AS t, toUInt64(1) AS p, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s, v AS lo, v AS hi
                  FROM (${dedupedPoints(request, rawEdges)}) WHERE d = 0`);
  }
  return parts;
}

/** The stored extent of the instruments (from the hourly rollups; whole hours). */
async function extent(clickhouse: ClickHouseClient, request: SeriesRequest): Promise<{ first: number; last: number } | null> {
  const [row] = await rows<[string | number, string | number, string | number]>(clickhouse, `
    SELECT min(hour), max(hour), count() FROM points_rollup_1h WHERE ${scope(request)} AND points > 0`);
  if (!row || Number(row[2]) === 0) return null;
  return { first: Number(row[0]), last: Number(row[1]) + HOUR_MS - 1 };
}

/** Exact number of readings per instrument in the range (the most of any instrument). */
async function maxPointsPerInstrument(clickhouse: ClickHouseClient, request: SeriesRequest, startMs: number, endMs: number): Promise<number> {
  const [row] = await rows<[string | number]>(clickhouse, `
    SELECT max(total) FROM (
      SELECT instrument_id, sum(p) AS total FROM (${rangeParts(request, startMs, endMs, 'hour').join(' UNION ALL ')}) GROUP BY instrument_id)`);
  return row ? Number(row[0]) : 0;
}

/** The smallest width (at least `minimum`) that splits [start, end] into at most `limit` aligned buckets. */
export function bucketWidthFor(startMs: number, endMs: number, limit: number, minimum: number): number {
  let width = Math.max(minimum, Math.ceil((endMs - startMs + 1) / limit), 1);
  const buckets = (w: number) => Math.floor(endMs / w) - Math.floor(startMs / w) + 1;
  while (buckets(width) > limit) width = Math.ceil(width * 1.01) + 1;
  return width;
}

/** Rounds a coarse width up to whole hours or minutes, so rollups can serve it. */
function alignWidth(width: number): number {
  if (width >= HOUR_MS) return ceilTo(width, HOUR_MS);
  if (width >= MINUTE_MS) return ceilTo(width, MINUTE_MS);
  return width;
}

/**
 * The bucket width a bucketed read of [start, end] uses: the smallest that gives at most `limit`
 * buckets (at least `requestedMs`), rounded to whole minutes or hours when that still fits, so the
 * rollups serve it.
 */
export function seriesBucketWidth(startMs: number, endMs: number, limit: number, requestedMs: number | null): number {
  const width = bucketWidthFor(startMs, endMs, limit, requestedMs ?? 1);
  const aligned = alignWidth(width);
  return bucketWidthFor(startMs, endMs, limit, aligned) === aligned ? aligned : width;
}

function toReading(instrumentId: number | string, ts: number | string, value: number | null, min?: number | null, max?: number | null): Reading {
  const reading: Reading = { ts: new Date(Number(ts)).toISOString(), instrument_id: Number(instrumentId), value };
  if (min !== undefined) reading.min = min;
  if (max !== undefined) reading.max = max;
  return reading;
}

export async function readSeries(clickhouse: ClickHouseClient, request: SeriesRequest): Promise<Reading[]> {
  if (request.instrumentIds.length === 0) return [];
  let startMs = request.startMs;
  let endMs = request.endMs;
  if (startMs === null || endMs === null) {
    const stored = await extent(clickhouse, request);
    if (!stored) return [];
    startMs ??= stored.first;
    endMs ??= stored.last;
  }
  if (endMs < startMs) return [];

  if (request.bucketMs === null && (await maxPointsPerInstrument(clickhouse, request, startMs, endMs)) <= request.limit) {
    const raw = await rows<[number, number, number | null]>(clickhouse, `
      SELECT instrument_id, ts, v FROM (${dedupedPoints(request, [[startMs, endMs]])})
       WHERE d = 0 ORDER BY instrument_id, ts LIMIT ${int(request.limit)} BY instrument_id`);
    return raw.map(([instrument, ts, value]) => toReading(instrument, ts, value));
  }

  const width = seriesBucketWidth(startMs, endMs, request.limit, request.bucketMs);
  if (width % MINUTE_MS !== 0) return readBucketsFromPoints(clickhouse, request, startMs, endMs, width);
  const parts = rangeParts(request, startMs, endMs, width % HOUR_MS === 0 ? 'hour' : 'minute');
  const result = await rows<[number, number, number | string, number | string, number, number | null, number | null]>(clickhouse, `
    SELECT instrument_id, ${floorExpr('t', width)} AS bucket, sum(p) AS total, sum(n) AS counted, sum(s), min(lo), max(hi)
      FROM (${parts.join(' UNION ALL ')})
     GROUP BY instrument_id, bucket
    HAVING total > 0
     ORDER BY instrument_id, bucket
     LIMIT ${int(request.limit)} BY instrument_id`);
  return result.map(([instrument, bucket, , counted, sum, min, max]) =>
    toReading(instrument, bucket, Number(counted) > 0 ? sum / Number(counted) : null, min, max));
}

type BucketRow = [number, number, number | null, number | null, number | null];

async function readBucketsFromPoints(clickhouse: ClickHouseClient, request: SeriesRequest, startMs: number, endMs: number, width: number): Promise<Reading[]> {
  const result = await rows<BucketRow>(clickhouse, `
    SELECT instrument_id, ${floorExpr('ts', width)} AS bucket, avg(v), min(v), max(v)
      FROM (${dedupedPoints(request, [[startMs, endMs]])})
     WHERE d = 0
     GROUP BY instrument_id, bucket
     ORDER BY instrument_id, bucket
     LIMIT ${int(request.limit)} BY instrument_id`);
  return result.map(([instrument, bucket, avg, min, max]) => toReading(instrument, bucket, avg, min, max));
}

/** Exact number of stored readings per instrument over the ranges (inclusive bounds), from the rollups where whole. */
export async function countReadings(
  clickhouse: ClickHouseClient,
  scopeOf: { organizationId: number; instrumentIds: number[] },
  ranges: ReadonlyArray<{ startMs: number; endMs: number }>,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>(scopeOf.instrumentIds.map((id) => [id, 0]));
  if (scopeOf.instrumentIds.length === 0 || ranges.length === 0) return counts;
  const request: SeriesRequest = { ...scopeOf, startMs: null, endMs: null, bucketMs: null, limit: 1 };
  const parts = ranges.flatMap((range) => rangeParts(request, range.startMs, range.endMs, 'hour'));
  const result = await rows<[number | string, number | string]>(clickhouse, `
    SELECT instrument_id, sum(p) FROM (${parts.join(' UNION ALL ')}) GROUP BY instrument_id`);
  for (const [instrument, total] of result) counts.set(Number(instrument), Number(total));
  return counts;
}
