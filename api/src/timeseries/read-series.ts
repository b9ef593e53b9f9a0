/**
 * Downsampled reads. Every query deduplicates versions per key with argMax (never FINAL) and drops
 * tombstones. Short ranges read `points` directly; when the bucket is a whole number of minutes the
 * interior of the range is read from the per-minute rollups (`points_rollup_1m`) and only the partial
 * minutes at both edges from `points`, which keeps a read over tens of millions of points fast.
 * SQL is built only from validated integers.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Reading } from '@bioprocess/shared/timeseries';

const MINUTE_MS = 60_000;

export interface SeriesRequest {
  organizationId: number;
  instrumentIds: number[];
  startMs: number | null;
  endMs: number | null;
  /** A requested bucket width in ms (widened when it would give more than `limit` buckets). */
  bucketMs: number | null;
  limit: number;
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
  return String(value);
}

/** `ts` rounded down to a multiple of width, also for negative timestamps. */
function floorExpr(column: string, width: number): string {
  // toInt64: ClickHouse 18.16 types modulo(Int64, UInt16) as Int16 and overflows.
  const w = `toInt64(${int(width)})`;
  return `(${column} - modulo(modulo(${column}, ${w}) + ${w}, ${w}))`;
}

const floorTo = (value: number, width: number) => value - (((value % width) + width) % width);

function dedupedPoints(request: SeriesRequest, ranges: Array<[number, number]>): string {
  const rangeFilter = ranges.map(([from, to]) => `(ts >= ${int(from)} AND ts <= ${int(to)})`).join(' OR ');
  return `SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
      FROM points
     WHERE organization_id = ${int(request.organizationId)}
       AND instrument_id IN (${request.instrumentIds.map(int).join(',')})
       AND (${rangeFilter})
     GROUP BY instrument_id, ts`;
}

async function rows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  // JSONCompact (not JSONCompactEachRow, which 18.16 lacks); 64-bit integers arrive as strings.
  const result = await clickhouse.query({ query, format: 'JSONCompact' });
  return (await result.json<T>()).data;
}

interface RangeSummary {
  firstMinute: number;
  lastMinute: number;
  maxPointsPerInstrument: number;
}

/** Point counts per instrument from the rollups (an upper bound: edge minutes count whole). */
async function summarise(clickhouse: ClickHouseClient, request: SeriesRequest): Promise<RangeSummary | null> {
  const filters = [
    `organization_id = ${int(request.organizationId)}`,
    `instrument_id IN (${request.instrumentIds.map(int).join(',')})`,
  ];
  if (request.startMs !== null) filters.push(`minute >= ${int(floorTo(request.startMs, MINUTE_MS))}`);
  if (request.endMs !== null) filters.push(`minute <= ${int(request.endMs)}`);
  const result = await rows<[number | string, number | string, number | string]>(clickhouse, `
    SELECT min(first_minute), max(last_minute), max(total) FROM (
      SELECT instrument_id, min(minute) AS first_minute, max(minute) AS last_minute, sum(p) AS total FROM (
        SELECT instrument_id, minute, argMax(points, version) AS p
          FROM points_rollup_1m WHERE ${filters.join(' AND ')}
         GROUP BY instrument_id, minute
      ) WHERE p > 0 GROUP BY instrument_id
    )`);
  const [first, last, total] = result[0] ?? [];
  if (first === undefined || Number(total) === 0) return null;
  return { firstMinute: Number(first), lastMinute: Number(last), maxPointsPerInstrument: Number(total) };
}

/** The smallest width (at least `minimum`) that splits [start, end] into at most `limit` aligned buckets. */
export function bucketWidthFor(startMs: number, endMs: number, limit: number, minimum: number): number {
  let width = Math.max(minimum, Math.ceil((endMs - startMs + 1) / limit), 1);
  const buckets = (w: number) => Math.floor(endMs / w) - Math.floor(startMs / w) + 1;
  while (buckets(width) > limit) width = Math.ceil(width * 1.01) + 1;
  return width;
}

