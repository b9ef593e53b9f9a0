/**
 * Resampling of aligned unit operations onto a common grid, in ClickHouse: grid index
 * g = floor((t - time zero) / step), each unit operation's value in a cell is the average of its
 * readings there (deduplicated by version, tombstones dropped, only inside its window). A step of
 * whole minutes reads the minute rollups (and the raw points of the partial minutes at the window's
 * ends); for it the grid is anchored at time zero rounded down to the minute, so every minute falls
 * in exactly one cell and the averages stay exact. The envelope statistics over the runs are computed
 * by ClickHouse too. SQL is built only from validated integers and finite numbers.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Band } from '@bioprocess/shared/analysis';
import { floorExpr, floorTo, int } from '@bioprocess/shared/points-sql';
import { dedupedPoints, rows, type SeriesRequest } from '../timeseries/read-series.ts';

const MINUTE_MS = 60_000;

/** One unit operation on the grid: its window, its time zero and the instrument of each parameter (by index). */
export interface GridMember {
  unitOperationId: number;
  startMs: number;
  endMs: number;
  timeZeroMs: number;
  /** [instrument id, parameter index] */
  instruments: Array<[number, number]>;
}

export const usesMinuteRollups = (stepMs: number) => stepMs % MINUTE_MS === 0;

/** The instant grid index 0 starts at, for a time zero and step. */
export const gridOrigin = (timeZeroMs: number, stepMs: number) => (usesMinuteRollups(stepMs) ? floorTo(timeZeroMs, MINUTE_MS) : timeZeroMs);

function finite(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(value);
}

/**
 * Rows (instrument_id, t, n, s) covering [startMs, endMs]: whole minutes from the minute rollups (only
 * the count and sum the averages need, which halves the deduplication work of a full rollup read),
 * the partial minutes at both ends from the points.
 */
function minuteParts(request: SeriesRequest, startMs: number, endMs: number): string[] {
  const firstMinute = floorTo(startMs + MINUTE_MS - 1, MINUTE_MS);
  const endMinutes = floorTo(endMs + 1, MINUTE_MS);
  const scope = `organization_id = ${int(request.organizationId)} AND instrument_id IN (${request.instrumentIds.map(int).join(',')})`;
  const raw = (ranges: Array<[number, number]>) => `SELECT instrument_id, ts AS t, toUInt64(isNotNull(v)) AS n, ifNull(v, 0) AS s
      FROM (${dedupedPoints(request, ranges)}) WHERE d = 0`;
  if (firstMinute >= endMinutes) return [raw([[startMs, endMs]])];
  const parts = [`SELECT instrument_id, minute AS t, argMax(value_count, version) AS n, argMax(value_sum, version) AS s
      FROM points_rollup_1m WHERE ${scope} AND minute >= ${int(firstMinute)} AND minute < ${int(endMinutes)}
     GROUP BY instrument_id, minute`];
  const edges: Array<[number, number]> = [];
  if (startMs < firstMinute) edges.push([startMs, firstMinute - 1]);
  if (endMinutes <= endMs) edges.push([endMinutes, endMs]);
  if (edges.length > 0) parts.push(raw(edges));
  return parts;
}

/** Rows (u, k, g, m): unit operation, parameter index, grid index, the cell's average. */
function memberCells(organizationId: number, member: GridMember, stepMs: number): string {
  const request: SeriesRequest = {
    organizationId, instrumentIds: member.instruments.map(([instrument]) => instrument), startMs: null, endMs: null, bucketMs: null, limit: 1,
  };
  const origin = gridOrigin(member.timeZeroMs, stepMs);
  const parameterOf = `transform(instrument_id, [${member.instruments.map(([instrument]) => `toUInt64(${int(instrument)})`).join(',')}], [${member.instruments.map(([, index]) => int(index)).join(',')}], -1)`;
  const cell = (column: string) => `intDiv(${floorExpr(`(${column} - toInt64(${int(origin)}))`, stepMs)}, toInt64(${int(stepMs)}))`;
  if (usesMinuteRollups(stepMs)) {
    return `SELECT toUInt64(${int(member.unitOperationId)}) AS u, ${parameterOf} AS k, ${cell('t')} AS g, sum(s) / sum(n) AS m
              FROM (${minuteParts(request, member.startMs, member.endMs).join(' UNION ALL ')})
             GROUP BY k, g HAVING sum(n) > 0`;
  }
  return `SELECT toUInt64(${int(member.unitOperationId)}) AS u, ${parameterOf} AS k, ${cell('ts')} AS g, avg(assumeNotNull(v)) AS m
            FROM (${dedupedPoints(request, [[member.startMs, member.endMs]])})
           WHERE d = 0 AND isNotNull(v)
           GROUP BY k, g`;
}

