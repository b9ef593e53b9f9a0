/**
 * Rollup rows built from bulk posts' own per-minute figures (shared/src/minute-figures.ts): merged per
 * minute across the posts of one flush and written in ClickHouse's RowBinary format for
 * points_rollup_1m, so the doubles land exactly as computed.
 */
import type { MinuteFigure } from '../minute-figures.ts';
import { floorTo, HOUR_MS } from '../points-sql.ts';
import { setInt64, uint64Halves } from '../point-rows.ts';

/** The figures of one instrument over one minute or hour (`start`). */
export interface RollupFigure {
  organizationId: number;
  instrumentId: number;
  start: number;
  points: number;
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
}

export const ROLLUP_COLUMNS = (period: 'minute' | 'hour') =>
  ['organization_id', 'instrument_id', period, 'points', 'value_count', 'value_sum', 'value_min', 'value_max', 'version'];

const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
const higher = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** Adds up figures that share organization, instrument and period start `periodOf(start)`. */
function merge(figures: Iterable<RollupFigure>, periodOf: (start: number) => number): RollupFigure[] {
  const merged = new Map<string, RollupFigure>();
  for (const figure of figures) {
    const start = periodOf(figure.start);
    const key = `${figure.organizationId}:${figure.instrumentId}:${start}`;
    const into = merged.get(key);
    if (!into) {
      merged.set(key, { ...figure, start });
      continue;
    }
    addFigures(into, figure);
  }
  return [...merged.values()];
}

/** Adds `figure`'s readings to `into`: figures of disjoint readings compose. */
export function addFigures(into: RollupFigure, figure: RollupFigure): void {
  into.points += figure.points;
  into.count += figure.count;
  into.sum += figure.sum;
  into.min = lower(into.min, figure.min);
  into.max = higher(into.max, figure.max);
}

/** The hours of minute figures (each hour's row counts its minutes'). */
export const hourFiguresOf = (minutes: Iterable<RollupFigure>): RollupFigure[] => merge(minutes, (start) => floorTo(start, HOUR_MS));

/**
 * The minute figures of several writes of one flush as rows: writes whose keys never overlap may still
 * share a minute, whose row must count both.
 */
export function minuteFiguresOf(writes: ReadonlyArray<{ organizationId: number; minutes: readonly MinuteFigure[] }>): RollupFigure[] {
  const all = writes.flatMap(({ organizationId, minutes }) => minutes.map((minute) => ({
    organizationId, instrumentId: minute.instrumentId, start: minute.minute, points: minute.points, count: minute.count, sum: minute.sum, min: minute.min, max: minute.max,
  })));
  return merge(all, (start) => start);
}

/** RowBinary rows (columns as ROLLUP_COLUMNS) with `version` (decimal: above 2^53). */
export function rollupRows(figures: readonly RollupFigure[], version: string): Buffer {
  const bytes = Buffer.alloc(figures.length * 74);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [versionLow, versionHigh] = uint64Halves(BigInt(version));
  let offset = 0;
  const nullable = (value: number | null) => {
    if (value === null) {
      bytes[offset++] = 1;
      return;
    }
    bytes[offset++] = 0;
    view.setFloat64(offset, value, true);
    offset += 8;
  };
  for (const figure of figures) {
    setInt64(view, offset, figure.organizationId);
    setInt64(view, offset + 8, figure.instrumentId);
    setInt64(view, offset + 16, figure.start);
    setInt64(view, offset + 24, figure.points);
    setInt64(view, offset + 32, figure.count);
    view.setFloat64(offset + 40, figure.sum, true);
    offset += 48;
    nullable(figure.min);
    nullable(figure.max);
    view.setUint32(offset, versionLow, true);
    view.setUint32(offset + 4, versionHigh, true);
    offset += 8;
  }
  return bytes.subarray(0, offset);
}
