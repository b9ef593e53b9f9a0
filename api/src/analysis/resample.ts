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
import { floorExpr, floorTo, int, MINUTE_MS } from '@bioprocess/shared/points-sql';
import { HttpError } from '../platform/http-error.ts';
import { coverParts, dedupedPoints, queryRows, windowsOn, type PointWindow } from '../timeseries/points-read.ts';

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

/** One (unit operation, instrument, parameter index) of a scan, with its window and grid origin. */
interface Pair {
  unitOperationId: number;
  instrumentId: number;
  parameterIndex: number;
  startMs: number;
  endMs: number;
  originMs: number;
}

/**
 * Pairs split so that no instrument appears twice in a group: within a group the instrument alone
 * tells which unit operation (and window, and grid origin) a row belongs to. Unit operations on one
 * equipment share its instruments, so their pairs land in different groups (usually there is one).
 */
function groupsOf(members: readonly GridMember[], stepMs: number): Pair[][] {
  const groups: Array<{ instruments: Set<number>; pairs: Pair[] }> = [];
  for (const member of members) {
    const originMs = gridOrigin(member.timeZeroMs, stepMs);
    for (const [instrumentId, parameterIndex] of member.instruments) {
      let group = groups.find((candidate) => !candidate.instruments.has(instrumentId));
      if (!group) {
        group = { instruments: new Set(), pairs: [] };
        groups.push(group);
      }
      group.instruments.add(instrumentId);
      group.pairs.push({ unitOperationId: member.unitOperationId, instrumentId, parameterIndex, startMs: member.startMs, endMs: member.endMs, originMs });
    }
  }
  return groups.map((group) => group.pairs);
}

/**
 * Columns u (unit operation), k (parameter index) and r (time since the grid origin) of the pair a
 * row's instrument belongs to: the pair's position is looked up once per row, its fields by index.
 */
function pairColumns(pairs: readonly Pair[], timeColumn: string): string {
  const list = (field: (pair: Pair) => number) => `[${pairs.map((pair) => `toInt64(${int(field(pair))})`).join(',')}]`;
  const positions = pairs.map((_, index) => int(index + 1)).join(',');
  return `transform(instrument_id, [${pairs.map((pair) => `toUInt64(${int(pair.instrumentId)})`).join(',')}], [${positions}], 0) AS p,
          toUInt64(${list((pair) => pair.unitOperationId)}[p]) AS u, ${list((pair) => pair.parameterIndex)}[p] AS k,
          ${timeColumn} - ${list((pair) => pair.originMs)}[p] AS r`;
}

/** Each pair's instrument over its window: one term per window, which the primary key serves. */
const windowsOf = (pairs: readonly Pair[]): PointWindow[] =>
  pairs.map((pair) => ({ instrumentIds: [pair.instrumentId], from: pair.startMs, to: pair.endMs }));

/**
 * Rows (u, k, g, m) of one group of pairs, in one scan of each table: unit operation, parameter index,
 * grid index, the cell's average. Whole minutes come from the minute rollups (only the count and sum
 * the averages need), the partial minutes at the windows' ends from the points.
 */
function groupCells(organizationId: number, pairs: readonly Pair[], stepMs: number): string {
  const g = `intDiv(${floorExpr('r', stepMs)}, toInt64(${int(stepMs)}))`;
  if (!usesMinuteRollups(stepMs)) {
    return `SELECT u, k, ${g} AS g, avg(assumeNotNull(v)) AS m
              FROM (SELECT ${pairColumns(pairs, 'ts')}, v
                      FROM (${dedupedPoints(organizationId, windowsOf(pairs))})
                     WHERE d = 0 AND isNotNull(v))
             GROUP BY u, k, g`;
  }
  // The minute rollups read FINAL: see points-read.ts (finalMinuteRollups) and docs/analysis.md.
  const parts = coverParts(organizationId, windowsOf(pairs), { coarsest: 'minute', figures: ['n', 's'], minutes: 'final' });
  return `SELECT u, k, ${g} AS g, sum(s) / sum(n) AS m
            FROM (SELECT ${pairColumns(pairs, 't')}, n, s FROM (${parts.join(' UNION ALL ')}))
           GROUP BY u, k, g HAVING sum(n) > 0`;
}