function allCells(organizationId: number, members: readonly GridMember[], stepMs: number): string {
  return members.filter((member) => member.instruments.length > 0)
    .map((member) => memberCells(organizationId, member, stepMs)).join(' UNION ALL ');
}

export interface CellStatistics {
  parameterIndex: number;
  gridIndex: number;
  count: number;
  median: number | null;
  mean: number | null;
  lower: number | null;
  upper: number | null;
  min: number | null;
  max: number | null;
  unitOperationIds: number[];
}

/**
 * Per parameter and grid cell: how many unit operations have a value, their median, mean, band and
 * extremes. Percentiles interpolate linearly between the sorted values (exact for fewer than 8192 runs).
 */
export async function envelopeStatistics(
  clickhouse: ClickHouseClient,
  organizationId: number,
  members: readonly GridMember[],
  stepMs: number,
  band: Band,
): Promise<CellStatistics[]> {
  const cells = allCells(organizationId, members, stepMs);
  if (cells === '') return [];
  const levels = band.kind === 'percentiles' ? `${finite(band.lower / 100)}, 0.5, ${finite(band.upper / 100)}` : '0.5';
  const result = await rows<[number, string, string, number[], number | null, number | null, number | null, number | null, string[]]>(clickhouse, `
    SELECT k, g, count() AS c, quantiles(${levels})(m), avg(m),
           -- Rounding can leave identical values a slightly negative variance, whose root would be NaN.
           if(count() < 2, nan, sqrt(greatest(varSamp(m), 0))), min(m), max(m), groupArray(u)
      FROM (${cells})
     WHERE k >= 0
     GROUP BY k, g
     ORDER BY k, g`);
  return result.map(([k, g, c, quantiles, mean, sigma, min, max, unitOperationIds]) => {
    const spread = band.kind === 'sigma' && sigma !== null && mean !== null ? band.k * sigma : null;
    return {
      parameterIndex: Number(k),
      gridIndex: Number(g),
      count: Number(c),
      median: band.kind === 'percentiles' ? quantiles[1]! : quantiles[0]!,
      mean,
      lower: band.kind === 'percentiles' ? quantiles[0]! : spread === null ? null : mean! - spread,
      upper: band.kind === 'percentiles' ? quantiles[2]! : spread === null ? null : mean! + spread,
      min,
      max,
      unitOperationIds: unitOperationIds.map(Number),
    };
  });
}

/** Each member's own resampled values: unit operation id -> parameter index -> [grid index, value][] (ascending). */
export async function resampledValues(
  clickhouse: ClickHouseClient,
  organizationId: number,
  members: readonly GridMember[],
  stepMs: number,
): Promise<Map<number, Map<number, Array<[number, number]>>>> {
  const series = new Map<number, Map<number, Array<[number, number]>>>();
  const cells = allCells(organizationId, members, stepMs);
  if (cells === '') return series;
  const result = await rows<[string, number, string, number]>(clickhouse, `SELECT u, k, g, m FROM (${cells}) WHERE k >= 0 ORDER BY u, k, g`);
  for (const [u, k, g, m] of result) {
    const byParameter = series.get(Number(u)) ?? new Map<number, Array<[number, number]>>();
    const values = byParameter.get(Number(k)) ?? [];
    values.push([Number(g), m]);
    byParameter.set(Number(k), values);
    series.set(Number(u), byParameter);
  }
  return series;
}

/**
 * The first reading inside the window at or beyond `value` (upward: at or above; downward: at or
 * below) that follows a reading on the other side; null when the parameter never crosses.
 */
export async function firstCrossing(
  clickhouse: ClickHouseClient,
  organizationId: number,
  instrumentId: number,
  window: { startMs: number; endMs: number },
  value: number,
  direction: 'up' | 'down',
): Promise<number | null> {
  const request: SeriesRequest = { organizationId, instrumentIds: [instrumentId], startMs: null, endMs: null, bucketMs: null, limit: 1 };
  const readings = `(SELECT ts, assumeNotNull(v) AS x FROM (${dedupedPoints(request, [[window.startMs, window.endMs]])}) WHERE d = 0 AND isNotNull(v))`;
  const before = direction === 'up' ? `x < ${finite(value)}` : `x > ${finite(value)}`;
  const beyond = direction === 'up' ? `x >= ${finite(value)}` : `x <= ${finite(value)}`;
  const [row] = await rows<[string, string]>(clickhouse, `
    SELECT count(), min(ts) FROM ${readings}
     WHERE ${beyond} AND ts > (SELECT if(countIf(${before}) = 0, toInt64(9223372036854775807), minIf(ts, ${before})) FROM ${readings})`);
  return row && Number(row[0]) > 0 ? Number(row[1]) : null;
}
