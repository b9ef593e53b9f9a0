/**
 * SQL fragments over the points tables, built only from validated integers (ids, timestamps,
 * versions): what the api's reads and the ingest-worker's writes both need, so that minutes and
 * hours are cut the same way on both sides.
 */
export function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
  return String(value);
}

export function version(value: string): string {
  if (!/^\d{1,20}$/.test(value)) throw new Error(`not a version: ${value}`);
  return value;
}

export function idList(ids: readonly number[]): string {
  if (ids.length === 0) throw new Error('empty id list');
  return ids.map(int).join(',');
}

/** Runs of consecutive ids written as ranges at most: a few comparisons cost ClickHouse nothing to plan. */
const RANGES_MAX = 4;
/** Ids listed in the statement at most; ClickHouse 18.16 takes about 15 microseconds to plan each one. */
const LISTED_IDS_MAX = 200;

/**
 * SQL: `expression` (a UInt64) is one of `ids`. ClickHouse 18.16 plans an IN list of literals slowly:
 * 2,000 instruments (one rollup flush of 200 feeds) took 35 ms of its CPU per statement, more than the
 * statement's work. So consecutive ids (instruments are mostly created together) become ranges, and a
 * long scattered list an array, which it reads as one literal; both still narrow reads by the table's key.
 */
export function oneOf(expression: string, ids: readonly number[]): string {
  if (ids.length === 0) throw new Error('empty id list');
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const runs: Array<[from: number, to: number]> = [];
  for (const id of sorted) {
    const last = runs.at(-1);
    if (last && id === last[1] + 1) last[1] = id;
    else runs.push([id, id]);
  }
  if (runs.length <= RANGES_MAX) {
    const ranges = runs.map(([from, to]) => (from === to ? `${expression} = ${int(from)}` : `(${expression} >= ${int(from)} AND ${expression} <= ${int(to)})`));
    return ranges.length === 1 ? ranges[0]! : `(${ranges.join(' OR ')})`;
  }
  if (sorted.length <= LISTED_IDS_MAX) return `${expression} IN (${idList(sorted)})`;
  return `${expression} IN (SELECT arrayJoin(CAST([${idList(sorted)}] AS Array(UInt64))))`;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const floorTo = (ts: number, width: number) => ts - (((ts % width) + width) % width);
export const floorToMinute = (ts: number) => floorTo(ts, MINUTE_MS);

/** `column` rounded down to whole minutes, also for negative timestamps. */
// toInt64: ClickHouse 18.16 types modulo(Int64, UInt16) as Int16 and overflows.
export const floorExpr = (column: string, width: number) =>
  `(${column} - modulo(modulo(${column}, toInt64(${int(width)})) + toInt64(${int(width)}), toInt64(${int(width)})))`;
export const minuteExpr = (column: string) => floorExpr(column, MINUTE_MS);

/**
 * The read rule's columns over `points`, per key (organisation, instrument, time): `v` the value of
 * the highest version, `d` whether that row is a tombstone. The value goes through a tuple because
 * aggregate functions skip NULL arguments: `argMax(value, version)` would let an older number win over
 * a later empty reading. For a GROUP BY on the key.
 */
export const NEWEST_POINT_COLUMNS = 'argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d';

/**
 * What the source said about the newest version of each key, beside NEWEST_POINT_COLUMNS: `us` its
 * microseconds within the millisecond, `q` its quality code (NULL: none; through a tuple as values
 * are) and `h` its historical flag. Only raw reads and exports ask for them; rollups ignore them.
 */
export const NEWEST_POINT_SOURCE_COLUMNS = 'argMax(ts_micros, version) AS us, argMax(tuple(quality), version).1 AS q, argMax(historical, version) AS h';

/** The figures of a rollup row (minute or hour): points, values counted, their sum, minimum and maximum. */
export const ROLLUP_FIGURES = ['p', 'n', 's', 'lo', 'hi'] as const;
export type RollupFigureColumn = (typeof ROLLUP_FIGURES)[number];

/** Each figure of the highest version of a rollup key; the nullable extremes through a tuple, as values are. */
const NEWEST_ROLLUP: Record<RollupFigureColumn, string> = {
  p: 'argMax(points, version)',
  n: 'argMax(value_count, version)',
  s: 'argMax(value_sum, version)',
  lo: 'argMax(tuple(value_min), version).1',
  hi: 'argMax(tuple(value_max), version).1',
};

/** SQL columns: the figures of the highest version of each rollup key (for a GROUP BY on the key), named p, n, s, lo, hi. */
export const newestRollupColumns = (figures: readonly RollupFigureColumn[] = ROLLUP_FIGURES) =>
  figures.map((figure) => `${NEWEST_ROLLUP[figure]} AS ${figure}`).join(', ');