function allCells(organizationId: number, members: readonly GridMember[], stepMs: number): string {
  return groupsOf(members, stepMs).map((pairs) => groupCells(organizationId, pairs, stepMs)).join(' UNION ALL ');
}

/**
 * A query over many unit operations and parameters can exceed the default 256 KiB of SQL text. The
 * server stops a query itself before the client's 30 s request timeout: a query whose client gave up
 * would otherwise keep running, and on a busy machine such orphans pile up and slow everything more.
 */
const LARGE_QUERY = { max_query_size: '16777216', max_execution_time: 25 };

export const ANALYSIS_BUSY_MESSAGE = 'The analysis took longer than the database allows on a busy machine; please try again shortly';

async function largeRows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  try {
    const result = await clickhouse.query({ query, format: 'JSONCompact', clickhouse_settings: LARGE_QUERY });
    return (await result.json<T>()).data;
  } catch (error) {
    // The client gives up after its request timeout (a machine overloaded by other work): that is a
    // moment of unavailability, answered 503 so the caller retries, not an internal error.
    if (error instanceof Error && /^Timeout error|Code: 159\b|TIMEOUT_EXCEEDED/.test(error.message)) throw new HttpError(503, ANALYSIS_BUSY_MESSAGE);
    throw error;
  }
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
  /** Each unit operation's value in the cell, in the order of unitOperationIds (the references' noise is measured from them). */
  values: number[];
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
  const result = await largeRows<[number, string, string, number[], number | null, number | null, number | null, number | null, string[], Array<number | null>]>(clickhouse, `
    SELECT k, g, count() AS c, quantiles(${levels})(m), avg(m),
           -- Rounding can leave identical values a slightly negative variance, whose root would be NaN.
           if(count() < 2, nan, sqrt(greatest(varSamp(m), 0))), min(m), max(m), groupArray(u), groupArray(m)
      FROM (${cells})
     WHERE k >= 0
     GROUP BY k, g
     ORDER BY k, g`);
  return result.map(([k, g, c, quantiles, mean, sigma, min, max, unitOperationIds, values]) => {
    // ClickHouse answers null for a statistic beyond the float range; such a band is left empty.
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
      // Both arrays aggregate the same rows in the same order; a value beyond the float range arrives as null.
      values: values.map((value) => (value === null ? Number.NaN : value)),
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
  const result = await largeRows<[string, number, string, number | null]>(clickhouse, `SELECT u, k, g, m FROM (${cells}) WHERE k >= 0 ORDER BY u, k, g`);
  for (const [u, k, g, m] of result) {
    // An average beyond the float range arrives as null (JSON has no infinity): that cell has no value.
    if (m === null || !Number.isFinite(m)) continue;
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
  const readings = `(SELECT ts, assumeNotNull(v) AS x FROM (${dedupedPoints(organizationId, windowsOn([instrumentId], [[window.startMs, window.endMs]]))}) WHERE d = 0 AND isNotNull(v))`;
  const before = direction === 'up' ? `x < ${finite(value)}` : `x > ${finite(value)}`;
  const beyond = direction === 'up' ? `x >= ${finite(value)}` : `x <= ${finite(value)}`;
  const [row] = await queryRows<[string, string]>(clickhouse, `
    SELECT count(), min(ts) FROM ${readings}
     WHERE ${beyond} AND ts > (SELECT if(countIf(${before}) = 0, toInt64(9223372036854775807), minIf(ts, ${before})) FROM ${readings})`);
  return row && Number(row[0]) > 0 ? Number(row[1]) : null;
}
