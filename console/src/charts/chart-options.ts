/**
 * The parts of the time-series chart's Highcharts options that depend on how many series, axes and
 * points there are: where the legend goes, how tall a stacked chart is, how each series is drawn
 * (spline, steps, or boosted past a few thousand points) and when the boost module takes over.
 */
import type Highcharts from 'highcharts';
import { Colors } from '@blueprintjs/core';
import { BOOST_POINTS_PER_SERIES, LEGEND_SIDE_MIN_WIDTH_PX, STACKED_CHROME_PX, STACKED_PANEL_HEIGHT_PX, X_AXIS_MIN, highchartsSymbol } from './chart-constants.ts';
import type { ChartSeries } from './series-model.ts';
import { axisIndexOfSeries, type UnitAxis } from './unit-axes.ts';

/** The minutes the series cover, from minute 0 or the earliest point before it (aligned on an event, a run has a past). */
export function seriesExtentMinutes(series: readonly Pick<ChartSeries, 'data'>[]): { min: number; max: number } {
  let min = X_AXIS_MIN;
  let max = 0;
  for (const s of series) {
    const first = s.data[0];
    const last = s.data[s.data.length - 1];
    if (first && first[0] < min) min = first[0];
    if (last && last[0] > max) max = last[0];
  }
  return { min, max };
}

export type LegendPlacement = 'side' | 'below';

/** Beside the plot when the frame has room for both, else under it (phones, narrow panels). */
export function legendPlacement(frameWidthPx: number): LegendPlacement {
  return frameWidthPx >= LEGEND_SIDE_MIN_WIDTH_PX ? 'side' : 'below';
}

/** A stacked chart grows with its panels: each keeps at least STACKED_PANEL_HEIGHT_PX. */
export function stackedChartHeight(panels: number, height: number): number {
  return Math.max(height, STACKED_CHROME_PX + panels * STACKED_PANEL_HEIGHT_PX);
}

/** Whether a series is drawn by the boost module (WebGL): only long ones, so short ones keep their dashes and markers. */
export function isBoosted(series: Pick<ChartSeries, 'data' | 'markers'>, threshold: number = BOOST_POINTS_PER_SERIES): boolean {
  return !series.markers && series.data.length > threshold;
}

/**
 * The chart-wide boost options. The boost module switches a whole chart to WebGL once it holds
 * `seriesThreshold` series, which would drop every dash style; here only the series over the point
 * threshold are boosted, each on its own.
 */
export function boostOptions(series: readonly Pick<ChartSeries, 'data' | 'markers'>[], threshold: number = BOOST_POINTS_PER_SERIES): Highcharts.BoostOptions {
  return { enabled: series.some((s) => isBoosted(s, threshold)), useGPUTranslations: true, usePreallocated: false, seriesThreshold: Number.MAX_SAFE_INTEGER };
}

function withOpacity(color: string, opacity: number, toRgba: (color: string, opacity: number) => string): string {
  return opacity >= 1 ? color : toRgba(color, opacity);
}

export interface SeriesOptionsContext {
  axes: readonly UnitAxis[];
  hiddenIds: ReadonlySet<string>;
  /** Highcharts' colour helper, passed in so this module stays free of a chart instance. */
  toRgba: (color: string, opacity: number) => string;
  sampleMarkerRadius: number;
  boostThreshold?: number;
}

/**
 * One series' options: samples as markers without a line; a step series (`draw_as_steps`) as a line
 * held at each value until the next (`step: 'left'`); a long series as a boosted line; the others as
 * splines. Names go in as given: the tooltip and the downloaded legend escape them where they are
 * written (tooltipHtml, legendLabel), and the legend on screen is React text.
 */
export function seriesOptions(s: ChartSeries, context: SeriesOptionsContext): Highcharts.SeriesOptionsType {
  const common = {
    id: s.id,
    name: s.name,
    custom: { detail: s.detail, unit: s.unit },
    color: withOpacity(s.color, s.opacity, context.toRgba),
    yAxis: axisIndexOfSeries(context.axes, s.id),
    visible: !context.hiddenIds.has(s.id),
  };
  if (s.markers) {
    return {
      ...common,
      type: 'scatter',
      // The chart's series options draw a line through every series; samples stand alone.
      lineWidth: 0,
      states: { hover: { lineWidthPlus: 0 } },
      data: s.data.map(([x, y], index) => ({ x, y, custom: s.markers!.points[index] })),
      marker: { enabled: true, symbol: highchartsSymbol(s.symbol), radius: context.sampleMarkerRadius, lineWidth: 1, lineColor: Colors.WHITE },
    };
  }
  const threshold = context.boostThreshold ?? BOOST_POINTS_PER_SERIES;
  const boosted = isBoosted(s, threshold);
  return {
    ...common,
    // Splines cannot step and the boost module draws no splines.
    type: s.step || boosted ? 'line' : 'spline',
    ...(s.step ? { step: 'left' as const } : {}),
    boostThreshold: boosted ? threshold : 0,
    dashStyle: s.dashStyle ?? 'Solid',
    data: s.data.map(([x, y]) => [x, y]),
    marker: { symbol: highchartsSymbol(s.symbol), lineWidth: 1, lineColor: undefined },
  };
}
