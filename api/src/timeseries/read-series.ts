/**
 * Chart reads: a range's readings, or bucket averages with their extremes when there are more than
 * the limit, read by the rule of points-read.ts (deduplicated, tombstones dropped, whole hours and
 * minutes from the rollups). Buckets narrower than a minute (or not a whole number of minutes) read
 * the points.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Reading } from '@bioprocess/shared/timeseries';
import { floorExpr, HOUR_MS, int, MINUTE_MS } from '@bioprocess/shared/points-sql';
import { ceilTo, coverParts, dedupedPoints, queryRows, storedHours, windowsOn, type PointWindow } from './points-read.ts';
import { readingsAsJson } from './readings-json.ts';

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

/**
 * SQL of a read, columns (instrument_id, ts, value), with `withSource` (instrument_id, ts, value,
 * micros, quality, historical), or, when `bucketed`, (instrument_id, ts, value, min, max) with `ts`
 * the bucket's start and `value` its average; ordered by instrument and time.
 */
export interface SeriesStatement {
  sql: string;
  bucketed: boolean;
  withSource: boolean;
}

/**
 * The statement answering the request (null: nothing to read), after the count that chooses raw or
 * bucketed. `withSource`: raw readings come with what their source said (microseconds, quality,
 * historical); buckets have none.
 */
export async function seriesStatement(clickhouse: ClickHouseClient, request: SeriesRequest, withSource = false): Promise<SeriesStatement | null> {
  if (request.instrumentIds.length === 0) return null;
  let startMs = request.startMs;
  let endMs = request.endMs;
  if (startMs === null || endMs === null) {
    const stored = await storedHours(clickhouse, request.organizationId, request.instrumentIds);
    if (!stored) return null;
    startMs ??= stored.first;
    endMs ??= stored.last;
  }
  if (endMs < startMs) return null;

  if (request.bucketMs === null && (await maxPointsPerInstrument(clickhouse, request, startMs, endMs)) <= request.limit) {
    return {
      bucketed: false,
      withSource,
      sql: `SELECT instrument_id, ts, v${withSource ? ', us, q, h' : ''} FROM (${dedupedPoints(request.organizationId, windowOf(request, startMs, endMs), withSource)})
             WHERE d = 0 ORDER BY instrument_id, ts LIMIT ${int(request.limit)} BY instrument_id`,
    };
  }

  const width = seriesBucketWidth(startMs, endMs, request.limit, request.bucketMs);
  if (width % MINUTE_MS !== 0) {
    return {
      bucketed: true,
      withSource: false,
      sql: `SELECT instrument_id, ${floorExpr('ts', width)} AS bucket, avg(v), min(v), max(v)
              FROM (${dedupedPoints(request.organizationId, windowOf(request, startMs, endMs))})
             WHERE d = 0
             GROUP BY instrument_id, bucket
             ORDER BY instrument_id, bucket
             LIMIT ${int(request.limit)} BY instrument_id`,
    };
  }
  const parts = coverParts(request.organizationId, windowOf(request, startMs, endMs), { coarsest: width % HOUR_MS === 0 ? 'hour' : 'minute' });
  return {
    bucketed: true,
    withSource: false,
    sql: `SELECT instrument_id, bucket, if(counted > 0, summed / counted, NULL), low, high FROM (
            SELECT instrument_id, ${floorExpr('t', width)} AS bucket, sum(p) AS total, sum(n) AS counted, sum(s) AS summed, min(lo) AS low, max(hi) AS high
              FROM (${parts.join(' UNION ALL ')})
             GROUP BY instrument_id, bucket
            HAVING total > 0
             ORDER BY instrument_id, bucket
             LIMIT ${int(request.limit)} BY instrument_id)
           ORDER BY instrument_id, bucket`,
  };
}

type ReadingRow = [number | string, number | string, number | null, (number | null)?, (number | null)?];

/** The readings in memory, for a reader that computes on them (derived parameters); routes stream them (streamSeries). */
export async function readSeries(clickhouse: ClickHouseClient, request: SeriesRequest): Promise<Reading[]> {
  const statement = await seriesStatement(clickhouse, request);
  if (!statement) return [];
  const rows = await queryRows<ReadingRow>(clickhouse, statement.sql);
  return rows.map(([instrument, ts, value, min, max]) => {
    const reading: Reading = { ts: new Date(Number(ts)).toISOString(), instrument_id: Number(instrument), value };
    if (statement.bucketed) {
      reading.min = min ?? null;
      reading.max = max ?? null;
    }
    return reading;
  });
}

/**
 * The readings as a JSON array streamed from ClickHouse's answer (readings-json.ts): the api holds a
 * chunk at a time, whatever the answer's size. Raw readings carry what their source said (readings-json.ts
 * names the fields). `onRow` counts the readings sent.
 */
export async function* streamSeries(clickhouse: ClickHouseClient, request: SeriesRequest, onRow?: () => void): AsyncGenerator<Buffer> {
  const statement = await seriesStatement(clickhouse, request, true);
  if (!statement) {
    yield Buffer.from('[]');
    return;
  }
  const { stream } = await clickhouse.exec({ query: `${statement.sql} FORMAT TabSeparated` });
  const text = stream as Readable;
  try {
    yield* readingsAsJson(text, statement.bucketed ? 'bucketed' : statement.withSource ? 'raw-with-source' : 'raw', onRow);
  } finally {
    text.destroy();
  }
}
