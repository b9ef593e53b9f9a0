/**
 * Pure building blocks of the time-series charts: readings to [minute, value] points and the series'
 * visual identity (colour, point style, opacity); the y axes are planned in unit-axes.ts.
 */
import { opacityAt, paletteColor, pointStyleAt, SERIES_PALETTE, type PointStyle } from './chart-constants.ts';
import { minutesSince, toEpochMs, type TimeInput } from './time-axis.ts';

/** One reading as the api returns it (camelCased); `min`/`max` come with bucketed answers. */
export interface Reading {
  ts: TimeInput;
  instrumentId: number;
  value: number | null;
  min?: number | null;
  max?: number | null;
}

/** Highcharts' dash styles that stay readable at a one-pixel line width. */
export const DASH_STYLES = ['Solid', 'ShortDash', 'ShortDot', 'LongDash', 'DashDot', 'LongDashDot'] as const;
export type DashStyle = (typeof DASH_STYLES)[number];

export function dashStyleAt(index: number): DashStyle {
  return DASH_STYLES[index % DASH_STYLES.length]!;
}

/** The look of the n-th series of a chart: a palette colour, and past the palette's end the next dash style. */
export function seriesLook(index: number): { color: string; dashStyle: DashStyle } {
  return { color: paletteColor(index), dashStyle: dashStyleAt(Math.floor(Math.max(0, index) / SERIES_PALETTE.length)) };
}

export type ChartPoint = [minute: number, value: number];

export interface ChartSeries {
  id: string;
  /** The instrument's name (compare: the run's name and the instrument's). */
  name: string;
  /** Type and unit, shown beside the name ('temperature [celsius]'). */
  detail?: string;
  /** The unit that picks the y axis; null shares the unitless axis. */
  unit: string | null;
  color: string;
  symbol: PointStyle;
  opacity: number;
  /** Tells apart several parameters drawn in one colour (compare: one colour per run). */
  dashStyle?: DashStyle;
  data: ChartPoint[];
  /** Values logged on change or setpoints (the instrument's `draw_as_steps`): held until the next value, not ramped. */
  step?: boolean;
  /** The parameter the series shows (compare: one small-multiple panel per parameter). */
  parameter?: { key: string; label: string };
  /** Off-line samples: drawn as markers without a line, each point with its own tooltip text (parallel to `data`). */
  markers?: { points: readonly MarkerPoint[] };
}

/** What the tooltip says of one marker: its result as written ('< 0.5') and what it is ('sample BR1-D1 · Cedex Bio'). */
export interface MarkerPoint {
  value: string;
  label: string;
}

/** The label of a parameter in the checkbox lists: the instrument type plus the unit in brackets. */
export function parameterLabel(type: string, unit: string | null | undefined): string {
  return unit ? `${type} [${unit}]` : type;
}

/** The end of a range: the given end, or now when the operation has none. */
export function rangeEndMs(endTime: TimeInput | null | undefined, nowMs: number = Date.now()): number {
  const end = toEpochMs(endTime ?? null);
  return Number.isNaN(end) ? nowMs : end;
}

/**
 * Readings to chart points: only non-null values inside [startMs, endMs], as minutes since the start,
 * sorted by time. `roundMinutes` gives the compare screen's whole-minute x values.
 */
export function readingsToPoints(
  readings: readonly Reading[],
  startMs: number,
  endMs: number,
  options: { roundMinutes?: boolean } = {},
): ChartPoint[] {
  const points: ChartPoint[] = [];
  for (const reading of readings) {
    if (reading.value === null || reading.value === undefined || !Number.isFinite(reading.value)) continue;
    const ms = toEpochMs(reading.ts);
    if (Number.isNaN(ms) || ms < startMs || ms > endMs) continue;
    const minute = minutesSince(ms, startMs);
    points.push([options.roundMinutes ? Math.round(minute) : minute, reading.value]);
  }
  points.sort((a, b) => a[0] - b[0]);
  return points;
}

/** Groups readings by instrument id, keeping each instrument's order. */
export function groupReadingsByInstrument(readings: readonly Reading[]): Map<number, Reading[]> {
  const byInstrument = new Map<number, Reading[]>();
  for (const reading of readings) {
    const list = byInstrument.get(reading.instrumentId);
    if (list) list.push(reading);
    else byInstrument.set(reading.instrumentId, [reading]);
  }
  return byInstrument;
}

/**
 * The visual identity of a series. On the detail chart every parameter has its own colour; on the
 * compare chart the colour belongs to the run and the parameter picks the point style and opacity.
 */
export function seriesStyle(colorIndex: number, parameterIndex: number): Pick<ChartSeries, 'color' | 'symbol' | 'opacity'> {
  return { color: paletteColor(colorIndex), symbol: pointStyleAt(parameterIndex), opacity: opacityAt(parameterIndex) };
}

/** Merges a finer window into coarse overview points: the overview outside, the window inside. */
export function mergeWindow(overview: readonly ChartPoint[], window: readonly ChartPoint[], fromMinute: number, toMinute: number): ChartPoint[] {
  const before = overview.filter(([x]) => x < fromMinute);
  const after = overview.filter(([x]) => x > toMinute);
  return [...before, ...window, ...after];
}
