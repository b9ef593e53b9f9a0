/**
 * Chart reads: a range's readings, or bucket averages with their extremes when there are more than
 * the limit, read by the rule of points-read.ts (deduplicated, tombstones dropped, whole hours and
 * minutes from the rollups). Buckets narrower than a minute (or not a whole number of minutes) read
 * the points.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Reading } from '@bioprocess/shared/timeseries';
import { floorExpr, HOUR_MS, int, MINUTE_MS } from '@bioprocess/shared/points-sql';
import { ceilTo, coverParts, dedupedPoints, queryRows, storedHours, windowsOn, type PointWindow } from './points-read.ts';

export interface SeriesRequest {
  organizationId: number;
  instrumentIds: number[];
  startMs: number | null;
  endMs: number | null;
  /** A requested bucket width in ms (widened when it would give more than `limit` buckets). */
  bucketMs: number | null;
  limit: number;
}

/** The request's instruments over [startMs, endMs]. */
const windowOf = (request: SeriesRequest, startMs: number, endMs: number): PointWindow[] => windowsOn(request.instrumentIds, [[startMs, endMs]]);

/** Exact number of readings per instrument in the range (the most of any instrument). */
async function maxPointsPerInstrument(clickhouse: ClickHouseClient, request: SeriesRequest, startMs: number, endMs: number): Promise<number> {
  const parts = coverParts(request.organizationId, windowOf(request, startMs, endMs), { coarsest: 'hour', figures: ['p'] });
  const [row] = await queryRows<[string | number]>(clickhouse, `
    SELECT max(total) FROM (
      SELECT instrument_id, sum(p) AS total FROM (${parts.join(' UNION ALL ')}) GROUP BY instrument_id)`);
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
    const stored = await storedHours(clickhouse, request.organizationId, request.instrumentIds);
    if (!stored) return [];
    startMs ??= stored.first;
    endMs ??= stored.last;
  }
  if (endMs < startMs) return [];

  if (request.bucketMs === null && (await maxPointsPerInstrument(clickhouse, request, startMs, endMs)) <= request.limit) {
    const raw = await queryRows<[number, number, number | null]>(clickhouse, `
      SELECT instrument_id, ts, v FROM (${dedupedPoints(request.organizationId, windowOf(request, startMs, endMs))})
       WHERE d = 0 ORDER BY instrument_id, ts LIMIT ${int(request.limit)} BY instrument_id`);
    return raw.map(([instrument, ts, value]) => toReading(instrument, ts, value));
  }

  const width = seriesBucketWidth(startMs, endMs, request.limit, request.bucketMs);
  if (width % MINUTE_MS !== 0) return readBucketsFromPoints(clickhouse, request, startMs, endMs, width);
  const parts = coverParts(request.organizationId, windowOf(request, startMs, endMs), { coarsest: width % HOUR_MS === 0 ? 'hour' : 'minute' });
  const result = await queryRows<[number, number, number | string, number | string, number, number | null, number | null]>(clickhouse, `
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
  const result = await queryRows<BucketRow>(clickhouse, `
    SELECT instrument_id, ${floorExpr('ts', width)} AS bucket, avg(v), min(v), max(v)
      FROM (${dedupedPoints(request.organizationId, windowOf(request, startMs, endMs))})
     WHERE d = 0
     GROUP BY instrument_id, bucket
     ORDER BY instrument_id, bucket
     LIMIT ${int(request.limit)} BY instrument_id`);
  return result.map(([instrument, bucket, avg, min, max]) => toReading(instrument, bucket, avg, min, max));
}
