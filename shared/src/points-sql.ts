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

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const floorTo = (ts: number, width: number) => ts - (((ts % width) + width) % width);
export const floorToMinute = (ts: number) => floorTo(ts, MINUTE_MS);

/** `column` rounded down to whole minutes, also for negative timestamps. */
// toInt64: ClickHouse 18.16 types modulo(Int64, UInt16) as Int16 and overflows.
export const floorExpr = (column: string, width: number) =>
  `(${column} - modulo(modulo(${column}, toInt64(${int(width)})) + toInt64(${int(width)}), toInt64(${int(width)})))`;
export const minuteExpr = (column: string) => floorExpr(column, MINUTE_MS);