/** Rounds a width up to whole minutes when that keeps the rollups usable (coarse buckets only). */
function alignToMinutes(width: number): number {
  return width >= MINUTE_MS ? Math.ceil(width / MINUTE_MS) * MINUTE_MS : width;
}

function toReading(instrumentId: number | string, ts: number | string, value: number | null, min?: number | null, max?: number | null): Reading {
  const reading: Reading = { ts: new Date(Number(ts)).toISOString(), instrument_id: Number(instrumentId), value };
  if (min !== undefined) reading.min = min;
  if (max !== undefined) reading.max = max;
  return reading;
}

export async function readSeries(clickhouse: ClickHouseClient, request: SeriesRequest): Promise<Reading[]> {
  if (request.instrumentIds.length === 0) return [];
  const summary = await summarise(clickhouse, request);
  if (!summary) return [];
  const startMs = request.startMs ?? summary.firstMinute;
  const endMs = request.endMs ?? summary.lastMinute + MINUTE_MS - 1;
  if (endMs < startMs) return [];

  const needsBucketing = request.bucketMs !== null || summary.maxPointsPerInstrument > request.limit;
  if (!needsBucketing) {
    const raw = await rows<[number, number, number | null]>(clickhouse, `
      SELECT instrument_id, ts, v FROM (${dedupedPoints(request, [[startMs, endMs]])})
       WHERE d = 0 ORDER BY instrument_id, ts LIMIT ${int(request.limit)} BY instrument_id`);
    return raw.map(([instrument, ts, value]) => toReading(instrument, ts, value));
  }

  let width = bucketWidthFor(startMs, endMs, request.limit, request.bucketMs ?? 1);
  const aligned = alignToMinutes(width);
  if (aligned !== width && bucketWidthFor(startMs, endMs, request.limit, aligned) === aligned) width = aligned;
  return width % MINUTE_MS === 0
    ? readFromRollups(clickhouse, request, startMs, endMs, width)
    : readBucketsFromPoints(clickhouse, request, startMs, endMs, width);
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

async function readFromRollups(clickhouse: ClickHouseClient, request: SeriesRequest, startMs: number, endMs: number, width: number): Promise<Reading[]> {
  // Whole minutes inside [startMs, endMs] come from the rollups; the partial minutes at the edges
  // from the points themselves, so bucket figures are exact for any range.
  const firstWholeMinute = floorTo(startMs + MINUTE_MS - 1, MINUTE_MS);
  const endOfWholeMinutes = floorTo(endMs + 1, MINUTE_MS); // exclusive
  const parts: string[] = [];
  const edges: Array<[number, number]> = [];
  if (firstWholeMinute < endOfWholeMinutes) {
    parts.push(`
      SELECT instrument_id, minute AS t, argMax(points, version) AS p, argMax(value_count, version) AS n,
             argMax(value_sum, version) AS s, argMax(value_min, version) AS lo, argMax(value_max, version) AS hi
        FROM points_rollup_1m
       WHERE organization_id = ${int(request.organizationId)}
         AND instrument_id IN (${request.instrumentIds.map(int).join(',')})
         AND minute >= ${int(firstWholeMinute)} AND minute < ${int(endOfWholeMinutes)}
       GROUP BY instrument_id, minute`);
    if (startMs < firstWholeMinute) edges.push([startMs, firstWholeMinute - 1]);
    if (endOfWholeMinutes <= endMs) edges.push([endOfWholeMinutes, endMs]);
  } else {
    edges.push([startMs, endMs]);
  }
  if (edges.length > 0) {
    parts.push(`
      SELECT instrument_id, ts AS t, toUInt64(1) AS p, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s, v AS lo, v AS hi
        FROM (${dedupedPoints(request, edges)}) WHERE d = 0`);
  }
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
